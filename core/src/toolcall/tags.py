"""Building blocks of xgrammar structural tags, as plain JSON data (DESIGN §5).

A family's ``structural_tag(plan)`` returns xgrammar 0.2.8's structural-tag JSON;
only the vLLM bridge and the conformance kit compile it. These constructors write
the formats a family composes its tag from, so that a family module states its
grammar and nothing else::

    call = sequence(const('{"name": "'), or_([...]), regex(r"[ \\t\\n\\r]*\\}"))
    structural_tag(triggered_tags([START], [tag(START, call, END)]))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

__all__ = [
    "ANY_OBJECT",
    "WHITESPACE_PATTERN",
    "Format",
    "const",
    "grammar",
    "json_schema",
    "leaving",
    "optional",
    "or_",
    "regex",
    "sequence",
    "star",
    "structural_tag",
    "tag",
    "triggered_tags",
]

Format: TypeAlias = dict[str, Any]

#: JSON's whitespace, any amount (a regex).
WHITESPACE_PATTERN = "[ \\t\\n\\r]*"
#: The arguments schema of a tool whose schema is not pinned: any JSON object (the
#: parser reports any other value as malformed arguments).
ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


def structural_tag(body: Format) -> dict[str, Any]:
    return {"type": "structural_tag", "format": body}


def regex(pattern: str) -> Format:
    return {"type": "regex", "pattern": pattern}


def leaving(marker: str) -> str:
    """A regex for text that begins like ``marker`` (its first character) and departs
    from it before it is complete, by a character that is no ``<`` either (so that no
    other marker starts there). Where free text may begin with the marker's first
    character, this is the text that is no marker: a family's tag puts it beside the
    marker's own tag."""
    tail = ""
    for char in reversed(marker[1:]):
        escaped = "\\" + char if char in "|[](){}.*+?^$\\" else char
        other = "[^" + ("\\" + char if char in "]\\^-" else char) + "<]"
        tail = f"({escaped}{tail}|{other})" if tail else other
    first = marker[:1]
    return ("\\" + first if first in "|[](){}.*+?^$\\" else first) + tail


def const(value: str) -> Format:
    return {"type": "const_string", "value": value}


def json_schema(schema: Mapping[str, Any] | bool) -> Format:
    return {
        "type": "json_schema",
        "json_schema": schema if isinstance(schema, bool) else dict(schema),
    }


def grammar(ebnf: str) -> Format:
    """An EBNF grammar (xgrammar's dialect; its rule ``root`` is the start)."""
    return {"type": "grammar", "grammar": ebnf}


def sequence(elements: Sequence[Format]) -> Format:
    return (
        dict(elements[0])
        if len(elements) == 1
        else {"type": "sequence", "elements": list(elements)}
    )


def or_(elements: Sequence[Format]) -> Format:
    return dict(elements[0]) if len(elements) == 1 else {"type": "or", "elements": list(elements)}


def star(content: Format) -> Format:
    return {"type": "star", "content": content}


def optional(content: Format) -> Format:
    return {"type": "optional", "content": content}


def tag(begin: str, content: Format, end: str | Sequence[str] = "") -> Format:
    """``begin``, ``content``, then ``end`` (or any of several ends; when the content is
    unbounded, xgrammar wants one of them non-empty)."""
    return {
        "type": "tag",
        "begin": begin,
        "content": content,
        "end": end if isinstance(end, str) else list(end),
    }


def triggered_tags(
    triggers: Sequence[str],
    tags: Sequence[Format],
    *,
    at_least_one: bool = False,
    stop_after_first: bool = False,
) -> Format:
    """Free text in which each trigger starts one of ``tags`` (whose ``begin`` starts
    with it)."""
    return {
        "type": "triggered_tags",
        "triggers": list(triggers),
        "tags": list(tags),
        "at_least_one": at_least_one,
        "stop_after_first": stop_after_first,
    }
