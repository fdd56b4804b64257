"""Helpers shared by the GLM plugin's tests: tools, parsers, feeding a stream, the contract."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from toolcall import Delta, Parsed, Parser, ParserContext, Request, assemble
from toolcall.contract import check_splits
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
            "properties": {
                "code": {"type": "string"},
                "data": {"type": "array"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
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


def random_splits(text: str, count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    splits = [list(text)]
    for _ in range(count):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12))))
        splits.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return splits


def assert_contract(parser: Any, text: str, *, seed: int = 0, promptness: bool = True) -> None:
    violations = check_splits(parser, text, random_splits(text, 20, seed), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations))


START = "start"  # the call's first entry: index, id and name


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
