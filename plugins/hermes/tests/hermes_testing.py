"""Helpers shared by the Hermes plugin's tests: tools, parsers, feeding a stream."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from toolcall import Delta, Parsed, Parser, ParserContext, Request, assemble
from toolcall_hermes import HermesParser

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
    },
}
TOOLS = (WEATHER, TIME)

START = "start"  # in shape(): the call's first entry (index, id and name)


def make_parser(
    tools: Sequence[dict[str, Any]] = TOOLS,
    *,
    tool_choice: object = "auto",
    strict_parsing: bool = False,
    parser_class: type[Parser] = HermesParser,
) -> Parser:
    request = Request.from_openai({"tools": list(tools), "tool_choice": tool_choice})
    return parser_class(ParserContext(request=request, strict_parsing=strict_parsing))


def feed_all(parser: Parser, steps: Sequence[str]) -> tuple[list[list[Delta]], Parsed]:
    """Feed ``steps`` one by one; return the deltas of every feed (finish last) and the
    parse they add up to."""
    stream = parser.stream()
    per_step = [stream.feed(step) for step in steps]
    per_step.append(stream.finish())
    parsed = assemble(
        [d for step in per_step for d in step], events=stream.events, framing=stream.framing
    )
    return per_step, parsed


def shape(deltas: Sequence[Delta]) -> list[tuple[str, object]]:
    """What one feed released: ("content", text), (START, name), ("args", text)."""
    out: list[tuple[str, object]] = []
    for delta in deltas:
        if delta.content:
            out.append(("content", delta.content))
        for entry in delta.tool_calls:
            if entry.name is not None:
                assert entry.id, "the first entry of a call carries its id"
                out.append((START, entry.name))
            if entry.arguments:
                out.append(("args", entry.arguments))
    return out


def calls_of(parsed: Parsed) -> list[tuple[str, str]]:
    return [(call.name, call.arguments) for call in parsed.tool_calls]


def values_of(parsed: Parsed) -> list[tuple[str, Any]]:
    return [(call.name, json.loads(call.arguments)) for call in parsed.tool_calls]


def events_of(parsed: Parsed) -> list[tuple[str, int | None]]:
    return [(event.name, event.call_index) for event in parsed.events]


def random_split(text: str, rng: random.Random, max_piece: int = 8) -> list[str]:
    """``text`` cut into pieces of 1 to ``max_piece`` characters."""
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(1, max_piece)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def outside_framing(text: str, parsed: Parsed) -> str:
    """The output with every framing span cut out."""
    out, last = [], 0
    for span in parsed.framing:
        out.append(text[last : span.start])
        last = span.end
    out.append(text[last:])
    return "".join(out)
