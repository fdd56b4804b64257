"""Helpers shared by the GLM plugin's tests: tools, parsers, feeding a stream."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolcall import Delta, Parsed, Parser, ParserContext, Request, assemble
from toolcall_glm import Glm45Parser

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}
CODE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "run_code",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "data": {"type": "array"}},
        },
    },
}


def make_parser(
    tools: Sequence[dict[str, Any]] = (WEATHER, TIME, CODE),
    *,
    tool_choice: object = "auto",
    strict_parsing: bool = False,
    parser_class: type[Parser] = Glm45Parser,
) -> Parser:
    request = Request.from_openai({"tools": list(tools), "tool_choice": tool_choice})
    return parser_class(ParserContext(request=request, strict_parsing=strict_parsing))


def feed_all(parser: Parser, steps: Sequence[str]) -> tuple[list[list[Delta]], Parsed]:
    """Feed ``steps`` one by one; return the deltas of every feed (finish last) and the parse
    they add up to."""
    stream = parser.stream()
    per_step = [stream.feed(step) for step in steps]
    per_step.append(stream.finish())
    parsed = assemble(
        [d for step in per_step for d in step], events=stream.events, framing=stream.framing
    )
    return per_step, parsed


def args_of(parsed: Parsed) -> list[Any]:
    return [json.loads(call.arguments) for call in parsed.tool_calls]


def event_names(parsed: Parsed) -> list[str]:
    return [event.name for event in parsed.events]
