"""Tokenizers beyond the kit's own: a local Hugging Face directory or mistral-common file by
path (from a case file's folder when relative), and names a package registers under the
entry-point group ``toolcall.tokenizers``."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from kit_helpers import PROVENANCE, REQUEST

from toolcall_conformance.builder import build_case
from toolcall_conformance.cases import case_tokenizer, load_case, verify_ids, write_case
from toolcall_conformance.tokenizers import (
    ENTRY_POINT_GROUP,
    HFTokenizer,
    MistralCommonTokenizer,
    TokenizerBuildError,
    UnknownTokenizerError,
    ensure_built,
    get_tokenizer,
    load_tokenizer_path,
    registered_tokenizers,
)

TEXT = 'Sure.<tool_call>\n{"name": "f", "arguments": {"x": "東京 🗼"}}\n</tool_call>'


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hugging Face tokenizer directory, as a model's would be: the kit's Qwen2.5 build,
    with the model's generation_config.json and config.json beside it."""
    built = ensure_built("qwen2.5")
    assert built is not None
    directory = tmp_path_factory.mktemp("Qwen2.5-7B-Instruct")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(built / name, directory / name)
    (directory / "generation_config.json").write_text(
        json.dumps({"eos_token_id": [151645, 151643]})
    )
    (directory / "config.json").write_text(json.dumps({"vocab_size": 151936}))
    return directory


def test_a_hugging_face_directory_is_a_tokenizer(qwen_dir: Path) -> None:
    local = get_tokenizer(str(qwen_dir))
    named = get_tokenizer("qwen2.5")
    assert isinstance(local, HFTokenizer)
    assert local.name == str(qwen_dir.resolve())
    assert local.encode(TEXT) == named.encode(TEXT)
    ids = named.encode(TEXT)
    assert local.decode_steps(ids) == named.decode_steps(ids)
    assert local.stop_token_ids == [151645, 151643]
    assert local.model_vocab_size == 151936
    assert local.special_tokens["<tool_call>"] == 151657
    # The same path gives the same object; tokenizer.json itself names its directory.
    assert get_tokenizer(str(qwen_dir)) is local
    assert load_tokenizer_path(qwen_dir / "tokenizer.json").encode(TEXT) == ids


def test_without_the_model_files_the_tokenizer_says_what_it_knows(tmp_path: Path) -> None:
    built = ensure_built("qwen2.5")
    assert built is not None
    # tokenizer_config.json only: the eos token is the stop id, the vocabulary the tokenizer's
    shutil.copy(built / "tokenizer.json", tmp_path / "tokenizer.json")
    shutil.copy(built / "tokenizer_config.json", tmp_path / "tokenizer_config.json")
    plain = load_tokenizer_path(tmp_path, name="plain")
    assert plain.stop_token_ids == [151645]  # <|im_end|>, the eos of tokenizer_config.json
    assert plain.model_vocab_size == 151665  # 151643 + 22 added tokens
    # A bare tokenizer.json: no eos known, no stop id.
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(built / "tokenizer.json", bare / "tokenizer.json")
    loose = load_tokenizer_path(bare, name="bare")
    assert loose.stop_token_ids == []
    assert loose.encode("hello world") == get_tokenizer("qwen2.5").encode("hello world")


def test_a_mistral_common_file_is_a_tokenizer(tmp_path: Path) -> None:
    data = Path(str(resources.files("mistral_common").joinpath("data")))
    tekken = load_tokenizer_path(data / "tekken_240911.json", name="tekken-240911")
    assert isinstance(tekken, MistralCommonTokenizer)
    assert tekken.is_tekken
    assert tekken.decode(tekken.encode("[TOOL_CALLS] hello")) == "[TOOL_CALLS] hello"
    assert tekken.model_vocab_size == 131072
    # A folder that holds one (and no tokenizer.json) is that tokenizer.
    shutil.copy(
        data / "mistral_instruct_tokenizer_240323.model.v3", tmp_path / "tokenizer.model.v3"
    )
    v3 = get_tokenizer(str(tmp_path))
    assert isinstance(v3, MistralCommonTokenizer)
    assert not v3.is_tekken
    assert v3.encode("[TOOL_CALLS]")[0] == v3.special_tokens["[TOOL_CALLS]"]


def test_a_path_that_holds_no_tokenizer_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a tokenizer")
    with pytest.raises(TokenizerBuildError, match="no tokenizer here"):
        load_tokenizer_path(tmp_path)
    with pytest.raises(TokenizerBuildError, match="no tokenizer here"):
        load_tokenizer_path(tmp_path / "notes.txt")
    with pytest.raises(UnknownTokenizerError) as info:
        get_tokenizer(str(tmp_path / "missing"))
    assert "or give the path of a tokenizer directory or file" in str(info.value)


def test_a_case_names_its_tokenizer_by_a_path_from_its_folder(
    qwen_dir: Path, tmp_path: Path
) -> None:
    data = build_case(
        tokenizer="qwen2.5",
        parser="hermes",
        text=TEXT,
        request=REQUEST,
        provenance=PROVENANCE,
        expected={"content": "Sure.", "tool_calls": [{"name": "f", "arguments": {"x": "東京 🗼"}}]},
        case_id="hermes/qwen2.5-local/by-path",
    )
    cases = tmp_path / "cases"
    model = tmp_path / "models" / "qwen"
    shutil.copytree(qwen_dir, model)
    data["tokenizer"] = "../models/qwen"
    case = load_case(write_case(data, cases / "by-path.json"))
    tokenizer = case_tokenizer(case)
    assert tokenizer.name == str(model.resolve())
    assert verify_ids(case) == []
    data["tokenizer"] = "../models/elsewhere"
    lost = load_case(write_case(data, cases / "lost.json"))
    (problem,) = verify_ids(lost)
    assert problem.field == "$.tokenizer"
    assert "unknown tokenizer '../models/elsewhere'" in problem.message


@pytest.fixture
def registered(tmp_path: Path, qwen_dir: Path) -> Iterator[Path]:
    """A package on sys.path that registers three tokenizer names: a path, a function that
    returns a tokenizer, and a function that fails."""
    module = tmp_path / "my_tokenizers.py"
    module.write_text(
        "from toolcall_conformance.tokenizers import get_tokenizer\n"
        f"QWEN = {str(qwen_dir)!r}\n"
        "def glm():\n    return get_tokenizer('glm4.5')\n"
        "def broken():\n    raise OSError('the tokenizer files are gone')\n"
        "NOT_A_TOKENIZER = 42\n"
    )
    info = tmp_path / "my_tokenizers-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-tokenizers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n"
        "my-qwen = my_tokenizers:QWEN\n"
        "my-glm = my_tokenizers:glm\n"
        "my-broken = my_tokenizers:broken\n"
        "my-number = my_tokenizers:NOT_A_TOKENIZER\n"
        "qwen2.5 = my_tokenizers:QWEN\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("my_tokenizers", None)


@pytest.mark.usefixtures("registered")
def test_a_package_registers_tokenizer_names(qwen_dir: Path) -> None:
    names = registered_tokenizers()
    # A built-in name cannot be taken.
    assert {name: names[name] for name in names if name.startswith("my-")} == {
        "my-qwen": "my-tokenizers",
        "my-glm": "my-tokenizers",
        "my-broken": "my-tokenizers",
        "my-number": "my-tokenizers",
    }
    assert "qwen2.5" not in names
    assert get_tokenizer("my-qwen").encode(TEXT) == get_tokenizer("qwen2.5").encode(TEXT)
    assert get_tokenizer("my-qwen").name == "my-qwen"
    assert get_tokenizer("my-glm") is get_tokenizer("glm4.5")
    with pytest.raises(TokenizerBuildError, match="OSError: the tokenizer files are gone"):
        get_tokenizer("my-broken")
    with pytest.raises(TokenizerBuildError, match="gave 42: not a RealTokenizer"):
        get_tokenizer("my-number")
    with pytest.raises(UnknownTokenizerError) as info:
        get_tokenizer("my-missing")
    assert "my-qwen" in str(info.value)
    assert get_tokenizer("qwen2.5").name == "qwen2.5"


def test_model_files_in_their_other_shapes(qwen_dir: Path, tmp_path: Path) -> None:
    # One eos id (not a list); the vocabulary size of a multimodal config's text model.
    model = tmp_path / "multimodal"
    shutil.copytree(qwen_dir, model)
    (model / "generation_config.json").write_text(json.dumps({"eos_token_id": 151643}))
    (model / "config.json").write_text(json.dumps({"text_config": {"vocab_size": 152064}}))
    tokenizer = load_tokenizer_path(model)
    assert tokenizer.stop_token_ids == [151643]
    assert tokenizer.model_vocab_size == 152064
    assert repr(tokenizer) == f"<HFTokenizer {model.resolve()}>"


def test_files_that_do_not_load_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "tekken.json").write_text('{"not": "a tokenizer"}')
    with pytest.raises(TokenizerBuildError, match="cannot load the mistral-common tokenizer"):
        load_tokenizer_path(tmp_path / "tekken.json")
    (tmp_path / "model.gguf").write_bytes(b"GGUF but not really")
    with pytest.raises(TokenizerBuildError, match="cannot load the tokenizer in"):
        load_tokenizer_path(tmp_path / "model.gguf")
