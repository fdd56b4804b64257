"""The adapter hands a parser's reasoning (``Delta.reasoning``) to vLLM's ``reasoning`` field.

Runs in the vLLM venv (the vllm nox session).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
pytest.importorskip("vllm", reason="needs vLLM 0.33 installed (the vllm nox session)")

from vllm.entrypoints.generate.base.protocol import DeltaMessage

from toolcall import CallStream, Delta, Parser, ParserContext, Request, ToolCallDelta
from toolcall.vllm.adapter import adapter_for, delta_message

pytestmark = pytest.mark.vllm


def test_one_step_keeps_reasoning_content_and_calls_apart() -> None:
    message = delta_message(
        [
            Delta(reasoning="think "),
            Delta(reasoning="more"),
            Delta("answer"),
            Delta("", (ToolCallDelta(0, "id-0", "f", '{"a"'),)),
            Delta("", (ToolCallDelta(0, None, None, ": 1}"),)),
        ]
    )
    assert isinstance(message, DeltaMessage)
    assert message.reasoning == "think more"
    assert message.content == "answer"
    [entry] = message.tool_calls
    assert (entry.index, entry.id, entry.function.name, entry.function.arguments) == (
        0,
        "id-0",
        "f",
        '{"a": 1}',
    )
    assert "reasoning" in message.model_dump(exclude_unset=True)


def test_nothing_gives_no_message() -> None:
    assert delta_message([Delta(), Delta("")]) is None


class _Thinker(Parser):
    """Reasoning is the text before ``|``, content the rest (no calls)."""

    name = "tc_thinker"

    def stream(self) -> CallStream:
        return _ThinkerStream(self)


class _ThinkerStream(CallStream):
    def __init__(self, parser: _Thinker) -> None:
        super().__init__(parser)
        self.done = False

    def on_text(self, text: str, start: int) -> None:
        if self.done:
            self.content(text, start)
            return
        bar = text.find("|")
        if bar < 0:
            self.reasoning(text, start)
            return
        self.reasoning(text[:bar], start)
        self.frame(start + bar, start + bar + 1)
        self.done = True
        self.content(text[bar + 1 :], start + bar + 1)

    def on_end(self) -> None:
        pass


def test_the_tool_adapter_streams_reasoning_to_vllm() -> None:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    adapter = adapter_for(_Thinker)(None, [{"type": "function", "function": {"name": "f"}}])
    request: Any = ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=[{"type": "function", "function": {"name": "f"}}],
    )
    first = adapter.extract_tool_calls_streaming("", "", "hmm", [], [], [1], request)
    second = adapter.extract_tool_calls_streaming("", "", "|yes", [], [], [2], request)
    assert first.reasoning == "hmm"
    assert second.content == "yes"
    assert _Thinker(ParserContext(request=Request())).parse("a|b").reasoning == "a"
