"""xlam's grammar: a plain ``auto`` request needs none; every plan that needs one gets the
engine's refusal with its reason, which vLLM answers with HTTP 400.

The format has no grammar because its calls have no markers: the list stands at the start
of the message (an opener with no literal text to trigger on) and runs to its end (no closer
for a call to end at inside the grammar).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolcall import ParserContext, Registry, Request, StrictLevel, Vocabulary
from toolcall.strictness import resolve_plan
from toolcall_hf_response_template.grammar import GrammarError

XLAM = Registry.load({}).get("xlam")
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}
STRICT = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
NAMED = {"type": "function", "function": {"name": "get_time"}}


def tag(level: StrictLevel | None = None, **body: Any) -> Any:
    request = Request.from_openai({"tools": [WEATHER, TIME], **body})
    plan = resolve_plan(request, strict_level=level)
    parser = XLAM(ParserContext(request=request, vocabulary=Vocabulary()))
    return plan, parser.structural_tag(plan)


def test_plain_auto_needs_no_grammar() -> None:
    plan, result = tag()
    assert not plan.grammar
    assert result is None


@pytest.mark.parametrize(
    ("level", "body"),
    [
        (None, {"tool_choice": "required"}),
        (None, {"tool_choice": NAMED}),
        (None, {"parallel_tool_calls": False}),
        (None, {"tools": [STRICT, TIME]}),
        (StrictLevel.FUNCTION, {}),
        (StrictLevel.PARAMETER, {"tool_choice": "required"}),
    ],
    ids=["required", "named", "single-call", "strict-tool", "function-level", "parameter-level"],
)
def test_every_grammar_plan_is_refused_with_the_reason(
    level: StrictLevel | None, body: dict[str, Any]
) -> None:
    with pytest.raises(GrammarError, match="the tool_calls field has no closer"):
        tag(level, **body)
