"""The GLM structural tag, compiled by real xgrammar against the real GLM-4.5 tokenizer."""

from __future__ import annotations

import json
from typing import Any

import pytest

# xgrammar 0.2.8 is installed wherever these tests run (the plugin sessions): without it
# they fail, they do not skip.
import xgrammar
from glm_testing import TIME, WEATHER, make_parser

from toolcall import Request, StrictLevel
from toolcall.strictness import Plan, resolve_plan
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.grammar import GrammarSession
from toolcall_glm import Glm45Parser, Glm47Parser
from toolcall_glm.grammar import structural_tag

CONFIG: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "set_config",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "limits": {"type": "array", "items": {"type": "integer"}},
                "enabled": {"type": "boolean"},
            },
            "required": ["name"],
        },
    },
}


@pytest.fixture(scope="module")
def session() -> GrammarSession:
    return GrammarSession()


def plan_for(
    tools: list[dict[str, Any]],
    *,
    tool_choice: object = "auto",
    parallel: bool = True,
    level: StrictLevel | None = None,
) -> Plan:
    request = Request.from_openai(
        {"tools": tools, "tool_choice": tool_choice, "parallel_tool_calls": parallel}
    )
    return resolve_plan(request, strict_level=level, default_level=StrictLevel.FUNCTION)


def accepts(session: GrammarSession, tokenizer: Any, plan: Plan, text: str) -> bool:
    tag = structural_tag(plan)
    assert tag is not None
    compiled = session.compile(json.loads(json.dumps(tag)), tokenizer)
    ids = tokenizer.encode(text)
    stops = tokenizer.stop_token_ids
    return session.match(compiled, [*ids, stops[0]], stops).accepted


def call45(name: str, args: dict[str, Any]) -> str:
    body = "".join(
        f"\n<arg_key>{k}</arg_key>\n<arg_value>"
        f"{v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}</arg_value>"
        for k, v in args.items()
    )
    return f"\n<tool_call>{name}{body}\n</tool_call>"


def call47(name: str, args: dict[str, Any]) -> str:
    body = "".join(
        f"<arg_key>{k}</arg_key><arg_value>"
        f"{v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}</arg_value>"
        for k, v in args.items()
    )
    return f"<tool_call>{name}{body}</tool_call>"


def clean_cases() -> list[Any]:
    cases, errors = load_cases(shipped_case_dirs("glm45") + shipped_case_dirs("glm47"))
    assert not errors
    return [
        case for case in cases if case.expected.grammar == "accept" and not case.expected.recoveries
    ]


@pytest.mark.parametrize("case", clean_cases(), ids=lambda case: case.id)
@pytest.mark.parametrize("render", [call45, call47], ids=["glm45-framing", "glm47-framing"])
def test_clean_corpus_calls_are_accepted_in_both_framings(
    case: Any, render: Any, session: GrammarSession, glm_tokenizer: Any
) -> None:
    request = case.request_view()
    content = (case.expected.content or "").strip()
    text = (content + "\n" if content else "") + "".join(
        render(call.name, dict(call.arguments)) for call in case.expected.tool_calls
    )
    parsed = make_parser(
        case.request["tools"], tool_choice=case.request.get("tool_choice", "auto")
    ).parse(text)
    assert [json.loads(c.arguments) for c in parsed.tool_calls] == [
        dict(call.arguments) for call in case.expected.tool_calls
    ]
    for level in (StrictLevel.PARAMETER, None):
        plan = resolve_plan(request, strict_level=level, default_level=StrictLevel.FUNCTION)
        assert accepts(session, glm_tokenizer, plan, text), (level, text)


@pytest.mark.parametrize(
    ("text", "level", "why"),
    [
        (call47("get_weather", {"city": "Oslo", "days": "two"}), None, "days is an integer"),
        (call47("get_weather", {"city": "Oslo", "unit": "kelvin"}), None, "unit is an enum"),
        (call47("get_weather", {"town": "Oslo"}), None, "town is not declared"),
        (call45("get_stock", {"symbol": "X"}), None, "no such tool"),
        (call47("set_config", {"name": "a", "limits": [1, "x"]}), StrictLevel.PARAMETER, "items"),
        (call47("set_config", {"enabled": True}), StrictLevel.PARAMETER, "name is required"),
        (
            call47("set_config", {"enabled": True, "name": "a"}),
            StrictLevel.PARAMETER,
            "a pinned schema takes its keys in order (as vLLM and xgrammar do)",
        ),
        ("Done.</tool_call>", None, "stray end marker in content"),
        (
            "<tool_call>get_weather<arg_key>city</arg_key>Oslo</arg_value></tool_call>",
            None,
            "<arg_value> is missing",
        ),
        (call47("get_weather", {"city": "Oslo"})[:-12], None, "no </tool_call>"),
        ('<tool_call>{"name": "get_time"}</tool_call>', None, "JSON instead of a name"),
        (
            call47("get_weather", {"city": "a<arg_key>b"}),
            StrictLevel.PARAMETER,
            "marker in a value",
        ),
    ],
)
def test_the_grammar_refuses_what_the_schema_or_format_forbids(
    text: str, level: StrictLevel | None, why: str, session: GrammarSession, glm_tokenizer: Any
) -> None:
    plan = plan_for([WEATHER, TIME, CONFIG], level=level)
    assert not accepts(session, glm_tokenizer, plan, text), why


def test_unpinned_tools_get_keys_and_types_but_not_order_or_required(
    session: GrammarSession, glm_tokenizer: Any
) -> None:
    plan = plan_for([CONFIG])  # GLM's default level: function, nothing pinned
    assert plan.grammar
    assert not any(tool.pinned for tool in plan.tools)
    assert accepts(session, glm_tokenizer, plan, call47("set_config", {"enabled": True}))
    assert accepts(
        session, glm_tokenizer, plan, call45("set_config", {"enabled": False, "name": "a"})
    )
    assert not accepts(session, glm_tokenizer, plan, call47("set_config", {"enabled": "yes"}))
    strict_tool = {"type": "function", "function": {**CONFIG["function"], "strict": True}}
    pinned = plan_for([strict_tool])
    assert pinned.tools[0].pinned
    assert not accepts(session, glm_tokenizer, pinned, call47("set_config", {"enabled": True}))


def test_call_obligations(session: GrammarSession, glm_tokenizer: Any) -> None:
    one = call47("get_weather", {"city": "Oslo"})
    two = one + call45("get_time", {})
    text = "The weather:"
    auto = plan_for([WEATHER, TIME])
    assert accepts(session, glm_tokenizer, auto, text)
    assert accepts(session, glm_tokenizer, auto, text + one + "\nThat is all.")
    required = plan_for([WEATHER, TIME], tool_choice="required")
    assert not accepts(session, glm_tokenizer, required, text)
    assert not accepts(session, glm_tokenizer, required, text + one)
    assert accepts(session, glm_tokenizer, required, "\n" + two)
    named = plan_for(
        [WEATHER, TIME], tool_choice={"type": "function", "function": {"name": "get_time"}}
    )
    assert accepts(session, glm_tokenizer, named, call45("get_time", {}))
    assert not accepts(session, glm_tokenizer, named, one)
    assert not accepts(session, glm_tokenizer, named, call47("get_time", {}) * 2)
    single = plan_for([WEATHER, TIME], parallel=False)
    assert single.at_most_one
    assert accepts(session, glm_tokenizer, single, one)
    assert not accepts(session, glm_tokenizer, single, two)
    single_required = plan_for([WEATHER, TIME], tool_choice="required", parallel=False)
    assert accepts(session, glm_tokenizer, single_required, one)
    assert not accepts(session, glm_tokenizer, single_required, two)


def test_no_tag_where_the_plan_applies_no_grammar() -> None:
    for parser_class in (Glm45Parser, Glm47Parser):
        parser = make_parser([WEATHER], parser_class=parser_class)
        assert parser_class.default_strict_level is StrictLevel.FUNCTION
        none = resolve_plan(Request.from_openai({"tools": [WEATHER], "tool_choice": "none"}))
        assert parser.structural_tag(none) is None
        plain_auto = resolve_plan(Request.from_openai({"tools": [WEATHER]}))
        assert parser.structural_tag(plain_auto) is None
        default = resolve_plan(
            Request.from_openai({"tools": [WEATHER]}),
            default_level=parser_class.default_strict_level,
        )
        tag = parser.structural_tag(default)
        assert tag is not None
        xgrammar.StructuralTag.model_validate(tag)
