"""What the Llama plugin's tests share: the declared tools and building a parser."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from toolcall import Parser, ParserContext, Request
from toolcall_llama import Llama3JsonParser


def declare(name: str, properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """A Chat Completions function tool."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return {"type": "function", "function": {"name": name, "parameters": schema}}


TOOLS = (
    declare(
        "get_weather",
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "kelvin"]}},
        ["city"],
    ),
    declare("get_time", {"tz": {"type": "string"}}),
)


def make_parser(
    parser_class: type[Parser] = Llama3JsonParser,
    tools: Sequence[dict[str, Any]] = TOOLS,
    *,
    tool_choice: object = "auto",
    strict_parsing: bool = False,
) -> Parser:
    request = Request.from_openai({"tools": list(tools), "tool_choice": tool_choice})
    return parser_class(ParserContext(request=request, strict_parsing=strict_parsing))


def character_splits(text: str, count: int = 40, seed: int = 0) -> list[list[str]]:
    """One character per step, then ``count`` random splits into 1 to 6 characters."""
    rng = random.Random(seed)
    out = [list(text)]
    for _ in range(count):
        pieces, at = [], 0
        while at < len(text):
            size = rng.randint(1, 6)
            pieces.append(text[at : at + size])
            at += size
        out.append(pieces)
    return out
