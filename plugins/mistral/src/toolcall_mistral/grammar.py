"""The Mistral structural tag: a plan (DESIGN §5) as xgrammar structural-tag JSON data.

xgrammar has no builtin for Mistral and vLLM 0.33 constrains Mistral models with
mistral-common's own Lark grammar (``GrammarFactory``, llguidance). This is the same
contract as an xgrammar tag, for both generations of the format:

* v11+ (the tokenizer has ``[ARGS]``): ``[TOOL_CALLS]`` + whitespace + a declared name
  + an optional ``[CALL_ID]`` and nine-character id + ``[ARGS]`` (optional, the
  fallback) + the arguments (the tool's schema when pinned, else any object);
* before v11 (``[TOOL_CALLS]`` but no ``[ARGS]``): ``[TOOL_CALLS]`` + whitespace + a
  JSON list of call objects (one when the plan allows at most one call) or a single
  object; a call object holds ``"name"``, ``"arguments"`` and optionally Mistral's
  ``"id"``, in any order;
* a vocabulary that says neither (no tokenizer, or one without the markers as tokens):
  either form.

``auto`` is free text in which ``[TOOL_CALLS]`` starts a call (text may follow a
call, as the parser reads it); ``required`` and named choices start with a call;
``parallel_tool_calls: false`` stops after the first (vLLM also sets
``stop_after_first`` itself). Free text may not hold ``[ARGS]`` or ``[CALL_ID]``
outside a call. Whitespace is flexible wherever the parser treats it as framing.
The markers are text here: xgrammar matches a control token by its string, which
is how vLLM's xgrammar backend sees a mistral-common vocabulary.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolcall.strictness import Obligation

if TYPE_CHECKING:
    from toolcall.strictness import Plan, ToolPlan
    from toolcall.types import Vocabulary

__all__ = ["structural_tag"]

TOOL_CALLS = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
_WS = "[ \\t\\r\\n]*"
#: Between a name and its arguments: an optional id after [CALL_ID], then [ARGS].
_HEADER_END = f"({_WS}\\[CALL_ID\\]{_WS}[A-Za-z0-9]{{9}})?{_WS}(\\[ARGS\\])?{_WS}"


def structural_tag(plan: Plan, vocabulary: Vocabulary) -> dict[str, Any] | None:
    """The tag for ``plan``, or ``None`` when the plan applies no grammar."""
    if not plan.grammar or not plan.tools:
        return None
    v11 = vocabulary.id_of(ARGS) is not None
    pre_v11 = not v11 and vocabulary.id_of(TOOL_CALLS) is not None
    element = _one_of([_object(tool_plan) for tool_plan in plan.tools])
    forms: list[dict[str, Any]] = []
    if not pre_v11:
        forms += [_v11_call(tool_plan) for tool_plan in plan.tools]
    if not v11:
        forms.append(_sequence(_regex(_WS), element))
    tags = [{"type": "tag", "begin": TOOL_CALLS, "content": _one_of(forms), "end": ""}]
    if not v11:
        # The list ends with "]": its own tag (xgrammar needs a non-empty end after content
        # that repeats, and a list may not end elsewhere).
        tags.append(
            {
                "type": "tag",
                "begin": TOOL_CALLS,
                "content": _list(element, single=plan.at_most_one),
                "end": "]",
            }
        )
    return {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": [TOOL_CALLS],
            "tags": tags,
            "at_least_one": plan.obligation is not Obligation.OPTIONAL,
            "stop_after_first": plan.at_most_one,
            "excludes": [ARGS, CALL_ID],
        },
    }


def _v11_call(tool_plan: ToolPlan) -> dict[str, Any]:
    return _sequence(
        _regex(_WS),
        _const(tool_plan.tool.name),
        _regex(_HEADER_END),
        _arguments(tool_plan),
    )


def _object(tool_plan: ToolPlan) -> dict[str, Any]:
    """One call object: ``name`` and ``arguments``, optionally ``id``, in any order."""
    members = {
        "name": _sequence(_regex(f'"name"{_WS}:{_WS}'), _const(json.dumps(tool_plan.tool.name))),
        "arguments": _sequence(_regex(f'"arguments"{_WS}:{_WS}'), _arguments(tool_plan)),
        "id": _regex(f'"id"{_WS}:{_WS}"[A-Za-z0-9]{{9}}"'),
    }
    orders = [
        *itertools.permutations(("name", "arguments")),
        *itertools.permutations(("name", "arguments", "id")),
    ]
    variants = []
    for order in orders:
        elements: list[dict[str, Any]] = [_regex(f"\\{{{_WS}")]
        for position, key in enumerate(order):
            if position:
                elements.append(_regex(f"{_WS},{_WS}"))
            elements.append(members[key])
        elements.append(_regex(f"{_WS}\\}}"))
        variants.append(_sequence(*elements))
    return _one_of(variants)


def _list(element: dict[str, Any], *, single: bool) -> dict[str, Any]:
    elements = [_regex(f"{_WS}\\[{_WS}"), element]
    if not single:
        elements.append({"type": "star", "content": _sequence(_regex(f"{_WS},{_WS}"), element)})
    elements.append(_regex(_WS))
    return _sequence(*elements)  # the closing "]" is the tag's end


def _arguments(tool_plan: ToolPlan) -> dict[str, Any]:
    schema: Mapping[str, Any] | None = tool_plan.tool.parameters if tool_plan.pinned else None
    return {"type": "json_schema", "json_schema": dict(schema or {"type": "object"})}


def _const(value: str) -> dict[str, Any]:
    return {"type": "const_string", "value": value}


def _regex(pattern: str) -> dict[str, Any]:
    return {"type": "regex", "pattern": pattern}


def _sequence(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "sequence", "elements": list(elements)}


def _one_of(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": elements}
