"""The structural tag of every plan of the strictness resolver, for this template.

Every plan gets a tag from the hf engine (a pinned tool typed by its schema, an unpinned one
any ``<parameter=KEY>`` tag), and xgrammar compiles it against the real tokenizer.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from toolcall import Registry
from toolcall.parser import ParserContext
from toolcall.strictness import Plan, StrictLevel, resolve_plan
from toolcall.types import Request
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer


def tool(name: str, strict: bool = False) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": name,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


CHOICES: list[object] = ["auto", "required", {"type": "function", "function": {"name": "a"}}]
TOOLSETS = {"plain": [tool("a"), tool("b")], "one-strict": [tool("a", True), tool("b")]}


def plans() -> list[tuple[str, Request, Plan]]:
    parser_class = Registry.load({}).get("qwen3_coder")
    found = []
    for choice, parallel, level, toolset in itertools.product(
        CHOICES, (True, False), (None, *StrictLevel), TOOLSETS
    ):
        request = Request.from_openai(
            {"tools": TOOLSETS[toolset], "tool_choice": choice, "parallel_tool_calls": parallel}
        )
        plan = resolve_plan(
            request, strict_level=level, default_level=parser_class.default_strict_level
        )
        if plan.grammar:
            label = f"{choice if isinstance(choice, str) else 'named'}-{parallel}-{level}-{toolset}"
            found.append((label, request, plan))
    return found


PLANS = plans()
SESSION = GrammarSession()


def pins_every_tool(request: Request, plan: Plan) -> bool:
    del request
    return all(entry.pinned for entry in plan.tools)


@pytest.mark.parametrize(("label", "request_view", "plan"), PLANS, ids=[p[0] for p in PLANS])
def test_every_plan_gets_a_tag_or_says_why(label: str, request_view: Request, plan: Plan) -> None:
    parser = Registry.load({}).get("qwen3_coder")(ParserContext(request=request_view))
    tag = parser.structural_tag(plan)
    assert tag is not None, label
    assert SESSION.compile(tag, get_tokenizer("qwen3")) is not None


def test_both_kinds_of_plan_are_covered() -> None:
    kinds = {pins_every_tool(request, plan) for _, request, plan in PLANS}
    assert kinds == {True, False}
