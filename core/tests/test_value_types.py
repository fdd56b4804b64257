"""The value types of ``toolcall.types`` as OpenAI's API and vLLM's request validator shape
them: reading and writing requests and tools, tool choices, deltas as values, the parse as
an assistant message."""

from __future__ import annotations

import json

import pytest

from toolcall import (
    Delta,
    Event,
    EventName,
    NamedChoice,
    Parsed,
    Request,
    StrictLevel,
    Tool,
    ToolCall,
    ToolCallDelta,
    Vocabulary,
)
from toolcall.types import parse_tool_choice

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "strict": True,
    },
}


def test_strict_levels_by_name() -> None:
    assert StrictLevel.from_name(" Function ") is StrictLevel.FUNCTION
    assert StrictLevel.from_name("parameter") is StrictLevel.PARAMETER
    with pytest.raises(ValueError, match="unknown strict level 'loose'") as info:
        StrictLevel.from_name("loose")
    assert "choose from auto, function, parameter" in str(info.value)


def test_a_request_round_trips_through_openai_json() -> None:
    body = {
        "tools": [WEATHER, {"type": "function", "function": {"name": "get_time"}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
    }
    request = Request.from_openai(body)
    assert request.tools[0] == Tool(
        "get_weather",
        {"type": "object", "properties": {"city": {"type": "string"}}},
        strict=True,
        description="Current weather",
    )
    assert request.tools[1] == Tool("get_time")
    assert request.tool_choice == NamedChoice("get_weather")
    assert request.to_openai() == body
    assert Request.from_openai(request.to_openai()) == request
    auto = Request.from_openai({"tools": [WEATHER], "tool_choice": "auto"})
    assert auto.to_openai()["tool_choice"] == "auto"
    assert auto.to_openai()["parallel_tool_calls"] is True


def test_what_a_request_cannot_be() -> None:
    with pytest.raises(ValueError, match="tools must be a list"):
        Request.from_openai({"tools": "get_weather"})
    with pytest.raises(ValueError, match="a tool needs a function name"):
        Tool.from_openai({"type": "function", "function": {"description": "nameless"}})


def test_tool_choices_in_both_api_shapes() -> None:
    assert parse_tool_choice(None) is None
    for word in ("auto", "required", "none"):
        assert parse_tool_choice(word) == word
    chat = {"type": "function", "function": {"name": "f"}}
    responses = {"type": "function", "name": "f"}
    assert parse_tool_choice(chat) == parse_tool_choice(responses) == NamedChoice("f")
    for wrong in ("sometimes", {"type": "function"}, {"function": {"name": 3}}, 7):
        with pytest.raises(ValueError, match="unsupported tool_choice"):
            parse_tool_choice(wrong)


def test_a_vocabulary_looks_up_special_tokens() -> None:
    vocabulary = Vocabulary(special_tokens={"<tool_call>": 151657})
    assert vocabulary.id_of("<tool_call>") == 151657
    assert vocabulary.id_of("</tool_call>") is None


def test_deltas_are_values() -> None:
    entry = ToolCallDelta(0, "call-1", "get_weather", '{"city"')
    same = ToolCallDelta(0, "call-1", "get_weather", '{"city"')
    assert entry == same
    assert hash(entry) == hash(same)
    assert entry != ToolCallDelta(0, arguments='{"city"')
    assert entry != (0, "call-1", "get_weather", '{"city"')
    assert repr(entry) == (
        "ToolCallDelta(index=0, id='call-1', name='get_weather', arguments='{\"city\"')"
    )
    delta = Delta(content="Hi", tool_calls=(entry,))
    assert delta == Delta(content="Hi", tool_calls=(same,))
    assert hash(delta) == hash(Delta(content="Hi", tool_calls=(same,)))
    assert delta != Delta(content="Hi")
    assert delta != "Hi"
    assert repr(Delta(content="a")) == "Delta(content='a', tool_calls=())"
    assert repr(Delta(reasoning="r")) == "Delta(content='', tool_calls=(), reasoning='r')"
    assert not Delta()
    assert Delta(reasoning="r")


def test_recoveries_are_the_named_tolerances() -> None:
    assert EventName.MISSING_END.is_recovery
    assert not EventName.MALFORMED_ARGUMENTS.is_recovery
    parsed = Parsed(
        content=None,
        events=(
            Event(EventName.MISSING_END, 0),
            Event(EventName.TRUNCATED, 1),
            Event("my-own-event"),
        ),
    )
    assert parsed.recoveries == ("missing-end",)


def test_a_parse_is_an_assistant_message() -> None:
    parsed = Parsed(
        content="Checking.",
        tool_calls=(ToolCall("call-1", "get_weather", '{"city": "東京"}'),),
        reasoning="the user wants the weather",
    )
    message = {
        "role": "assistant",
        "content": "Checking.",
        "reasoning": "the user wants the weather",
        "tool_calls": [
            {
                "id": "call-1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "東京"}'},
            }
        ],
    }
    assert parsed.to_openai() == message
    assert json.loads(parsed.to_json()) == message
    assert "東京" in parsed.to_json()
    assert Parsed(content="plain").to_openai() == {"role": "assistant", "content": "plain"}


def test_call_ids_in_each_family_style() -> None:
    from toolcall.parser import new_call_id

    openai = new_call_id()
    assert openai.startswith("chatcmpl-tool-")
    assert len(openai) == len("chatcmpl-tool-") + 32
    mistral = {new_call_id("mistral") for _ in range(20)}
    assert all(len(one) == 9 and one.isalnum() and one.isascii() for one in mistral)
    assert len(mistral) == 20


def test_a_parser_accepts_any_vocabulary_and_has_no_grammar_by_default() -> None:
    from toolcall import CallStream, Parser
    from toolcall.parser import assemble
    from toolcall.strictness import resolve_plan

    class Plain(Parser):
        name = "plain"

        def stream(self) -> CallStream:
            raise NotImplementedError

    Plain.check_vocabulary(Vocabulary())
    plan = resolve_plan(Request.from_openai({"tools": [WEATHER], "tool_choice": "required"}))
    assert Plain().structural_tag(plan) is None
    # Reasoning pieces reassemble like content; whitespace-only reasoning is none.
    parsed = assemble([Delta(reasoning="think "), Delta(reasoning="more"), Delta(content="A")])
    assert (parsed.reasoning, parsed.content) == ("think more", "A")
    assert assemble([Delta(reasoning=" \n")]).reasoning is None
