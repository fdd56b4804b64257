"""The structural tag for the Hermes format (xgrammar 0.2.8's structural-tag JSON).

Like vLLM's own ``hermes`` builder (``tool_parsers/structural_tag_registry.py``),
every call is ``<tool_call>`` + a JSON object naming a declared tool + ``</tool_call>``,
and a pinned tool's arguments follow its parameter schema. Unlike it, one tag
accepts every spelling the parser reads cleanly, so that constraining the model
never forces a framing the parser does not expect (DESIGN §5):

* newline or compact framing, and any whitespace, between the markers and the
  object, inside the object's envelope, and between calls;
* either key order (``name`` first, as Qwen and Hermes 3 write it, or
  ``arguments`` first, as vLLM's ``tool_chat_template_hermes.jinja`` renders it);
* an unpinned tool's arguments are any JSON *object* (vLLM allows any JSON value,
  which the parser would report as ``malformed-arguments``).

By obligation: ``optional`` is free text with triggered calls; ``at_least_one``
is calls only, separated by whitespace; ``named`` is exactly one call of the named
tool; ``at_most_one`` stops after the first call. A fixed ``tags_with_separator``
separator cannot accept both the template's newline between calls and none at
all, so the calls-only forms are written with ``sequence`` and ``star``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolcall.strictness import Obligation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolcall.strictness import Plan, ToolPlan

__all__ = ["ANY_OBJECT", "call_tag", "structural_tag"]

START = "<tool_call>"
END = "</tool_call>"

_WS = "[ \\t\\n\\r]*"
#: The arguments schema of a tool whose schema is not pinned.
ANY_OBJECT: dict[str, Any] = {"type": "object"}

Format = dict[str, Any]


def structural_tag(plan: Plan) -> dict[str, Any] | None:
    """The structural tag for ``plan``, or ``None`` when no grammar applies."""
    if not plan.grammar or not plan.tools:
        return None
    tools = plan.tools
    if plan.obligation is Obligation.NAMED:
        tools = tuple(entry for entry in plan.tools if entry.tool.name == plan.named)
        if not tools:
            return None
    tag = call_tag(tools)
    whitespace = _regex(_WS)
    body: Format
    if plan.obligation is Obligation.OPTIONAL:
        body = {
            "type": "triggered_tags",
            "triggers": [START],
            "tags": [tag],
            "at_least_one": False,
            "stop_after_first": plan.at_most_one,
        }
        if plan.at_most_one:
            body = _sequence([body, whitespace])
    elif plan.obligation is Obligation.NAMED or plan.at_most_one:
        body = _sequence([whitespace, tag, whitespace])
    else:
        more = {"type": "star", "content": _sequence([whitespace, tag])}
        body = _sequence([whitespace, tag, more, whitespace])
    return {"type": "structural_tag", "format": body}


def call_tag(tools: Sequence[ToolPlan]) -> Format:
    """One ``<tool_call>...</tool_call>`` for any of ``tools``, in either key order."""
    names = [_string(entry.tool.name) for entry in tools]
    schemas = [_schema(entry) for entry in tools]
    name_first = _sequence(
        [
            _regex(f'\\{{{_WS}"name"{_WS}:{_WS}"'),
            _or(
                [
                    _sequence(
                        [
                            _const(name),
                            _regex(f'"{_WS},{_WS}"arguments"{_WS}:{_WS}'),
                            _json(schema),
                        ]
                    )
                    for name, schema in zip(names, schemas, strict=True)
                ]
            ),
            _regex(f"{_WS}\\}}"),
        ]
    )
    arguments_first = _sequence(
        [
            _regex(f'\\{{{_WS}"arguments"{_WS}:{_WS}'),
            _or(
                [
                    _sequence(
                        [
                            _json(schema),
                            _regex(f'{_WS},{_WS}"name"{_WS}:{_WS}"'),
                            _const(name),
                        ]
                    )
                    for name, schema in zip(names, schemas, strict=True)
                ]
            ),
            _regex(f'"{_WS}\\}}'),
        ]
    )
    return {
        "type": "tag",
        "begin": START,
        "content": _sequence([_regex(_WS), _or([name_first, arguments_first]), _regex(_WS)]),
        "end": END,
    }


def _schema(entry: ToolPlan) -> dict[str, Any] | bool:
    if entry.pinned and entry.tool.parameters is not None:
        return dict(entry.tool.parameters)
    return dict(ANY_OBJECT)


def _string(name: str) -> str:
    """The name as it stands inside a JSON string (escaped where JSON requires it)."""
    return json.dumps(name, ensure_ascii=False)[1:-1]


def _regex(pattern: str) -> Format:
    return {"type": "regex", "pattern": pattern}


def _const(value: str) -> Format:
    return {"type": "const_string", "value": value}


def _json(schema: dict[str, Any] | bool) -> Format:
    return {"type": "json_schema", "json_schema": schema}


def _sequence(elements: list[Format]) -> Format:
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


def _or(elements: list[Format]) -> Format:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": elements}
