"""The strictness resolver (DESIGN §5): when a grammar applies, and what it pins.

A pure function of the request, the server's ``--tool-strict-level`` (or the
parser's default), and ``VLLM_ENFORCE_STRICT_TOOL_CALLING``, returning a
:class:`Plan`. It follows vLLM 0.33's code (``resolve_tool_strictness`` and
``DelegatingParser._apply_structural_tag``), not its docs, where they differ.

The decision, step by step as vLLM takes it (``parser/abstract_parser.py:503-608``
and ``tool_parsers/structural_tag_registry.py:120-250``):

1. no tools, ``tool_choice`` ``"none"`` or ``null``: no grammar;
2. the level is ``--tool-strict-level``, else the parser's default; with
   ``parallel_tool_calls: false`` it is raised to at least ``FUNCTION`` (except
   for ``auto`` with a structured-output constraint);
3. ``auto`` at level ``AUTO`` with no tool ``strict: true``: no grammar;
4. ``VLLM_ENFORCE_STRICT_TOOL_CALLING`` off: no grammar;
5. otherwise a grammar, in which a tool's arguments are pinned to its schema when
   the level is ``PARAMETER`` or the tool says ``strict: true`` (``strict: false``
   and no ``strict`` are the same); a named choice allows only the named tool.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from toolcall.types import NamedChoice, Request, StrictLevel, Tool

__all__ = [
    "ENFORCE_ENV",
    "Obligation",
    "Plan",
    "ToolPlan",
    "enforce_from_env",
    "resolve_plan",
]

#: vLLM's switch for structural tags (``vllm/envs.py``), on by default.
ENFORCE_ENV = "VLLM_ENFORCE_STRICT_TOOL_CALLING"


class Obligation(enum.Enum):
    """What the request obliges the model to call."""

    NONE = "none"
    OPTIONAL = "optional"
    AT_LEAST_ONE = "at_least_one"
    NAMED = "named"


@dataclass(frozen=True)
class ToolPlan:
    """A tool the grammar allows; ``pinned`` when its argument schema is enforced."""

    tool: Tool
    pinned: bool


@dataclass(frozen=True)
class Plan:
    """The resolver's answer for one request.

    ``grammar`` says whether a structural tag applies at all. When it does,
    ``obligation`` and ``at_most_one`` say which calls it must allow, and
    ``tools`` lists the allowed tools with their pinning (empty without a
    grammar). ``named`` is the forced function for :attr:`Obligation.NAMED`.
    ``level`` is the strict level vLLM hands to the parser's
    ``get_structural_tag``: the server's or the parser's default, raised for
    ``parallel_tool_calls: false``.

    ``or_structured_output`` is set for ``tool_choice: "auto"`` when the request
    also carries a structured-output constraint (``response_format`` or
    ``structured_outputs``): vLLM then builds the tools grammar as if the choice
    were ``"required"`` (so ``obligation`` is :attr:`Obligation.AT_LEAST_ONE`)
    and accepts either it or the structured output (an xgrammar ``OrFormat``).
    The family's tag describes the tools half; vLLM adds the other.
    """

    grammar: bool
    obligation: Obligation
    level: StrictLevel
    tools: tuple[ToolPlan, ...] = ()
    named: str | None = None
    at_most_one: bool = False
    or_structured_output: bool = False


def enforce_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``VLLM_ENFORCE_STRICT_TOOL_CALLING``, read exactly as vLLM 0.33 reads it.

    Unset means on; otherwise only ``true`` and ``1`` (any case, no surrounding
    whitespace) are on, so ``""``, ``yes``, ``on`` and ``" 1"`` are off.
    """
    value = (environ if environ is not None else os.environ).get(ENFORCE_ENV, "True")
    return value.lower() in ("true", "1")


def resolve_plan(
    request: Request,
    *,
    strict_level: StrictLevel | None = None,
    default_level: StrictLevel = StrictLevel.AUTO,
    enforce: bool = True,
    structured_output: bool = False,
) -> Plan:
    """Decide whether vLLM 0.33 applies a structural tag to ``request``, and how.

    ``strict_level`` is the server's ``--tool-strict-level`` (``None`` when
    unset), ``default_level`` the parser's ``default_tool_strict_level``,
    ``enforce`` the value of ``VLLM_ENFORCE_STRICT_TOOL_CALLING`` (see
    :func:`enforce_from_env`), and ``structured_output`` whether the request
    carries a structured-output constraint. That constraint is assumed to be one
    xgrammar compiles; for one it cannot, vLLM applies no tool grammar to
    ``auto`` at all, which is decided before a parser is asked for a tag.

    Raises :class:`ValueError` for requests vLLM rejects: ``"required"``
    without tools, a named choice that names no declared tool, and (when a
    grammar applies) one that names several.
    """
    choice = request.tool_choice
    level = strict_level if strict_level is not None else default_level
    single_call = not request.parallel_tool_calls
    _validate(request)

    if choice == "none":
        return Plan(grammar=False, obligation=Obligation.NONE, level=level)
    if choice is None:
        # Parsed like auto by vLLM, but never constrained (and its calls dropped).
        return Plan(
            grammar=False, obligation=Obligation.OPTIONAL, level=level, at_most_one=single_call
        )

    is_auto = choice == "auto"
    named = choice.name if isinstance(choice, NamedChoice) else None
    or_structured_output = is_auto and structured_output
    if single_call and not or_structured_output:
        # The call count can only be limited with the call envelope in the grammar.
        level = max(level, StrictLevel.FUNCTION)
    if named is not None:
        obligation = Obligation.NAMED
    elif is_auto:
        obligation = Obligation.OPTIONAL
    else:
        obligation = Obligation.AT_LEAST_ONE
    plan = Plan(
        grammar=False, obligation=obligation, level=level, named=named, at_most_one=single_call
    )
    plain_auto = (
        is_auto
        and level == StrictLevel.AUTO
        and not any(tool.strict is True for tool in request.tools)
    )
    if not request.tools or plain_auto or not enforce:
        return plan

    allowed = request.tools
    if named is not None:
        # xgrammar's normalize_tool_choice hands the builder only the named tool.
        allowed = tuple(tool for tool in request.tools if tool.name == named)
        if len(allowed) != 1:
            msg = f"tool_choice names {named!r}, which {len(allowed)} tools declare"
            raise ValueError(msg)
    return replace(
        plan,
        grammar=True,
        obligation=Obligation.AT_LEAST_ONE if or_structured_output else obligation,
        tools=tuple(
            ToolPlan(tool, pinned=level >= StrictLevel.PARAMETER or tool.strict is True)
            for tool in allowed
        ),
        or_structured_output=or_structured_output,
    )


def _validate(request: Request) -> None:
    """Reject what vLLM's request validation rejects, whatever the grammar."""
    choice = request.tool_choice
    if choice == "required" and not request.tools:
        msg = 'tool_choice "required" needs at least one tool'
        raise ValueError(msg)
    if isinstance(choice, NamedChoice) and request.tool(choice.name) is None:
        msg = f"tool_choice names {choice.name!r}, which no declared tool is called"
        raise ValueError(msg)
