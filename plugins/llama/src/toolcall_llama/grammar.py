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
        return structural_tag(sequence([body, whitespace]) if single else body)
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


# -- Python calls (llama4_pythonic) -----------------------------------------------------------


def python_structural_tag(plan: Plan, *, start: str, end: str) -> dict[str, Any] | None:
    """The tag for ``llama4_pythonic`` under ``plan``: a list of calls
    ``[NAME(KEY=VALUE, ...), ...]``, each value a Python literal of its schema's type
    (:mod:`toolcall.pygrammar`), optionally between ``start`` and ``end``, where the calls
    may also come one per line."""
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
        return structural_tag(sequence([body, regex(_WS)]) if single else body)
    root = f"ws ({_ebnf(start)} {marked} ({_ebnf(end)})? | {bare_list}) ws"
    return structural_tag(grammar(calls.grammar(root)))


def _ebnf(text: str) -> str:
    return json.dumps(text)
