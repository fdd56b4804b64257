"""Helpers shared by the Mistral plugin's tests: tools, parsers, feeding a stream."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcall import Delta, Parsed, ParserContext, Request, Vocabulary, assemble
from toolcall_mistral import MistralParser


def tool(name: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties or {}},
        },
    }


WEATHER = tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})
TIME = tool("get_time", {"timezone": {"type": "string"}})
SEARCH = tool("search", {"query": {"type": "string"}})
TOOLS = (WEATHER, TIME, SEARCH)


def make_parser(
    tools: Sequence[dict[str, Any]] = TOOLS,
    *,
    tool_choice: object = "auto",
    strict_parsing: bool = False,
    special_tokens: dict[str, int] | None = None,
) -> MistralParser:
    request = Request.from_openai({"tools": list(tools), "tool_choice": tool_choice})
    vocabulary = Vocabulary(special_tokens=special_tokens or {})
    context = ParserContext(request=request, vocabulary=vocabulary, strict_parsing=strict_parsing)
    return MistralParser(context)


def feed_all(parser: MistralParser, steps: Sequence[str]) -> tuple[list[list[Delta]], Parsed]:
    """Feed ``steps`` one by one; the deltas of every feed (finish last) and their parse."""
    stream = parser.stream()
    per_step = [stream.feed(step) for step in steps]
    per_step.append(stream.finish())
    parsed = assemble(
        [delta for deltas in per_step for delta in deltas],
        events=stream.events,
        framing=stream.framing,
    )
    return per_step, parsed


def events(parsed: Parsed) -> list[str]:
    return [event.name for event in parsed.events]


def calls(parsed: Parsed) -> list[tuple[str, str]]:
    return [(call.name, call.arguments) for call in parsed.tool_calls]
