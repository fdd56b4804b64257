"""The vLLM bridge carries ``--tokenizer-mode mistral``: vLLM's own ``MistralTokenizer``
(mistral-common inside), its detokenizer's deltas, and vLLM's composed parser.

Runs in the ``vllm`` session (vLLM 0.33 importable); the module is skipped elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("vllm", reason="the vLLM bridge needs vLLM 0.33 (vllm session)")

from transformers.tokenization_mistral_common import MistralCommonBackend
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.parser import ParserManager
from vllm.tokenizers.detokenizer_utils import detokenize_incrementally
from vllm.tokenizers.mistral import MistralTokenizer
from vllm.tool_parsers import ToolParserManager

from toolcall.vllm import adapters
from toolcall.vllm.adapter import adapter_for, vocabulary_of
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_mistral import MistralParser

pytestmark = pytest.mark.vllm

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def vllm_tokenizer(name: str) -> MistralTokenizer:
    path = get_tokenizer(name).hf_tokenizer.instruct_tokenizer.tokenizer.file_path
    return MistralTokenizer(MistralCommonBackend(tokenizer_path=str(path)))


def steps_of(tokenizer: MistralTokenizer, ids: list[int]) -> list[tuple[str, list[int]]]:
    """What vLLM's detokenizer (skip_special_tokens=False) hands the parser, token by token."""
    tokens: list[str] = []
    prefix = read = 0
    steps = []
    for end in range(1, len(ids) + 1):
        new, delta, prefix, read = detokenize_incrementally(
            tokenizer, ids[:end], tokens, prefix, read, skip_special_tokens=False
        )
        tokens.extend(new)
        steps.append((delta, [ids[end - 1]]))
    return steps


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ToolParserManager, "tool_parsers", dict(ToolParserManager.tool_parsers))
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()
    yield
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()


def request(**fields: Any) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "Weather?"}], tools=[WEATHER], **fields
    )


def test_the_vocabulary_of_vllms_mistral_tokenizer() -> None:
    v11 = vocabulary_of(vllm_tokenizer("mistral-tekken-v11")).special_tokens
    assert {t: v11[t] for t in ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]")} == {
        "[TOOL_CALLS]": 9,
        "[ARGS]": 32,
        "[CALL_ID]": 33,
        "[THINK]": 34,
        "[/THINK]": 35,
    }
    v3 = vocabulary_of(vllm_tokenizer("mistral-v3")).special_tokens
    assert v3["[TOOL_CALLS]"] == 5
    assert "[ARGS]" not in v3


def test_adjust_request_keeps_the_markers_in_the_text() -> None:
    adapter = adapter_for(MistralParser)(vllm_tokenizer("mistral-tekken-v11"), None)
    adjusted = adapter.adjust_request(request())
    assert adjusted.skip_special_tokens is False


@pytest.mark.parametrize("tokens_per_step", [1, 3])
def test_streaming_tekken_v11_through_vllms_composed_parser(
    registry: None, tokens_per_step: int
) -> None:
    tokenizer = vllm_tokenizer("mistral-tekken-v11")
    ToolParserManager.register_module(name="mistral", module=adapter_for(MistralParser))
    composed = ParserManager.get_parser(
        tool_parser_name="mistral", enable_auto_tools=True, tokenizer=tokenizer
    )
    text = 'Il fait beau à 東京.[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Tōkyō 🗼"}'
    ids = get_tokenizer("mistral-tekken-v11").encode(text)
    steps = steps_of(tokenizer, ids)
    # [CALL_ID] releases no text, and tekken holds back the bytes of a split character.
    assert steps[ids.index(33)][0] == ""
    assert sum(1 for delta, _ in steps if delta == "") >= 2
    grouped = [
        ("".join(d for d, _ in steps[i : i + tokens_per_step]),
         [t for _, ts in steps[i : i + tokens_per_step] for t in ts])
        for i in range(0, len(steps), tokens_per_step)
    ]  # fmt: skip
    grouped.append(("", [tokenizer.eos_token_id]))
    req = request()
    parser = composed(tokenizer, req.tools)
    messages = [
        parser.parse_delta(delta, ids_, req, prompt_token_ids=[1], finished=n == len(grouped) - 1)
        for n, (delta, ids_) in enumerate(grouped)
    ]
    content = "".join(m.content or "" for m in messages if m is not None)
    entries = [
        e.model_dump(exclude_unset=True)
        for m in messages
        if m is not None
        for e in (m.tool_calls or [])
    ]
    assert content == "Il fait beau à 東京."
    assert entries[0]["id"] == "abcDEF123"
    assert entries[0]["function"]["name"] == "get_weather"
    arguments = "".join(e.get("function", {}).get("arguments") or "" for e in entries)
    streamed = "".join(delta for delta, _ in steps)
    assert arguments == streamed[streamed.index("{") :]


def test_a_tokenizer_without_a_vocabulary_is_logged_once_and_still_parses(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class BareTokenizer:
        """A tokenizer type with no get_added_vocab() and no all_special_tokens."""

        def encode(self, text: str) -> list[int]:
            return [ord(c) for c in text]

    bare = BareTokenizer()
    with caplog.at_level(logging.WARNING, logger="toolcall"):
        first = vocabulary_of(bare)
        adapter = adapter_for(MistralParser)(bare, [WEATHER])
        vocabulary_of(bare)
    assert first.special_tokens == {}
    lines = [r for r in caplog.records if "cannot read the special tokens" in r.getMessage()]
    assert len(lines) == 1
    assert "BareTokenizer" in lines[0].getMessage()
    result = adapter.extract_tool_calls('[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}', request())
    assert result.tools_called
    assert result.tool_calls[0].function.name == "get_weather"
    assert result.tool_calls[0].function.arguments == '{"city": "Oslo"}'


def test_content_after_a_calls_arguments_in_one_step_comes_in_the_next_message() -> None:
    # Tekken's "}{" ends a call's arguments and starts text in one token. vLLM's Responses
    # stream reads a message's content before its calls, so the content waits a message.
    adapter = adapter_for(MistralParser)(vllm_tokenizer("mistral-tekken-v11"), [WEATHER])
    req = request()
    steps = ["[TOOL_CALLS]", "get_weather", "[ARGS]", '{"city": "Oslo"', "}{", '"x": 1}']
    messages = [adapter.extract_tool_calls_streaming("", "", s, [], [], [], req) for s in steps]
    messages.append(adapter.finish_streaming())
    closing = messages[4]
    assert closing is not None
    assert not closing.content
    assert closing.tool_calls[0].function.arguments == "}"
    after = [m for m in messages[5:] if m is not None]
    assert "".join(m.content or "" for m in after) == '{"x": 1}'
    assert all(not m.tool_calls for m in after)


def test_a_name_utf8_cannot_write_never_reaches_the_response() -> None:
    # A lone surrogate escape in a name is no readable name (DESIGN §6): that element is
    # content, and everything the response carries can be written as UTF-8.
    adapter = adapter_for(MistralParser)(vllm_tokenizer("mistral-tekken-v11"), [WEATHER])
    bad = '{"name": "\\ud800", "arguments": {}}'
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {}}, ' + bad + "]"
    result = adapter.extract_tool_calls(text, request())
    assert [call.function.name for call in result.tool_calls] == ["get_weather"]
    assert result.content == bad
    for call in result.tool_calls:
        call.model_dump_json().encode("utf-8")
