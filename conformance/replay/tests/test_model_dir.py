"""The weightless model directories: real tokenizers, real vocabulary sizes, working templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcall_replay.model_dir import FAMILIES, ModelDirError, build_model_dir

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris and Oslo? [case:template-check]"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module", params=sorted(f for f in FAMILIES if FAMILIES[f].template))
def model_dir(request: pytest.FixtureRequest, models: Path) -> Path:
    family: str = request.param
    return build_model_dir(family, models / family)


def load(directory: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(directory), local_files_only=True)


def test_the_directory_has_no_weights_and_the_real_vocabulary(model_dir: Path) -> None:
    names = sorted(p.name for p in model_dir.iterdir())
    assert names == [
        "config.json",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "toolcall-replay.json",
    ]
    fam = FAMILIES[json.loads((model_dir / "toolcall-replay.json").read_text())["family"]]
    from toolcall_conformance.tokenizers import get_tokenizer

    real = get_tokenizer(fam.tokenizer)
    config = json.loads((model_dir / "config.json").read_text())
    assert config["vocab_size"] == real.model_vocab_size
    generation = json.loads((model_dir / "generation_config.json").read_text())
    # The same stop ids, the served tokenizer's eos first (vLLM's request eos).
    assert sorted(generation["eos_token_id"]) == sorted(real.stop_token_ids)
    assert real.tokenizer_json_path is not None
    assert (model_dir / "tokenizer.json").read_bytes() == real.tokenizer_json_path.read_bytes()
    served = load(model_dir)  # as vLLM loads it (transformers picks the class)
    assert served.eos_token_id == generation["eos_token_id"][0]
    sample = 'x <tool_call>\n{"name": "f", "arguments": {"n": 12345, "s": "東京 🗼"}}\n</tool_call>'
    assert served.encode(sample, add_special_tokens=False) == real.encode(sample)


def test_the_mistral_directory_holds_mistral_commons_tekken_file(models: Path) -> None:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from toolcall_conformance.tokenizers import get_tokenizer

    directory = build_model_dir("mistral-tekken-v11", models / "mistral")
    names = sorted(p.name for p in directory.iterdir())
    assert names == ["config.json", "generation_config.json", "tekken.json", "toolcall-replay.json"]
    real = get_tokenizer("mistral-tekken-v11")
    source = Path(real.hf_tokenizer.instruct_tokenizer.tokenizer.file_path)
    assert (directory / "tekken.json").read_bytes() == source.read_bytes()
    served = MistralTokenizer.from_file(str(directory / "tekken.json")).instruct_tokenizer.tokenizer
    assert served.version.value == "v11"
    assert [served.get_control_token(t) for t in ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]")] == [
        9,
        32,
        33,
    ]
    assert served.encode('{"tz": "東京"}', bos=False, eos=False) == real.encode('{"tz": "東京"}')
    config = json.loads((directory / "config.json").read_text())
    assert config["vocab_size"] == real.model_vocab_size
    assert json.loads((directory / "generation_config.json").read_text())["eos_token_id"] == [2]


def test_a_second_build_reuses_the_directory(model_dir: Path) -> None:
    family = json.loads((model_dir / "toolcall-replay.json").read_text())["family"]
    before = {p.name: p.stat().st_mtime_ns for p in model_dir.iterdir()}
    assert build_model_dir(family, model_dir) == model_dir
    assert {p.name: p.stat().st_mtime_ns for p in model_dir.iterdir()} == before


def test_a_changed_directory_is_rebuilt(tmp_path: Path) -> None:
    built = build_model_dir("qwen2.5", tmp_path / "q")
    (built / "config.json").write_text("{}")
    (built / "toolcall-replay.json").write_text('{"digest": "stale"}')
    build_model_dir("qwen2.5", built)
    assert json.loads((built / "config.json").read_text())["vocab_size"] == 151936


def test_an_unknown_family_is_named() -> None:
    with pytest.raises(
        ModelDirError,
        match=r"no replay model family 'gpt' \(known: deepseek-v3, glm4\.5, llama3\.1, llama4, "
        r"mistral-tekken-v11, qwen2\.5, qwen3\)",
    ):
        build_model_dir("gpt", Path("/nonexistent"))


def test_qwen_template_renders_tools_calls_and_results(models: Path) -> None:
    tok = load(build_model_dir("qwen2.5", models / "qwen2.5"))
    text = tok.apply_chat_template(
        CONVERSATION, tools=TOOLS, tokenize=False, add_generation_prompt=True
    )
    system, rest = text.split("<|im_end|>\n", 1)
    assert system.startswith("<|im_start|>system\n")
    assert "<tools>\n" + json.dumps(TOOLS[0]) + "\n</tools>" in system
    assert rest == (
        "<|im_start|>user\nWeather in Paris and Oslo? [case:template-check]<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n'
        "</tool_call><|im_end|>\n"
        "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    ids = tok.encode(text, add_special_tokens=False)
    # twice in the format instructions of the system turn, once for the call
    assert ids.count(tok.convert_tokens_to_ids("<tool_call>")) == 3


def test_llama_template_renders_tools_calls_and_results(models: Path) -> None:
    tok = load(build_model_dir("llama3.1", models / "llama3.1"))
    text = tok.apply_chat_template(
        CONVERSATION, tools=TOOLS, tokenize=False, add_generation_prompt=True
    )
    system, rest = text.split("<|eot_id|>", 1)
    assert system.startswith("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n")
    assert "<tools>\n" + json.dumps(TOOLS[0]) + "\n</tools>" in system
    assert rest == (
        "<|start_header_id|>user<|end_header_id|>\n\n"
        "Weather in Paris and Oslo? [case:template-check]<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n'
        "</tool_call><|eot_id|>"
        "<|start_header_id|>ipython<|end_header_id|>\n\n<tool_response>\nsunny\n</tool_response>"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    )


def test_glm_template_renders_tools_calls_and_results(models: Path) -> None:
    tok = load(build_model_dir("glm4.5", models / "glm4.5"))
    text = tok.apply_chat_template(
        CONVERSATION, tools=TOOLS, tokenize=False, add_generation_prompt=True
    )
    assert text.startswith("[gMASK]<sop><|system|>\n# Tools\n")
    assert "<tools>\n" + json.dumps(TOOLS[0]) + "\n</tools>" in text
    assert text.endswith(
        "<|user|>\nWeather in Paris and Oslo? [case:template-check]"
        "<|assistant|>\n<think></think>\n<tool_call>get_weather\n"
        "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
        "<|observation|>\n<tool_response>\nsunny\n</tool_response><|assistant|>"
    )
    ids = tok.encode(text, add_special_tokens=False)
    for marker in ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<|observation|>"):
        assert tok.convert_tokens_to_ids(marker) in ids
