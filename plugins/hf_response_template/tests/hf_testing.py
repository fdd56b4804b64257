"""Helpers of the hf tests: templates, parsers, and every split under the contract checker."""

from __future__ import annotations

import copy
import itertools
import json
import random
from importlib import resources
from typing import Any

from toolcall import Parsed, ParserContext, Request, Vocabulary
from toolcall.contract import Violation, check_splits
from toolcall_hf_response_template import HfParser


def shipped(name: str) -> dict[str, Any]:
    """A template the plugin ships (``toolcall_hf_response_template/templates``)."""
    data: dict[str, Any] = json.loads(
        resources.files("toolcall_hf_response_template")
        .joinpath(f"templates/{name}.json")
        .read_text(encoding="utf-8")
    )
    return data


def with_field(template: dict[str, Any], name: str, **changes: Any) -> dict[str, Any]:
    """``template`` with field ``name`` changed (``None`` removes a key)."""
    data = copy.deepcopy(template)
    field = data["fields"].setdefault(name, {})
    for key, value in changes.items():
        if value is None:
            field.pop(key, None)
        else:
            field[key] = value
    return data


WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "metric": {"type": "boolean"},
            },
            "required": ["city"],
        },
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}


def parser(
    template: dict[str, Any],
    *,
    tools: list[dict[str, Any]] | None = None,
    prompt: str | None = None,
    **request: Any,
) -> HfParser:
    body = {"tools": tools if tools is not None else [WEATHER, TIME], **request}
    return HfParser(
        ParserContext(
            request=Request.from_openai(body),
            vocabulary=Vocabulary(metadata={"response_template": template}),
            prompt=prompt,
        )
    )


def splits(text: str, count: int = 40) -> list[list[str]]:
    """One character per step, all at once, and ``count`` seeded random splits."""
    rng = random.Random(text)
    out = [list(text), [text]]
    for _ in range(count):
        cuts = sorted({rng.randrange(1, max(2, len(text))) for _ in range(rng.randint(1, 8))})
        bounds = [0, *cuts, len(text)]
        out.append([text[a:b] for a, b in itertools.pairwise(bounds) if b > a])
    return out


def parse_checked(hf: HfParser, text: str, *, promptness: bool = True) -> Parsed:
    """The one-shot parse, after checking the delta contract under every split."""
    violations: list[Violation] = check_splits(hf, text, splits(text), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations[:5]))
    return hf.parse(text)


def calls(parsed: Parsed) -> list[tuple[str, Any]]:
    """Each call's name and arguments (the JSON value, or the text when it is not JSON)."""
    out = []
    for call in parsed.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        out.append((call.name, arguments))
    return out


def events(parsed: Parsed) -> list[str]:
    return [str(event.name) for event in parsed.events]
