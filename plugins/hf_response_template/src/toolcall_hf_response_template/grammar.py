"""The structural tag a response template implies, for a strictness plan.

The tag follows the template's regions, in xgrammar 0.2.8's structural-tag format:

* **reasoning** first, if the template has a ``thinking`` field: optional, as a tag
  from its opener to its closer; required, from the first token, when the prompt
  leaves it open (a prefilled ``<think>``) or its opener is empty at the message's
  start (``^``);
* then **free text with calls** (``auto``: ``triggered_tags``, the calls triggered
  by the literal start of the tool field's opener), or **calls first**
  (``required``, a named tool: after reasoning and blanks, a call must come first;
  a named tool is the only one, called once);
* each **call** is the tool field's opener (the name written where the template
  reads it), its body, and its closer; ``parallel_tool_calls: false`` stops after
  the first call.

A call's body follows the field's ``content``: ``json`` is the JSON value the
transform reads (the name a ``const`` at its path, the arguments the tool's schema,
pinned, or any object); ``xml-inline`` is its tags, one per parameter (the key a
declared name and the value text or JSON of its type, pinned; any key and text,
not); ``text`` is a JSON object; unpinned ``kv-lines`` is any text.

What xgrammar cannot express raises :class:`GrammarError` with the reason (vLLM
answers it with HTTP 400): a JSON dialect (unquoted keys, delimited strings), a
delimiter that is no literal text (a look-ahead, an opener with no literal start),
a region read whole, pinned ``kv-lines``, a tool name the opener cannot write.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import regex

from toolcall.schema_types import value_type
from toolcall.strictness import Obligation
from toolcall_hf_response_template.patterns import group_end, group_span, looks_around
from toolcall_hf_response_template.stream import prompt_prefix
from toolcall_hf_response_template.tags import Tags
from toolcall_hf_response_template.template import Field, Template

if TYPE_CHECKING:
    from toolcall.strictness import Plan, ToolPlan
    from toolcall_hf_response_template.patterns import Delimiter

__all__ = ["GrammarError", "structural_tag"]

Format = dict[str, Any]

_WS: Final = "[ \\t\\n\\r]*"
_META: Final = frozenset(".^$*+?{}[]\\|()")
_ESCAPES: Final = {"n": "\n", "r": "\r", "t": "\t"}
#: Optional blanks at either edge of a delimiter: the text or JSON blanks around it
#: absorb them.
_EDGE_BLANKS: Final = regex.compile(r"\A(?:\\s[*?]|\\n\?)+|(?:\\s[*?]|\\n\?)+\Z")
#: Blanks inside a delimiter, read as none or one newline (what templates write).
_INNER_BLANKS: Final = {"\\s*": ["", "\n"], "\\s?": ["", "\n"], "\\n?": ["", "\n"], "\\s+": ["\n"]}


class GrammarError(ValueError):
    """The template (or this request's tools) cannot be turned into a grammar."""


def structural_tag(template: Template, plan: Plan, *, prompt: str | None = None) -> Format | None:
    """The structural tag for ``plan``, or ``None`` when no grammar applies; raises
    :class:`GrammarError` when one applies but the template cannot give it."""
    if not plan.grammar or not plan.tools:
        return None
    field = template.tools
    if field is None:
        msg = "the response_template has no tool_calls field"
        raise GrammarError(msg)
    tools = plan.tools
    if plan.obligation is Obligation.NAMED:
        tools = tuple(entry for entry in tools if entry.tool.name == plan.named)
    call = _call_tag(field, tools, at_most_one=plan.at_most_one)
    triggers = [call["begin"]]
    elements: list[Format] = []
    think = _thinking(template, prompt)
    if think is not None:
        elements.append(think)
    if plan.obligation is Obligation.OPTIONAL:
        elements.append(
            {
                "type": "triggered_tags",
                "triggers": triggers,
                "tags": [call],
                "at_least_one": False,
                "stop_after_first": plan.at_most_one,
            }
        )
    else:
        elements.append(_regex(_separator(template)))
        elements.append(
            {
                "type": "triggered_tags",
                "triggers": triggers,
                "tags": [call],
                "at_least_one": True,
                "stop_after_first": plan.at_most_one or plan.obligation is Obligation.NAMED,
            }
        )
    if plan.at_most_one or plan.obligation is Obligation.NAMED:
        elements.append(_regex(_WS))
    return {"type": "structural_tag", "format": _sequence(elements)}


# -- reasoning ---------------------------------------------------------------------------------


def _thinking(template: Template, prompt: str | None) -> Format | None:
    field = template.thinking
    if field is None:
        return None
    closers = _closers(field, "the thinking field")
    text: Format = {"type": "any_text"}
    if _open_at_start(template, prompt):
        return _tag("", text, closers)
    if field.open is None:
        return None
    openers = _literals(field.open, "the thinking field's opener", edge=True)
    if "" in openers:
        return _tag("", text, closers)  # it opens at the message's start (^)
    return {"type": "optional", "content": _or([_tag(o, text, closers) for o in openers])}


def _open_at_start(template: Template, prompt: str | None) -> bool:
    """Whether the prompt leaves the thinking region open (a prefilled opener)."""
    prefix = prompt_prefix(template, prompt)
    if not prefix:
        return False
    from toolcall_hf_response_template.regions import Close, Open, RegionScanner  # noqa: PLC0415

    open_field = None
    for event in RegionScanner(template).feed(prefix):
        if isinstance(event, Open) and event.text:
            open_field = event.field.name
        elif isinstance(event, Close):
            open_field = None
    return open_field == "thinking"


def _separator(template: Template) -> str:
    """What may stand before the first call besides blanks: the start anchor (gpt-oss
    writes ``<|start|>assistant`` between channels)."""
    anchors = _literals(template.start_anchor, "the start anchor", edge=True, strict=False)
    words = [_escape(a) for a in anchors if a]
    return f"(?:[ \\t\\n\\r]|{'|'.join(words)})*" if words else _WS


# -- calls -----------------------------------------------------------------------------------------


def _call_tag(field: Field, tools: Sequence[ToolPlan], *, at_most_one: bool) -> Format:
    assert field.open is not None
    assert field.shape is not None
    shape = field.shape
    closers = _closers(field, "the tool_calls field")
    if not closers:
        msg = "the tool_calls field has no closer, so a call cannot end inside the grammar"
        raise GrammarError(msg)
    begin, rest = _opener(field.open)
    bodies: list[Format] = []
    if shape.each and shape.name.kind == "content":
        lead = [_regex(_plain(rest))] if rest else []
        return _tag(begin, _sequence([*lead, *_each_body(field, tools, at_most_one)]), closers)
    for entry in tools:
        name = entry.tool.name
        head: list[Format] = []
        if shape.name.kind == "capture":
            head.append(_regex(_with_name(rest, shape.name.name, name, field)))
        elif rest:
            head.append(_regex(_plain(rest)))
        bodies.append(_sequence([*head, *_body(field, entry, at_most_one=at_most_one)]))
    return _tag(begin, _or(bodies), closers)


def _opener(delimiter: Delimiter) -> tuple[str, str]:
    """The literal start of an opener (the trigger) and the pattern after it."""
    if delimiter.literals is not None:
        if len(delimiter.literals) > 1:
            msg = f"the tool_calls opener {delimiter.source} is a choice of literals"
            raise GrammarError(msg)
        return delimiter.literals[0], ""
    pattern = delimiter.pattern.pattern
    literal: list[str] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and at + 1 < len(pattern) and not pattern[at + 1].isalnum():
            if at + 2 < len(pattern) and pattern[at + 2] in "*+?{":
                break
            literal.append(pattern[at + 1])
            at += 2
            continue
        if char in _META or (at + 1 < len(pattern) and pattern[at + 1] in "*+?{"):
            break
        literal.append(char)
        at += 1
    if not literal:
        msg = f"the tool_calls opener {delimiter.source} starts with no literal text to trigger on"
        raise GrammarError(msg)
    return "".join(literal), pattern[at:]


def _with_name(rest: str, group: str, name: str, field: Field) -> str:
    """The opener's pattern after its literal start, with the name written in."""
    span = group_span(rest, group)
    if span is None:
        msg = f"the name group {group!r} is in the opener's literal start"
        raise GrammarError(msg)
    body = rest[span[0] + len(f"(?P<{group}>") : span[1] - 1]
    if not regex.fullmatch(body, name, flags=regex.DOTALL):
        msg = f"the tool name {name!r} cannot be written by the opener {field.open.source}"  # type: ignore[union-attr]
        raise GrammarError(msg)
    return _plain(rest[: span[0]] + _escape(name) + rest[span[1] :])


def _escape(text: str) -> str:
    """``text`` as a literal in xgrammar's regex syntax."""
    out = []
    for char in text:
        if char in _META:
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        else:
            out.append(char)
    return "".join(out)


def _plain(pattern: str) -> str:
    """A template pattern as xgrammar's regex reads it: no named groups, no laziness, and
    no final look-ahead (what follows an opener is the body, which the grammar writes)."""
    pattern = _without_final_lookahead(pattern)
    if looks_around(pattern):
        msg = f"the pattern {pattern!r} uses an anchor or a look-around, which xgrammar lacks"
        raise GrammarError(msg)
    plain = regex.sub(r"\(\?P<\w+>", "(", pattern)
    return regex.sub(r"(?<!\\)([*+?}])\?", r"\1", plain)


def _without_final_lookahead(pattern: str) -> str:
    start = pattern.rfind("(?=")
    while start >= 0:
        span = group_end(pattern, start)
        if span == len(pattern):
            return pattern[:start]
        start = pattern.rfind("(?=", 0, start)
    return pattern


def _body(field: Field, entry: ToolPlan, *, at_most_one: bool) -> list[Format]:
    kind = field.content
    shape = field.shape
    assert shape is not None
    schema = _arguments_schema(entry)
    if kind == "json":
        if field.content_args.get("unquoted_keys") or field.content_args.get("string_delims"):
            msg = (
                "json content with unquoted_keys or string_delims is a dialect xgrammar "
                "cannot write (it writes standard JSON)"
            )
            raise GrammarError(msg)
        return [_regex(_WS), _json(_json_body(field, entry, schema, at_most_one)), _regex(_WS)]
    whole_arguments = (
        shape.arguments is not None
        and shape.arguments.kind == "content"
        and not shape.arguments.path
        and shape.name_at_open
        and not shape.each
    )
    if not whole_arguments:
        msg = (
            f"{kind} content whose transform reads the name or the arguments from inside "
            "it is read whole, and has no grammar"
        )
        raise GrammarError(msg)
    if kind == "text":
        return [_regex(_WS), _json(schema), _regex(_WS)]
    if kind == "kv-lines":
        if entry.pinned:
            msg = "kv-lines arguments cannot be pinned to a schema by a grammar"
            raise GrammarError(msg)
        return [{"type": "any_text"}]
    return [_tags(field, entry, schema)]


def _each_body(field: Field, tools: Sequence[ToolPlan], at_most_one: bool) -> list[Format]:
    """A ``json`` list of calls (``transform_each``): each element any of the tools."""
    if field.content_args.get("unquoted_keys") or field.content_args.get("string_delims"):
        msg = (
            "json content with unquoted_keys or string_delims is a dialect xgrammar "
            "cannot write (it writes standard JSON)"
        )
        raise GrammarError(msg)
    calls = [_call_schema(field, entry, _arguments_schema(entry)) for entry in tools]
    items: dict[str, Any] = {
        "type": "array",
        "items": calls[0] if len(calls) == 1 else {"anyOf": calls},
        "minItems": 1,
    }
    if at_most_one:
        items["maxItems"] = 1
    return [_regex(_WS), _json(items), _regex(_WS)]


def _arguments_schema(entry: ToolPlan) -> dict[str, Any]:
    if entry.pinned:
        parameters = entry.tool.parameters
        return dict(parameters) if parameters else {"type": "object", "properties": {}}
    return {"type": "object"}


def _json_body(
    field: Field, entry: ToolPlan, schema: dict[str, Any], at_most_one: bool
) -> dict[str, Any]:
    """The schema of a ``json`` region's value: the call's name and arguments at the
    paths the transform reads."""
    shape = field.shape
    assert shape is not None
    call = _call_schema(field, entry, schema)
    if not shape.each:
        return call
    items: dict[str, Any] = {"type": "array", "items": call, "minItems": 1}
    if at_most_one:
        items["maxItems"] = 1
    return items


def _call_schema(field: Field, entry: ToolPlan, schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of one call's JSON: the name and the arguments where the transform
    reads them."""
    shape = field.shape
    assert shape is not None
    assert shape.arguments is not None
    call: dict[str, Any] = {}
    if shape.arguments.kind == "content":
        call = _place(call, shape.arguments.path, schema)
    if shape.name.kind == "content":
        call = _place(call, shape.name.path, {"const": entry.tool.name})
    return call


def _place(schema: dict[str, Any], path: Sequence[str], value: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``value`` at ``path`` (objects along it, other members free)."""
    if not path:
        return value
    node = dict(schema) or {"type": "object", "properties": {}, "additionalProperties": True}
    properties = dict(node.get("properties", {}))
    properties[path[0]] = _place(properties.get(path[0], {}), path[1:], value)
    node["properties"] = properties
    node["required"] = sorted({*node.get("required", []), path[0]})
    return node


def _tags(field: Field, entry: ToolPlan, schema: dict[str, Any]) -> Format:
    """``xml-inline`` arguments: free text with one tag per parameter."""
    tags = Tags.split(field.content_args)
    if tags is None or field.content_args.get("merge_duplicates"):
        msg = (
            "the xml-inline tag_pattern is not HEAD(?P<key>..)MIDDLE(?P<value>.*?)TAIL, so its "
            "tags are read whole and have no grammar"
        )
        raise GrammarError(msg)
    begin, rest = _opener(tags.head)
    tail = _literals(_tail_delimiter(tags.tail), "the xml-inline tag's tail", edge=True)
    properties = schema.get("properties") if entry.pinned else None
    parser = field.content_args.get("value_parser") or {}
    json_values = parser.get("name") == "json" and not parser.get("args", {}).get("allow_non_json")
    shapes: list[Format] = []
    if isinstance(properties, Mapping) and not properties:
        return _regex(_WS)  # a pinned tool without parameters takes no tag
    if isinstance(properties, Mapping):
        for key, property_schema in properties.items():
            head = _with_key(rest, key)
            value = _value(property_schema, schema, json_values=json_values)
            shapes.append(_sequence([_regex(head), *value]))
    else:
        shapes.append(_sequence([_regex(_plain(rest)), {"type": "any_text"}]))
    closers = _closers(field, "the tool_calls field")
    return {
        "type": "triggered_tags",
        "triggers": [begin],
        "tags": [_tag(begin, _or(shapes), tail)],
        "at_least_one": False,
        "stop_after_first": False,
        "excludes": closers,
    }


def _tail_delimiter(tail: str) -> Delimiter:
    from toolcall_hf_response_template.patterns import Delimiter  # noqa: PLC0415

    return Delimiter(pattern=tail)


def _with_key(rest: str, key: str) -> str:
    span = group_span(rest, "key")
    if span is None:
        msg = "the xml-inline key group is in the tag's literal start"
        raise GrammarError(msg)
    body = rest[span[0] + len("(?P<key>") : span[1] - 1]
    if not regex.fullmatch(body, key, flags=regex.DOTALL):
        msg = f"the parameter name {key!r} cannot be written by the xml-inline tag_pattern"
        raise GrammarError(msg)
    return _plain(rest[: span[0]] + _escape(key) + rest[span[1] :])


def _value(
    property_schema: object, parameters: dict[str, Any], *, json_values: bool
) -> list[Format]:
    """A raw value of the parameter's type: text for a string (unless its parser wants
    JSON and takes nothing else), JSON otherwise."""
    if value_type(property_schema, parameters).streams and not json_values:
        return [{"type": "any_text"}]
    definitions = {k: parameters[k] for k in ("$defs", "definitions") if k in parameters}
    schema = {**definitions, **property_schema} if isinstance(property_schema, Mapping) else {}
    return [_regex(_WS), _json(schema), _regex(_WS)]


# -- delimiters --------------------------------------------------------------------------------


def _closers(field: Field, what: str) -> list[str]:
    if field.close is None:
        return []
    return _literals(field.close, f"{what}'s closer", edge=True)


def _literals(
    delimiter: Delimiter, what: str, *, edge: bool = False, strict: bool = True
) -> list[str]:
    """The literal texts a delimiter matches (optional blanks at its edges dropped,
    ``^`` read as the empty text at the message's start)."""
    if delimiter.literals is not None:
        return list(delimiter.literals)
    pattern = delimiter.pattern.pattern
    if edge:
        pattern = _EDGE_BLANKS.sub("", pattern)
    expanded = _expand(pattern)
    if expanded is None:
        if not strict:
            return []
        msg = f"{what} {delimiter.source} is not literal text xgrammar can match"
        raise GrammarError(msg)
    return expanded


def _expand(pattern: str) -> list[str] | None:
    """The strings a small pattern matches: literals, escapes, ``|``, ``(?:...)``,
    ``?`` and ``^``; ``None`` for anything else."""
    branches, at = _alternatives(pattern, 0)
    if branches is None or at != len(pattern):
        return None
    return list(dict.fromkeys(branches))


def _alternatives(pattern: str, at: int) -> tuple[list[str] | None, int]:
    out: list[str] = []
    while True:
        branch, at = _concatenation(pattern, at)
        if branch is None:
            return None, at
        out.extend(branch)
        if at < len(pattern) and pattern[at] == "|":
            at += 1
            continue
        return out, at


def _concatenation(pattern: str, at: int) -> tuple[list[str] | None, int]:
    strings = [""]
    while at < len(pattern) and pattern[at] not in "|)":
        if pattern.startswith("(?:", at):
            inner, at = _alternatives(pattern, at + 3)
            if inner is None or not pattern.startswith(")", at):
                return None, at
            at += 1
            atom = inner
        elif pattern[at : at + 3] in _INNER_BLANKS:
            atom = _INNER_BLANKS[pattern[at : at + 3]]
            at += 3
            strings = [s + a for s in strings for a in atom]
            if len(strings) > 16:
                return None, at
            continue
        elif pattern[at] == "\\" and at + 1 < len(pattern):
            char = pattern[at + 1]
            if char.isalnum() and char not in _ESCAPES:
                return None, at
            atom = [_ESCAPES.get(char, char)]
            at += 2
        elif pattern[at] == "^":
            atom = [""]
            at += 1
        elif pattern[at] in _META:
            return None, at
        else:
            atom = [pattern[at]]
            at += 1
        if at < len(pattern) and pattern[at] == "?":
            atom = ["", *atom]
            at += 1
        strings = [s + a for s in strings for a in atom]
        if len(strings) > 16:
            return None, at
    return strings, at


# -- formats -------------------------------------------------------------------------------------


def _tag(begin: str, content: Format, end: Sequence[str]) -> Format:
    ends = list(end)
    return {
        "type": "tag",
        "begin": begin,
        "content": content,
        "end": ends[0] if len(ends) == 1 else ends,
    }


def _regex(pattern: str) -> Format:
    return {"type": "regex", "pattern": pattern}


def _json(schema: Mapping[str, Any]) -> Format:
    return {"type": "json_schema", "json_schema": dict(schema), "any_order": True}


def _sequence(elements: list[Format]) -> Format:
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


def _or(elements: list[Format]) -> Format:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": elements}


def dumps(tag: Format) -> str:
    """The tag as JSON text (what vLLM's structured outputs take)."""
    return json.dumps(tag, ensure_ascii=False)
