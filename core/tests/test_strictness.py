"""The strictness resolver against vLLM 0.33's decision table.

Every expected value here is read off vLLM 0.33's code
(``vllm/parser/abstract_parser.py``'s ``_apply_structural_tag`` and
``vllm/tool_parsers/structural_tag_registry.py``: its decision table, and where it differs
from vLLM's docs) and vLLM's ``envs.py``; none comes from
running the resolver. test_strictness_vllm.py checks the same against vLLM's
own functions over the whole grid.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall.strictness import Obligation, Plan, enforce_from_env, resolve_plan
from toolcall.types import NamedChoice, Request, StrictLevel, Tool, ToolChoice

AUTO, FUNCTION, PARAMETER = StrictLevel.AUTO, StrictLevel.FUNCTION, StrictLevel.PARAMETER

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PLAIN = Tool("plain", SCHEMA)  # no "strict"
STRICT = Tool("strict", SCHEMA, strict=True)
LOOSE = Tool("loose", SCHEMA, strict=False)


def request(*tools: Tool, choice: ToolChoice = "auto", parallel: bool = True) -> Request:
    return Request(tools=tools, tool_choice=choice, parallel_tool_calls=parallel)


def pinning(plan: Plan) -> dict[str, bool]:
    return {entry.tool.name: entry.pinned for entry in plan.tools}


# (request, resolve_plan keyword arguments, grammar, level, pinning of the allowed tools)
TABLE: list[tuple[str, Request, dict[str, Any], bool, StrictLevel, dict[str, bool]]] = [
    # §4.3 row 1: auto, no strict tool, level AUTO: no grammar.
    ("auto-plain", request(PLAIN, LOOSE), {}, False, AUTO, {}),
    # §4.4 gap 7: strict false counts as no strict at all.
    ("auto-strict-false-only", request(LOOSE), {}, False, AUTO, {}),
    # §4.4 gap 2: parallel_tool_calls=false lifts the level to FUNCTION: a grammar.
    (
        "auto-single-call",
        request(PLAIN, LOOSE, parallel=False),
        {},
        True,
        FUNCTION,
        {"plain": False, "loose": False},
    ),
    # §4.3 row 2: auto with a strict tool at AUTO: grammar, only the strict tool pinned.
    (
        "auto-one-strict",
        request(STRICT, PLAIN, LOOSE),
        {},
        True,
        AUTO,
        {"strict": True, "plain": False, "loose": False},
    ),
    # §4.3 row 3: auto at FUNCTION: grammar, strict tools only.
    (
        "auto-function",
        request(STRICT, PLAIN),
        {"strict_level": FUNCTION},
        True,
        FUNCTION,
        {"strict": True, "plain": False},
    ),
    (
        "auto-function-none-strict",
        request(PLAIN),
        {"strict_level": FUNCTION},
        True,
        FUNCTION,
        {"plain": False},
    ),
    # §4.3 row 4: auto at PARAMETER: every tool pinned, strict false included.
    (
        "auto-parameter",
        request(PLAIN, LOOSE),
        {"strict_level": PARAMETER},
        True,
        PARAMETER,
        {"plain": True, "loose": True},
    ),
    # §4.4 gap 1: the level defaults per parser (GLM: FUNCTION) ...
    (
        "auto-parser-default",
        request(PLAIN),
        {"default_level": FUNCTION},
        True,
        FUNCTION,
        {"plain": False},
    ),
    # ... and an explicit server level replaces it, also downwards.
    (
        "auto-cli-beats-default",
        request(PLAIN),
        {"strict_level": AUTO, "default_level": FUNCTION},
        False,
        AUTO,
        {},
    ),
    # §4.3 row 5: required at AUTO or FUNCTION: grammar, strict tools only.
    (
        "required-auto",
        request(STRICT, PLAIN, choice="required"),
        {},
        True,
        AUTO,
        {"strict": True, "plain": False},
    ),
    (
        "required-function",
        request(PLAIN, choice="required"),
        {"strict_level": FUNCTION},
        True,
        FUNCTION,
        {"plain": False},
    ),
    # §4.3 row 6: required at PARAMETER: all pinned.
    (
        "required-parameter",
        request(PLAIN, LOOSE, choice="required"),
        {"strict_level": PARAMETER},
        True,
        PARAMETER,
        {"plain": True, "loose": True},
    ),
    (
        "required-single-call",
        request(PLAIN, choice="required", parallel=False),
        {},
        True,
        FUNCTION,
        {"plain": False},
    ),
    # Named: a grammar whatever the level; only the named tool is allowed.
    (
        "named-auto",
        request(STRICT, PLAIN, choice=NamedChoice("plain")),
        {},
        True,
        AUTO,
        {"plain": False},
    ),
    (
        "named-strict",
        request(STRICT, PLAIN, choice=NamedChoice("strict")),
        {},
        True,
        AUTO,
        {"strict": True},
    ),
    (
        "named-parameter",
        request(STRICT, LOOSE, choice=NamedChoice("loose")),
        {"strict_level": PARAMETER},
        True,
        PARAMETER,
        {"loose": True},
    ),
    # §4.3 last row and §4.4 gap 4: none and null never get a grammar.
    ("none", request(STRICT, choice="none"), {"strict_level": PARAMETER}, False, PARAMETER, {}),
    ("null", request(STRICT, choice=None), {"strict_level": PARAMETER}, False, PARAMETER, {}),
    # §4.4 gap 5: VLLM_ENFORCE_STRICT_TOOL_CALLING off: never a grammar.
    (
        "enforce-off-required",
        request(STRICT, choice="required"),
        {"strict_level": PARAMETER, "enforce": False},
        False,
        PARAMETER,
        {},
    ),
    (
        "enforce-off-named",
        request(STRICT, choice=NamedChoice("strict")),
        {"enforce": False},
        False,
        AUTO,
        {},
    ),
    ("enforce-off-auto-strict", request(STRICT), {"enforce": False}, False, AUTO, {}),
    # No tools: vLLM returns before deciding anything.
    ("no-tools", request(), {"strict_level": PARAMETER}, False, PARAMETER, {}),
]


@pytest.mark.parametrize(
    ("req", "kwargs", "grammar", "level", "pinned"),
    [pytest.param(*row[1:], id=row[0]) for row in TABLE],
)
def test_decision_table(
    req: Request,
    kwargs: dict[str, Any],
    grammar: bool,
    level: StrictLevel,
    pinned: dict[str, bool],
) -> None:
    plan = resolve_plan(req, **kwargs)
    assert plan.grammar is grammar
    assert plan.level is level
    assert pinning(plan) == pinned
    assert plan.or_structured_output is False


@pytest.mark.parametrize(
    ("choice", "obligation", "named"),
    [
        ("auto", Obligation.OPTIONAL, None),
        (None, Obligation.OPTIONAL, None),
        ("required", Obligation.AT_LEAST_ONE, None),
        (NamedChoice("strict"), Obligation.NAMED, "strict"),
        ("none", Obligation.NONE, None),
    ],
)
@pytest.mark.parametrize("enforce", [True, False])
def test_obligation_follows_tool_choice(
    choice: ToolChoice, obligation: Obligation, named: str | None, enforce: bool
) -> None:
    plan = resolve_plan(request(STRICT, PLAIN, choice=choice), enforce=enforce)
    assert plan.obligation is obligation
    assert plan.named == named


@pytest.mark.parametrize("parallel", [True, False])
def test_at_most_one_is_parallel_tool_calls_false(parallel: bool) -> None:
    plan = resolve_plan(request(STRICT, choice="required", parallel=parallel))
    assert plan.grammar
    assert plan.at_most_one is (not parallel)


def test_tool_order_is_kept() -> None:
    plan = resolve_plan(request(LOOSE, STRICT, PLAIN, choice="required"))
    assert [entry.tool.name for entry in plan.tools] == ["loose", "strict", "plain"]
    assert [entry.tool for entry in plan.tools] == [LOOSE, STRICT, PLAIN]


def test_null_parallel_tool_calls_does_not_limit_calls() -> None:
    # vLLM tests ``parallel_tool_calls is False``; an explicit null is not False.
    req = Request.from_openai(
        {"tools": [PLAIN.to_openai()], "tool_choice": "auto", "parallel_tool_calls": None}
    )
    plan = resolve_plan(req)
    assert not plan.grammar
    assert not plan.at_most_one


class TestStructuredOutput:
    """§4.4 gap 6: auto with a structured-output constraint."""

    def test_auto_is_built_as_required_or_output(self) -> None:
        plan = resolve_plan(request(STRICT, PLAIN), structured_output=True)
        assert plan.grammar
        assert plan.or_structured_output
        assert plan.obligation is Obligation.AT_LEAST_ONE
        assert pinning(plan) == {"strict": True, "plain": False}

    def test_single_call_does_not_raise_the_level(self) -> None:
        plan = resolve_plan(request(PLAIN, parallel=False), structured_output=True)
        assert not plan.grammar
        assert plan.level is AUTO
        assert plan.obligation is Obligation.OPTIONAL

    def test_single_call_still_limits_a_grammar_that_applies(self) -> None:
        plan = resolve_plan(
            request(PLAIN, parallel=False), strict_level=PARAMETER, structured_output=True
        )
        assert plan.grammar
        assert plan.at_most_one
        assert plan.level is PARAMETER
        assert plan.or_structured_output

    @pytest.mark.parametrize("choice", ["required", NamedChoice("plain")])
    def test_forcing_choices_ignore_it(self, choice: ToolChoice) -> None:
        plan = resolve_plan(request(PLAIN, choice=choice, parallel=False), structured_output=True)
        assert plan.grammar
        assert plan.level is FUNCTION
        assert not plan.or_structured_output

    def test_enforce_off_still_wins(self) -> None:
        plan = resolve_plan(request(STRICT), structured_output=True, enforce=False)
        assert not plan.grammar
        assert not plan.or_structured_output
        assert plan.obligation is Obligation.OPTIONAL


class TestRejected:
    def test_required_without_tools(self) -> None:
        with pytest.raises(ValueError, match="required"):
            resolve_plan(request(choice="required"), enforce=False)

    def test_named_tool_not_declared(self) -> None:
        with pytest.raises(ValueError, match="'missing'"):
            resolve_plan(request(PLAIN, choice=NamedChoice("missing")), enforce=False)

    def test_named_tool_declared_twice_under_a_grammar(self) -> None:
        # xgrammar's normalize_tool_choice: "Forced tool choice must resolve to exactly one tool".
        with pytest.raises(ValueError, match="2 tools"):
            resolve_plan(request(PLAIN, Tool("plain"), choice=NamedChoice("plain")))

    def test_named_tool_declared_twice_without_a_grammar(self) -> None:
        plan = resolve_plan(
            request(PLAIN, Tool("plain"), choice=NamedChoice("plain")), enforce=False
        )
        assert not plan.grammar
        assert plan.named == "plain"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, True),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "True"}, True),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "true"}, True),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "TRUE"}, True),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "1"}, True),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "0"}, False),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "false"}, False),
        # vLLM compares the lower-cased value with "true" and "1" and nothing else.
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": ""}, False),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "yes"}, False),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "on"}, False),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": " 1"}, False),
        ({"VLLM_ENFORCE_STRICT_TOOL_CALLING": "true "}, False),
    ],
)
def test_enforce_from_env(environ: dict[str, str], expected: bool) -> None:
    assert enforce_from_env(environ) is expected


def test_enforce_from_env_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "0")
    assert enforce_from_env() is False
    monkeypatch.delenv("VLLM_ENFORCE_STRICT_TOOL_CALLING")
    assert enforce_from_env() is True


# Properties the reference states for every request, checked over generated ones.
_tools = st.lists(
    st.builds(
        Tool, name=st.sampled_from(["a", "b", "c"]), strict=st.sampled_from([None, True, False])
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda tool: tool.name,
)
_levels = st.sampled_from(list(StrictLevel))


@st.composite
def _requests(draw: st.DrawFn) -> Request:
    tools = tuple(draw(_tools))
    choices: list[ToolChoice] = ["auto", "required", "none", None, NamedChoice(tools[0].name)]
    choice = draw(st.sampled_from(choices))
    return Request(tools=tools, tool_choice=choice, parallel_tool_calls=draw(st.booleans()))


@given(
    req=_requests(),
    level=st.none() | _levels,
    default=_levels,
    enforce=st.booleans(),
    structured=st.booleans(),
)
def test_invariants(
    req: Request, level: StrictLevel | None, default: StrictLevel, enforce: bool, structured: bool
) -> None:
    plan = resolve_plan(
        req,
        strict_level=level,
        default_level=default,
        enforce=enforce,
        structured_output=structured,
    )
    if not enforce or req.tool_choice in ("none", None):
        assert not plan.grammar
    if req.tool_choice == "required" or isinstance(req.tool_choice, NamedChoice):
        assert plan.grammar is enforce
    if not plan.grammar:
        assert plan.tools == ()
    for entry in plan.tools:
        assert entry.pinned is (plan.level is PARAMETER or entry.tool.strict is True)
    # Raising the server level never takes a grammar away nor unpins a tool.
    higher = resolve_plan(
        req,
        strict_level=PARAMETER,
        default_level=default,
        enforce=enforce,
        structured_output=structured,
    )
    assert higher.grammar or not plan.grammar
    assert all(entry.pinned for entry in higher.tools)
