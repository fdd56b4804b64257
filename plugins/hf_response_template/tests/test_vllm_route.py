"""``hf`` through vLLM 0.33's own parser composition (no server; the vllm session runs it).

The tokenizer is vLLM's, loaded from the weightless Qwen2.5 model directory whose
``tokenizer_config.json`` carries a response template, as a checkpoint carries it. With our
plugin registered, vLLM's ``ParserManager`` composes ``--tool-call-parser hf`` (alone, or with
``--reasoning-parser hf``) into our parser of the whole message; the reasoning reaches vLLM's
``reasoning`` field, streamed and not; strict/required/named requests get our structural tag;
a template that cannot give the grammar is a ``VLLMValidationError`` (HTTP 400) that says why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
vllm = pytest.importorskip("vllm", reason="needs vLLM 0.33 installed (the vllm nox session)")

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.parser import ParserManager  # noqa: E402
from vllm.reasoning import ReasoningParserManager  # noqa: E402
from vllm.tokenizers import get_tokenizer  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402

import toolcall.vllm  # noqa: E402
from toolcall.vllm import adapters  # noqa: E402
from toolcall_replay.model_dir import build_model_dir  # noqa: E402

pytestmark = pytest.mark.vllm

HERMES: dict[str, Any] = json.loads(
    resources.files("toolcall_hf_response_template")
    .joinpath("templates/hermes.json")
    .read_text(encoding="utf-8")
)
#: A JSON dialect (unquoted keys): the parser reads it, xgrammar cannot write it.
DIALECT: dict[str, Any] = {
    **HERMES,
    "fields": {
        **HERMES["fields"],
        "tool_calls": {
            **HERMES["fields"]["tool_calls"],
            "content_args": {"unquoted_keys": True},
        },
    },
}
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
OUTPUT = (
    "<think>\nThe user wants Paris.\n</think>\n\nChecking.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """vLLM's parser tables (private copies) with our plugin registered."""
    for manager in (ToolParserManager, ReasoningParserManager):
        attribute = "tool_parsers" if manager is ToolParserManager else "reasoning_parsers"
        monkeypatch.setattr(manager, attribute, dict(getattr(manager, attribute)))
        monkeypatch.setattr(manager, "lazy_parsers", dict(manager.lazy_parsers))
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()
    adapters.reasoning_class.cache_clear()
    toolcall.vllm.register()
    yield
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()
    adapters.reasoning_class.cache_clear()


def tokenizer_with(template: dict[str, Any]) -> Any:
    directory = build_model_dir("qwen2.5", tokenizer_config={"response_template": template})
    return get_tokenizer(str(directory))


def composed(tokenizer: Any, *, reasoning: bool) -> Any:
    return ParserManager.get_parser(
        tool_parser_name="hf",
        reasoning_parser_name="hf" if reasoning else None,
        enable_auto_tools=True,
        tokenizer=tokenizer,
    )


def request(**fields: Any) -> ChatCompletionRequest:
    body: dict[str, Any] = {
        "model": "replay",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [TOOL],
        **fields,
    }
    return ChatCompletionRequest(**body)


def prompt_ids(tokenizer: Any) -> list[int]:
    ids: list[int] = tokenizer.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    return ids


@pytest.mark.parametrize("reasoning", [False, True], ids=["alone", "with-reasoning-parser"])
def test_vllm_composes_our_parser_of_the_whole_message(registered: None, reasoning: bool) -> None:
    tokenizer = tokenizer_with(HERMES)
    parser_cls = composed(tokenizer, reasoning=reasoning)
    assert parser_cls.__name__ == "ToolcallMessageParser_hf"
    parser = parser_cls(tokenizer, [TOOL], enable_auto_tools=True)
    parser.set_prompt_token_ids(prompt_ids(tokenizer))
    thinking, content, calls = parser.parse(OUTPUT, request(), enable_auto_tools=True)
    assert thinking == "The user wants Paris."
    assert content == "Checking."
    assert [(call.name, json.loads(call.arguments)) for call in calls] == [
        ("get_weather", {"city": "Paris"})
    ]


@pytest.mark.parametrize("reasoning", [False, True], ids=["alone", "with-reasoning-parser"])
def test_streamed_reasoning_reaches_the_reasoning_field(registered: None, reasoning: bool) -> None:
    tokenizer = tokenizer_with(HERMES)
    parser = composed(tokenizer, reasoning=reasoning)(tokenizer, [TOOL], enable_auto_tools=True)
    ids = tokenizer.encode(OUTPUT)
    messages = []
    previous = ""
    for end in range(1, len(ids) + 1):
        text = tokenizer.decode(ids[:end])
        message = parser.parse_delta(
            text[len(previous) :],
            [ids[end - 1]],
            request(),
            prompt_token_ids=prompt_ids(tokenizer),
            finished=end == len(ids),
        )
        previous = text
        if message is not None:
            messages.append(message)
    assert "".join(m.reasoning or "" for m in messages).strip() == "The user wants Paris."
    assert "".join(m.content or "" for m in messages).strip() == "Checking."
    entries = [entry for m in messages for entry in m.tool_calls]
    assert entries[0].function.name == "get_weather"
    assert json.loads("".join(e.function.arguments or "" for e in entries)) == {"city": "Paris"}


def test_include_reasoning_false_drops_it(registered: None) -> None:
    tokenizer = tokenizer_with(HERMES)
    parser = composed(tokenizer, reasoning=True)(tokenizer, [TOOL], enable_auto_tools=True)
    message = parser.parse_delta(
        "<think>\nsecret", [1], request(include_reasoning=False), finished=False
    )
    assert message is None or not message.reasoning


@pytest.mark.parametrize(
    "fields",
    [
        {"tool_choice": "required"},
        {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
        {"parallel_tool_calls": False},
        {"tools": [{**TOOL, "function": {**TOOL["function"], "strict": True}}]},
    ],
    ids=["required", "named", "single", "strict"],
)
def test_guarantees_get_our_structural_tag(registered: None, fields: dict[str, Any]) -> None:
    tokenizer = tokenizer_with(HERMES)
    parser = composed(tokenizer, reasoning=False)(tokenizer, fields.get("tools", [TOOL]))
    parser.set_prompt_token_ids(prompt_ids(tokenizer))
    adjusted = parser.adjust_request(request(**fields))
    assert adjusted.structured_outputs is not None
    tag = json.loads(adjusted.structured_outputs.structural_tag)
    assert "<tool_call>" in json.dumps(tag)
    assert adjusted.skip_special_tokens is False


def test_a_template_without_a_grammar_is_a_400_that_says_why(registered: None) -> None:
    tokenizer = tokenizer_with(DIALECT)
    parser = composed(tokenizer, reasoning=False)(tokenizer, [TOOL])
    with pytest.raises(VLLMValidationError, match="unquoted_keys"):
        parser.adjust_request(request(tool_choice="required"))
    # auto without strict tools needs no grammar: served.
    assert parser.adjust_request(request()).structured_outputs is None


def test_vllm_own_hf_refuses_what_ours_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ToolParserManager, "tool_parsers", {})
    monkeypatch.setattr(ToolParserManager, "lazy_parsers", dict(ToolParserManager.lazy_parsers))
    tokenizer = tokenizer_with(HERMES)
    builtin = ParserManager.get_parser(
        tool_parser_name="hf", enable_auto_tools=True, tokenizer=tokenizer
    )
    assert builtin.__name__ == "ResponseTemplateParser"
    with pytest.raises(VLLMValidationError, match="cannot guarantee"):
        builtin(tokenizer, [TOOL]).adjust_request(request(tool_choice="required"))
