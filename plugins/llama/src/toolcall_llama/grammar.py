"""Structural tags for Llama's tool calls (xgrammar 0.2.8 structural-tag JSON).

xgrammar's builtin ``llama`` tag (what vLLM's ``llama3_json`` uses) pins one
spelling: ``{"name": "NAME", "parameters": ...}``, triggered by ``{"name": ``. The
parser reads more than that, and a grammar must accept everything the parser reads
cleanly (DESIGN §5), so these tags accept, for each declared tool:

* the call object with ``parameters`` or ``arguments``, in either order, with an
  optional leading ``"type": "function"`` member, and any JSON whitespace in its
  envelope; a pinned tool's arguments follow its schema, an unpinned tool's are any
  JSON object;
* runs of calls separated by ``;``, whitespace, or nothing;
* the run's markers: ``<|python_tag|>`` before it (Llama 3), or ``<|python_start|>``
  before it and ``<|python_end|>`` after it (Llama 4), both optional.

By obligation: ``optional`` (auto) is free text in which a run marker, or
``{"name": "NAME"`` or ``{"type": "function", "name": "NAME"`` for a declared
``NAME``, starts a call (later calls of a run, after a ``;``, start again with their
opening; a call in another key order or spacing is free text, and so is JSON content
naming anything else, which the parser reads as content); ``at_least_one``
(required) is calls only; ``named`` is exactly one call of the named tool;
``at_most_one`` (``parallel_tool_calls: false``) allows one call.

Under auto the start of the output is read as the parser reads it: there a call
object is a call whatever its name, and so is every call object of the run it begins
(DESIGN §6), so a ``{`` at the start (or in a ``[`` list there) is either a call of
a declared tool, in any key order and spacing the parser reads, its arguments pinned,
or an object the parser reads as content (its first member that no call has before
its name, or its close with no name, frees the text after it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolcall.pygrammar import PythonCalls
from toolcall.strictness import Obligation
from toolcall.tags import (
    ANY_OBJECT,
    WHITESPACE_PATTERN,
    Format,
    const,
    grammar,
    json_schema,
    leaving,
    optional,
    or_,
    regex,
    sequence,
    star,
    structural_tag,
    tag,
    triggered_tags,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolcall.strictness import Plan, ToolPlan

__all__ = ["json_structural_tag", "python_structural_tag"]

_WS = WHITESPACE_PATTERN
_NAME_FIRST = '{"name": "'
_TYPE_FIRST = '{"type": "function", "name": "'
_KEY = '"(parameters|arguments)"'
_TYPE_MEMBER = f'("type"{_WS}:{_WS}"function"{_WS},{_WS})?'


def json_structural_tag(plan: Plan, *, start: str, end: str) -> dict[str, Any] | None:
    """The tag for ``plan``, or ``None`` when no grammar applies. ``start`` and ``end``
    are the run's markers in the model's vocabulary (``end`` may be empty)."""
    tools = _allowed(plan)
    if not tools:
        return None
    single = plan.obligation is Obligation.NAMED or plan.at_most_one
    whitespace = regex(_WS)
    if plan.obligation is Obligation.OPTIONAL:
        # Free text in which a marker, or the opening of a call naming a declared tool,
        # starts one call (the next call of a run starts again with its opening:
        # xgrammar's tags must be bounded). The openings name the tool, so that JSON
        # content with another name (which the parser reads as content) stays free.
        marker_call = tag(start, _marked_run(tools, end, single=True))
        openings = [
            tag(prefix + _string(entry.tool.name) + '"', _after_name(entry))
            for entry in tools
            for prefix in (_NAME_FIRST, _TYPE_FIRST)
        ]
        body = triggered_tags(
            [start, *(opening["begin"] for opening in openings)],
            [marker_call, *openings],
            stop_after_first=single,
        )
        free = sequence([body, whitespace]) if single else body
        return structural_tag(_unmarked_start(tools, free, marker_call, start, single=single))
    run = _run(tools, single=single)
    marked = sequence([const(start), _marked_run(tools, end, single=single)])
    return structural_tag(sequence([whitespace, or_([marked, run]), whitespace]))


def _allowed(plan: Plan) -> tuple[ToolPlan, ...]:
    """The tools a call may name under ``plan`` (none when no grammar applies). The
    resolver lists only the named tool for a named choice."""
    return plan.tools if plan.grammar else ()


def _marked_run(tools: Sequence[ToolPlan], end: str, *, single: bool) -> Format:
    """What follows a start marker: a run of calls, then the end marker if any."""
    elements = [regex(_WS), _run(tools, single=single)]
    if end:
        elements += [regex(_WS), optional(const(end))]
    return sequence(elements)


def _run(tools: Sequence[ToolPlan], *, single: bool) -> Format:
    call = or_([_call(entry) for entry in tools])
    if single:
        return call
    return sequence([call, star(sequence([regex(f"{_WS}(;{_WS})?"), call]))])


def _call(entry: ToolPlan) -> Format:
    """One call object for ``entry``'s tool, in any order the parser reads cleanly."""
    name = _string(entry.tool.name)
    arguments = json_schema(_schema(entry))
    name_first = sequence(
        [
            regex(f'\\{{{_WS}{_TYPE_MEMBER}"name"{_WS}:{_WS}"'),
            const(name),
            regex(f'"{_WS},{_WS}{_KEY}{_WS}:{_WS}'),
            arguments,
            regex(f"{_WS}\\}}"),
        ]
    )
    arguments_first = sequence(
        [
            regex(f"\\{{{_WS}{_TYPE_MEMBER}{_KEY}{_WS}:{_WS}"),
            arguments,
            regex(f'{_WS},{_WS}"name"{_WS}:{_WS}"'),
            const(name),
            regex(f'"{_WS}\\}}'),
        ]
    )
    return or_([name_first, arguments_first])


def _after_name(entry: ToolPlan) -> Format:
    """The rest of a name-first call after its name's closing quote."""
    return sequence(
        [
            regex(f"{_WS},{_WS}{_KEY}{_WS}:{_WS}"),
            json_schema(_schema(entry)),
            regex(f"{_WS}\\}}"),
        ]
    )


def _schema(entry: ToolPlan) -> dict[str, Any]:
    if entry.pinned and entry.tool.parameters is not None:
        return dict(entry.tool.parameters)
    return dict(ANY_OBJECT)


def _string(name: str) -> str:
    """The name as it stands inside a JSON string."""
    return json.dumps(name, ensure_ascii=False)[1:-1]


# -- an output that begins with a call, without a marker --------------------------------------

#: The members a call without a marker may have before its name (the parser's head keys).
_HEAD_WORDS = ("type", "function", "parameters", "arguments")
_CALL_WORDS = ("name", *_HEAD_WORDS)
#: Any JSON value but an object: a ``function`` member that is no envelope.
_NOT_OBJECT: dict[str, Any] = {"type": ["string", "number", "boolean", "null", "array"]}
_SPACE = " \\t\\n\\r"
_SEPARATOR = f"{_WS}(;{_WS})?"
_OPEN = f"\\{{{_WS}"
_COMMA = f"{_WS},{_WS}"
_NAME_KEY = f'"name"{_WS}:{_WS}'


def _unmarked_start(
    tools: Sequence[ToolPlan], free: Format, marker_call: Format, start: str, *, single: bool
) -> Format:
    """The whole output under auto. The parser reads a call object at the start of the
    output (after whitespace) as a call whatever its name, and so every call object of the
    run it begins (DESIGN §6), while the free text's openings name declared tools only (JSON
    content naming anything else stays free there). So a ``{`` at the start, and in such a
    run, is read here as the parser reads it: a call object, whose name must be declared and
    whose arguments follow their schema; or an object the parser reads as content (a member
    no call has before its name comes first, or it closes with no name), after which the
    text is free. Anything else at the start is free text."""
    call = _unmarked_call(tools)
    after_marker = regex(_WS) if single else free
    content = _content_object(tools, free)
    leave = leaving(start)

    def text_after(first: str, gap: str) -> list[Format]:
        """Free text from the first character that no call of the run can begin with."""
        return [
            sequence([regex(f"{gap}[^{first}<{_SPACE}]"), free]),
            sequence([regex(gap + leave), free]),
            sequence([regex(gap), marker_call, after_marker]),
            sequence([regex(gap), content]),
        ]

    if single:
        after_call: Format = regex(_WS)
    else:
        run_end = or_(
            [
                regex(_SEPARATOR),  # the output ends (a trailing ";" is framing)
                *text_after(";{", _WS),
                *text_after("{", f"{_WS};{_WS}"),
            ]
        )
        after_call = sequence([star(sequence([regex(_SEPARATOR), call])), run_end])
    listed = sequence(
        [call, *([] if single else [star(sequence([regex(_COMMA), call]))]), regex(f"{_WS}\\]")]
    )
    in_list = or_(
        [
            sequence([listed, after_call]),
            content,
            sequence([regex(f"[^{{{_SPACE}]"), free]),
            regex(_WS),
        ]
    )
    return or_(
        [
            sequence([regex(_WS), call, after_call]),
            sequence([regex(f"{_WS}\\[{_WS}"), in_list]),
            *text_after("{\\[", _WS),
            regex(_WS),
        ]
    )


def _unmarked_call(tools: Sequence[ToolPlan]) -> Format:
    """A call object as the parser reads one without a marker, naming a declared tool:
    ``type`` (and a ``function`` that is no object) may come before the name, the
    arguments before or after it, or the call inside ``{"function": ...}``."""
    before = star(sequence([_member("type", "function"), regex(_COMMA)]))
    types = star(sequence([_member("type"), regex(_COMMA)]))
    name_first = sequence(
        [
            regex(_OPEN),
            before,
            regex(_NAME_KEY + '"'),
            or_([sequence([const(_string(e.tool.name) + '"'), _after_name(e)]) for e in tools]),
        ]
    )
    arguments_first = [
        sequence(
            [
                regex(_OPEN),
                before,
                regex(f"{_KEY}{_WS}:{_WS}"),
                json_schema(_schema(entry)),
                regex(_COMMA),
                before,
                regex(_NAME_KEY + '"'),
                const(_string(entry.tool.name) + '"'),
                regex(f"{_WS}\\}}"),
            ]
        )
        for entry in tools
    ]
    envelope = sequence(
        [
            regex(_OPEN),
            types,
            regex(f'"function"{_WS}:{_WS}'),
            or_([_call(entry) for entry in tools]),
            regex(f"{_WS}(\\}})?"),
        ]
    )
    return or_([name_first, *arguments_first, envelope])


def _content_object(tools: Sequence[ToolPlan], free: Format) -> Format:
    """An object at a run's start that the parser reads as content, then free text: its
    members before the first one a call cannot have (another key, a name that is no
    string, a key in single quotes) are head members, or it closes with no name. A call
    in Python literal syntax (``{'name': 'f', ...}``, a recovery) must name a declared
    tool; its arguments are free text, as under auto everywhere."""
    head = star(sequence([_member(*_HEAD_WORDS), regex(_COMMA)]))
    stop = "|".join(
        [
            _other_key(_CALL_WORDS, '"'),
            _other_key(_CALL_WORDS, "'"),
            f"{_NAME_KEY}[^\"'{_SPACE}]",
            f"[^\"'{_SPACE}]",
        ]
    )
    names = [
        const(quote + name + quote)
        for name in (_string(entry.tool.name) for entry in tools)
        for quote in ("'", '"')
        if "'" not in name and "\\" not in name
    ]
    python = sequence([regex(f"'name'{_WS}:{_WS}"), or_(names), free]) if names else None
    last = sequence(
        [_member(*_HEAD_WORDS), regex(_WS), optional(sequence([regex(f"[^,{_SPACE}]"), free]))]
    )
    ending = [sequence([regex(f"({stop})"), free]), last]
    if python is not None:
        ending.append(python)
    return sequence([regex(_OPEN), head, or_(ending)])


def _member(*keys: str) -> Format:
    """A member under one of ``keys`` with any JSON value (``function``: no object)."""
    plain = [key for key in keys if key != "function"]
    members = []
    if plain:
        members.append(sequence([regex(f'"({"|".join(plain)})"{_WS}:{_WS}'), json_schema(True)]))
    if "function" in keys:
        members.append(sequence([regex(f'"function"{_WS}:{_WS}'), json_schema(_NOT_OBJECT)]))
    return or_(members)


def _other_key(words: Sequence[str], quote: str) -> str:
    """A regex for a key in ``quote`` that is none of ``words`` (escapes are not decoded:
    a key with a backslash before it differs from every word counts as another key)."""
    rest = f"([^{quote}\\\\]|\\\\.)*{quote}"

    def node(prefix: str) -> str:
        children = sorted({w[len(prefix)] for w in words if w.startswith(prefix) and w != prefix})
        branches = [] if prefix in words else [quote]
        branches.append(f"([^{''.join(children)}{quote}\\\\]|\\\\.){rest}")
        branches += [char + node(prefix + char) for char in children]
        return "(" + "|".join(branches) + ")"

    return quote + node("")


# -- Python calls (llama4_pythonic) -----------------------------------------------------------


def python_structural_tag(plan: Plan, *, start: str, end: str) -> dict[str, Any] | None:
    """The tag for ``llama4_pythonic`` under ``plan``: a list of calls
    ``[NAME(KEY=VALUE, ...), ...]``, each value a Python literal of its schema's type
    (:mod:`toolcall.pygrammar`), optionally between ``start`` and ``end``, where the calls
    may also come one per line. Under auto, a list at the start of the output (or after a
    list there) is calls whatever its first name to the parser, so there it must be
    declared tools' calls or a ``[`` the parser reads as content."""
    tools = _allowed(plan)
    if not tools:
        return None
    calls = PythonCalls(tools)
    single = plan.obligation is Obligation.NAMED or plan.at_most_one
    any_call = calls.call()
    more = "" if single else f' (ws "," ws {any_call})*'
    bare_list = f'"[" ws {any_call}{more} ws "]"'
    lines = any_call if single else f"{any_call} (ws {any_call})*"
    marked = f"ws ({bare_list} | {lines}) ws"
    if plan.obligation is Obligation.OPTIONAL:
        # A marker, or a list's opening naming a declared tool, starts the calls: other
        # brackets in the text (which the parser reads as content) stay free.
        marker_tag = tag(start, grammar(calls.grammar(marked)), [end, ""])
        openings = [
            tag(
                "[" + name + "(",
                grammar(calls.grammar(f'ws {calls.arguments(name)} ws ")"{more} ws')),
                "]",
            )
            for name in calls.names
        ]
        body = triggered_tags(
            [start, *(opening["begin"] for opening in openings)],
            [marker_tag, *openings],
            stop_after_first=single,
        )
        free = sequence([body, regex(_WS)]) if single else body
        # At the start of the output (and after a list there) the parser reads a list
        # of calls whatever its first name: there the list must be calls of declared
        # tools, or a "[" the parser reads as content (its first element no call).
        lists = bare_list if single else f"{bare_list} (ws {bare_list})*"
        listed = grammar(calls.grammar(f"ws {lists}"))
        after_marker = regex(_WS) if single else free
        leave = leaving(start)

        def text_after(gap: str) -> list[Format]:
            return [
                sequence([regex(f"{gap}[^\\[<{_PY_SPACE}]"), free]),
                sequence([regex(gap + leave), free]),
                sequence([regex(gap), marker_tag, after_marker]),
                sequence([regex(f"{gap}\\[{_PY_WS}{_NOT_A_CALL}"), free]),
            ]

        after_list = regex(_WS) if single else or_([regex(_PY_WS), *text_after(_PY_WS)])
        start_of_output = or_([sequence([listed, after_list]), *text_after(_PY_WS), regex(_PY_WS)])
        return structural_tag(start_of_output)
    root = f"ws ({_ebnf(start)} {marked} ({_ebnf(end)})? | {bare_list}) ws"
    return structural_tag(grammar(calls.grammar(root)))


_PY_SPACE = " \\t\\n\\r\\f"
_PY_WS = f"[{_PY_SPACE}]*"
_NAME_CHAR = "A-Za-z0-9_.\\-"
#: After a "[", what the parser reads as no call: no name first, or a name that no "("
#: follows (a character that continues no name, or any but "(" after whitespace).
_NOT_A_CALL = (
    f"([^A-Za-z_{_PY_SPACE}]"
    f"|[A-Za-z_][{_NAME_CHAR}]*[^({_NAME_CHAR}{_PY_SPACE}]"
    f"|[A-Za-z_][{_NAME_CHAR}]*[{_PY_SPACE}]+[^({_PY_SPACE}])"
)


def _ebnf(text: str) -> str:
    return json.dumps(text)
