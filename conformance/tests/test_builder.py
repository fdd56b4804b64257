"""The case builder: real ids, one step per token, vLLM-shaped step texts."""

from __future__ import annotations

import argparse
import io
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from toolcall_conformance.builder import (
    BUILDER_VERSION,
    BuildError,
    add_build_arguments,
    build_case,
    build_case_from_ids,
    build_corpus_case,
    expected_parse,
    request_body,
    run_build,
    write_corpus,
)
from toolcall_conformance.cases import NEEDS_REVIEW, CaseError, load_case, validate_case_data
from toolcall_conformance.tokenizers import get_tokenizer

TOOLS = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
}
PROVENANCE = {"kind": "constructed", "source": "tests/test_builder.py"}
HERMES_TEXT = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "東京 🗼"}}'
    "\n</tool_call>"
)
HERMES_EXPECTED = {
    "content": "Let me check.",
    "tool_calls": [{"name": "get_weather", "arguments": {"city": "東京 🗼"}}],
}


def hermes_case(**changes: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "tokenizer": "qwen2.5",
        "parser": "hermes",
        "text": HERMES_TEXT,
        "request": TOOLS,
        "provenance": PROVENANCE,
        "expected": HERMES_EXPECTED,
        "case_id": "hermes/qwen2.5/built",
    }
    arguments.update(changes)
    return build_case(**arguments)


def test_build_case_gives_real_ids_one_step_per_token() -> None:
    tokenizer = get_tokenizer("qwen2.5")
    case = hermes_case()
    assert validate_case_data(case) == []
    steps = case["output"]["steps"]
    ids = [i for step in steps for i in step["token_ids"]]
    assert ids == tokenizer.encode(HERMES_TEXT)
    assert all(len(step["token_ids"]) == 1 for step in steps)
    assert "".join(step["text"] for step in steps) == HERMES_TEXT
    # The markers are added tokens: each is one id, released whole in its own step.
    for marker in ("<tool_call>", "</tool_call>"):
        marker_steps = [s for s in steps if s["text"] == marker]
        assert marker_steps == [{"text": marker, "token_ids": [tokenizer.special_tokens[marker]]}]
    # The emoji spans tokens: the detokenizer holds it back, as vLLM's does.
    assert any(step["text"] == "" for step in steps)
    assert case["output"]["stop_token_ids"] == tokenizer.stop_token_ids
    assert case["output"]["finish_reason"] == "stop"
    assert case["extra"]["builder"]["version"] == BUILDER_VERSION
    assert NEEDS_REVIEW not in case["extra"]


def test_special_tokens_are_those_in_the_output_and_the_stops() -> None:
    tokenizer = get_tokenizer("qwen2.5")
    case = hermes_case()
    names = {"<tool_call>", "</tool_call>", "<|im_end|>", "<|endoftext|>"}
    assert case["special_tokens"] == {name: tokenizer.special_tokens[name] for name in names}


def test_build_case_without_expected_is_marked_for_review(tmp_path: Path) -> None:
    case = hermes_case(expected=None)
    assert case["expected"] == {"content": None, "tool_calls": []}
    assert case["extra"][NEEDS_REVIEW] == ["expected"]
    path = tmp_path / "review.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    assert load_case(path).needs_review == ("expected",)


def test_glm_and_mistral_markers_become_single_ids() -> None:
    glm = get_tokenizer("glm4.5")
    case = build_case(
        tokenizer="glm4.5",
        parser="glm45",
        text="<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        request=TOOLS,
        provenance=PROVENANCE,
        expected={
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        case_id="glm45/glm4.5/built",
    )
    texts = [step["text"] for step in case["output"]["steps"]]
    for marker in (
        "<tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "</tool_call>",
    ):
        index = texts.index(marker)
        assert case["output"]["steps"][index]["token_ids"] == [glm.special_tokens[marker]]
    assert case["output"]["stop_token_ids"] == glm.stop_token_ids

    mistral = get_tokenizer("mistral-v3")
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    case = build_case(
        tokenizer="mistral-v3",
        parser="mistral",
        text=text,
        request=TOOLS,
        provenance=PROVENANCE,
        expected={
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        case_id="mistral/mistral-v3/built",
    )
    first = case["output"]["steps"][0]
    assert first == {"text": "[TOOL_CALLS]", "token_ids": [mistral.special_tokens["[TOOL_CALLS]"]]}
    assert "".join(step["text"] for step in case["output"]["steps"]) == text


def test_a_stop_token_in_the_text_is_refused() -> None:
    with pytest.raises(BuildError, match=r"stop token <\|im_end\|>"):
        hermes_case(text=HERMES_TEXT + "<|im_end|>")


def test_text_that_qwen_would_change_is_refused() -> None:
    decomposed = "cafe\u0301"
    assert unicodedata.normalize("NFC", decomposed) != decomposed
    with pytest.raises(BuildError, match="NFC"):
        hermes_case(text=decomposed)


def test_text_that_vllms_tekken_detokenizer_would_change_is_refused() -> None:
    with pytest.raises(BuildError, match="build_case_from_ids"):
        build_case(
            tokenizer="mistral-tekken",
            parser="mistral",
            text='[TOOL_CALLS][{"name": "f", "arguments": {"city": "🗼"}}]',
            request=TOOLS,
            provenance=PROVENANCE,
            expected=None,
            case_id="mistral/mistral-tekken/emoji",
        )


def test_an_invalid_expected_is_a_case_error() -> None:
    with pytest.raises(CaseError) as info:
        hermes_case(expected={"tool_calls": []})
    assert info.value.field == "$.expected"
    assert "'content' is a required property" in info.value.message


# --------------------------------------------------------------------------------------
# From recorded ids


def test_from_ids_keeps_engine_steps_and_drops_the_final_stop() -> None:
    tokenizer = get_tokenizer("qwen2.5")
    ids = tokenizer.encode(HERMES_TEXT)
    grouped = [ids[:3], ids[3:10], ids[10:], [tokenizer.special_tokens["<|im_end|>"]]]
    case = build_case_from_ids(
        tokenizer="qwen2.5",
        parser="hermes",
        token_ids=grouped,
        request=TOOLS,
        provenance={"kind": "recorded", "source": "a test recording"},
        expected=HERMES_EXPECTED,
        case_id="hermes/qwen2.5/recorded",
    )
    steps = case["output"]["steps"]
    assert [step["token_ids"] for step in steps] == [ids[:3], ids[3:10], ids[10:]]
    assert steps[0]["text"] == tokenizer.decode(ids[:3])
    assert "".join(step["text"] for step in steps) == HERMES_TEXT


def test_from_flat_ids_one_step_per_token() -> None:
    tokenizer = get_tokenizer("llama3.1")
    text = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
    ids = tokenizer.encode(text)
    case = build_case_from_ids(
        tokenizer="llama3.1",
        parser="llama3_json",
        token_ids=[*ids, tokenizer.special_tokens["<|eom_id|>"]],
        request=TOOLS,
        provenance=PROVENANCE,
        expected=None,
        case_id="llama3_json/llama3.1/flat",
    )
    assert [step["token_ids"] for step in case["output"]["steps"]] == [[i] for i in ids]
    assert case["output"]["steps"][0]["text"] == "<|python_tag|>"
    assert case["special_tokens"]["<|python_tag|>"] == tokenizer.special_tokens["<|python_tag|>"]


def test_from_ids_keeps_what_the_detokenizer_really_released() -> None:
    tokenizer = get_tokenizer("mistral-tekken")
    ids = tokenizer.encode('[TOOL_CALLS][{"name": "f", "arguments": {"city": "🗼"}}]')
    case = build_case_from_ids(
        tokenizer="mistral-tekken",
        parser="mistral",
        token_ids=ids,
        request=TOOLS,
        provenance=PROVENANCE,
        expected=None,
        case_id="mistral/mistral-tekken/emoji",
    )
    text = "".join(step["text"] for step in case["output"]["steps"])
    assert text == tokenizer.decode(ids)
    assert "\ufffd" in text


@pytest.mark.parametrize(
    ("token_ids", "finish_reason", "message"),
    [
        ("mid-stop", "stop", "middle of the output"),
        ("end-stop", "length", "finish_reason must be 'stop'"),
        ("too-big", "stop", "outside qwen2.5's vocabulary"),
    ],
)
def test_from_ids_refuses_impossible_outputs(
    token_ids: str, finish_reason: str, message: str
) -> None:
    tokenizer = get_tokenizer("qwen2.5")
    ids = tokenizer.encode("hello world")
    stop = tokenizer.stop_token_ids[0]
    given = {
        "mid-stop": [*ids[:1], stop, *ids[1:]],
        "end-stop": [*ids, stop],
        "too-big": [*ids, tokenizer.model_vocab_size],
    }[token_ids]
    with pytest.raises(BuildError, match=message):
        build_case_from_ids(
            tokenizer="qwen2.5",
            parser="hermes",
            token_ids=given,
            request=TOOLS,
            provenance=PROVENANCE,
            expected=None,
            finish_reason=finish_reason,
            case_id="hermes/qwen2.5/bad",
        )


# --------------------------------------------------------------------------------------
# The command: toolcall conformance build


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="toolcall conformance build")
    add_build_arguments(parser)
    return parser.parse_args(argv)


def cli_args(tmp_path: Path, *extra: str) -> list[str]:
    (tmp_path / "output.txt").write_text(HERMES_TEXT + "\n", encoding="utf-8")
    (tmp_path / "request.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (tmp_path / "expected.json").write_text(json.dumps(HERMES_EXPECTED), encoding="utf-8")
    return [
        "--tokenizer", "qwen2.5",
        "--parser", "hermes",
        "--id", "hermes/qwen2.5/cli",
        "--text", str(tmp_path / "output.txt"),
        "--strip-final-newline",
        "--request", str(tmp_path / "request.json"),
        "--expected", str(tmp_path / "expected.json"),
        "--provenance-kind", "wild",
        "--source", "https://example.invalid/issue/1",
        "--model", "Qwen/Qwen2.5-7B-Instruct",
        *extra,
    ]  # fmt: skip


def test_cli_writes_a_loadable_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cases" / "cli.json"
    assert run_build(parse([*cli_args(tmp_path), "--out", str(out)])) == 0
    case = load_case(out)
    assert case.text == HERMES_TEXT
    assert case.provenance == {
        "kind": "wild",
        "source": "https://example.invalid/issue/1",
        "model": "Qwen/Qwen2.5-7B-Instruct",
    }
    assert case.expected.content == "Let me check."
    assert "wrote" in capsys.readouterr().err


def test_cli_prints_to_stdout_and_reads_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = cli_args(tmp_path)
    argv[argv.index("--text") + 1] = "-"
    monkeypatch.setattr("sys.stdin", io.StringIO(HERMES_TEXT))
    assert run_build(parse(argv)) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "".join(step["text"] for step in printed["output"]["steps"]) == HERMES_TEXT


def test_cli_from_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = get_tokenizer("qwen2.5").encode(HERMES_TEXT)
    (tmp_path / "ids.json").write_text(json.dumps([ids[:5], ids[5:]]), encoding="utf-8")
    argv = cli_args(tmp_path)
    at = argv.index("--text")
    argv[at : at + 3] = ["--ids", str(tmp_path / "ids.json")]
    assert run_build(parse(argv)) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [step["token_ids"] for step in printed["output"]["steps"]] == [ids[:5], ids[5:]]


def test_cli_never_overwrites_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exists.json"
    out.write_text("keep me", encoding="utf-8")
    assert run_build(parse([*cli_args(tmp_path), "--out", str(out)])) == 1
    assert "--force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "keep me"
    assert run_build(parse([*cli_args(tmp_path), "--out", str(out), "--force"])) == 0
    assert load_case(out).id == "hermes/qwen2.5/cli"


def test_cli_reports_bad_input_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = cli_args(tmp_path)
    (tmp_path / "expected.json").write_text("{not json", encoding="utf-8")
    assert run_build(parse(argv)) == 1
    error = capsys.readouterr().err
    assert "--expected" in error
    assert "not JSON" in error
    assert "line 1" in error


def test_write_corpus_writes_then_checks_and_reports_stale_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = hermes_case()
    path = tmp_path / "hermes" / "one.json"
    assert write_corpus([(path, case)], [], label="Hermes") == 0
    assert load_case(path).id == case["id"]
    assert write_corpus([(path, case)], ["--check"], label="Hermes") == 0
    changed = {**case, "extra": {"edited": True}}
    assert write_corpus([(path, changed)], ["--check"], label="Hermes") == 1
    assert f"stale: {path}" in capsys.readouterr().err
    assert write_corpus([(path, case), (tmp_path / "two.json", case)], [], label="H") == 1


def test_corpus_helpers_shape_a_valid_case(tmp_path: Path) -> None:
    request = request_body([{"type": "function", "function": {"name": "f"}}])
    assert "parallel_tool_calls" not in request
    assert request_body([], "required", False)["parallel_tool_calls"] is False
    expected = expected_parse(None, [("f", {"a": 1}), ("f", '{"a": ')], grammar="reject")
    assert expected == {
        "content": None,
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "arguments": '{"a": '}],
        "grammar": "reject",
    }
    path, data = build_corpus_case(
        tmp_path,
        tokenizer="llama3.1",
        parser="pythonic",
        slug="one",
        text="[f(a=1)]",
        request=request,
        provenance={"kind": "constructed", "source": "a test"},
        expected=expected_parse(None, [("f", {"a": 1})]),
    )
    assert path == tmp_path / "pythonic" / "llama3.1" / "one.json"
    assert data["id"] == "pythonic/llama3.1/one"
    validate_case_data(data)
