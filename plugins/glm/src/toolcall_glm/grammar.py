"""The GLM structural tag: a plan (DESIGN §5) as xgrammar structural-tag JSON data.

It follows vLLM 0.33's ``glm_4_7`` builder (``tool_parsers/structural_tag_registry.py``)
and xgrammar 0.2.8's builtin of that name, with these differences:

* both framings are accepted: whitespace may stand between the name and the first
  key, between ``</arg_key>`` and ``<arg_value>``, after ``</arg_value>`` and
  before ``</tool_call>`` (GLM-4.5/4.6 write newlines there, GLM-4.7 nothing);
* ``required`` and named choices allow whitespace around and between calls (the
  GLM-4.5 template writes ``\\n`` before each ``<tool_call>``) but no other text;
* pinned string values also exclude the GLM markers (our parser reads a marker
  inside a value as a defect).

Tools whose schema is pinned get xgrammar's ``glm_xml`` JSON-schema style (keys in
the schema's order, required keys present, as vLLM and xgrammar do); the others
a "shallow" tag that still fixes the declared keys and each value's basic type.
Nothing here imports xgrammar: the data compiles with
``xgrammar.Grammar.from_structural_tag(json.dumps(tag))``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolcall.strictness import Obligation

if TYPE_CHECKING:
    from toolcall.strictness import Plan, ToolPlan

__all__ = ["EXCLUDES", "structural_tag", "tool_tag"]

CALL_START = "<tool_call>"
CALL_END = "</tool_call>"
#: What free text (and a string value) may not contain: vLLM's GLM excludes.
EXCLUDES = (
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
)
_WHITESPACE: dict[str, Any] = {"type": "regex", "pattern": r"[ \t\r\n]*"}


def _const(value: str) -> dict[str, Any]:
    return {"type": "const_string", "value": value}


def _sequence(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "sequence", "elements": list(elements)}


def _one_of(elements: list[dict[str, Any]]) -> dict[str, Any]:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": elements}


def _free_text() -> dict[str, Any]:
    return {"type": "any_text", "excludes": list(EXCLUDES)}


def _value_format(schema: object) -> dict[str, Any]:
    """A value's basic type, as vLLM's ``_glm_4_7_value_format`` pins it."""
    if not isinstance(schema, Mapping):
        return _free_text()
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _one_of(
            [
                _const(member if isinstance(member, str) else json.dumps(member))
                for member in schema["enum"]
            ]
        )
    kind = schema.get("type")
    if isinstance(kind, list):
        formats = [_value_format({"type": k}) for k in kind if k != "string"]
        if "string" in kind:
            formats.append(_free_text())
        return _one_of(formats) if formats else _free_text()
    if kind is None or kind == "string" or not isinstance(kind, str):
        return _free_text()
    return {"type": "json_schema", "json_schema": {"type": kind}}


def _plain_properties(parameters: object) -> Mapping[str, Any] | None:
    """``properties`` of a plain object schema (vLLM's ``_glm_4_7_plain_properties``)."""
    if not isinstance(parameters, Mapping):
        return None
    properties = parameters.get("properties")
    if (
        not isinstance(properties, Mapping)
        or not properties
        or parameters.get("additionalProperties") is True
        or any(
            key in parameters for key in ("$ref", "allOf", "anyOf", "oneOf", "patternProperties")
        )
    ):
        return None
    return properties


def _glm_xml(schema: object) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": schema if isinstance(schema, Mapping | bool) else True,
        "style": "glm_xml",
        "any_order": False,
    }


def _shallow_content(parameters: object) -> dict[str, Any]:
    properties = _plain_properties(parameters)
    if properties is None:
        return _glm_xml(True)
    pairs = [
        _sequence(
            _WHITESPACE,
            _const(f"<arg_key>{key}</arg_key>"),
            _WHITESPACE,
            _const("<arg_value>"),
            _value_format(schema),
            _const("</arg_value>"),
        )
        for key, schema in properties.items()
    ]
    return _sequence({"type": "star", "content": _one_of(pairs)}, _WHITESPACE)


def tool_tag(tool_plan: ToolPlan) -> dict[str, Any]:
    """One tool's call: ``<tool_call>NAME ... </tool_call>``."""
    tool = tool_plan.tool
    if tool_plan.pinned:
        content = _glm_xml(tool.parameters if tool.parameters is not None else True)
        content["excludes"] = [marker for marker in EXCLUDES if marker != "</arg_value>"]
    else:
        content = _shallow_content(tool.parameters)
    return {"type": "tag", "begin": CALL_START + tool.name, "content": content, "end": CALL_END}


def structural_tag(plan: Plan) -> dict[str, Any] | None:
    """The structural tag for ``plan``, or ``None`` when it applies no grammar."""
    if not plan.grammar or not plan.tools or plan.obligation is Obligation.NONE:
        return None
    tags = [tool_tag(tool_plan) for tool_plan in plan.tools]
    if plan.obligation is Obligation.OPTIONAL:
        calls: dict[str, Any] = {
            "type": "triggered_tags",
            "triggers": [CALL_START],
            "tags": tags,
            "excludes": [marker for marker in EXCLUDES if marker != CALL_START],
            "stop_after_first": plan.at_most_one,
        }
    else:
        call = _one_of(tags)
        if plan.obligation is Obligation.NAMED or plan.at_most_one:
            calls = _sequence(_WHITESPACE, call, _WHITESPACE)
        else:
            more = {"type": "star", "content": _sequence(_WHITESPACE, call)}
            calls = _sequence(_WHITESPACE, call, more, _WHITESPACE)
    return {"type": "structural_tag", "format": calls}
