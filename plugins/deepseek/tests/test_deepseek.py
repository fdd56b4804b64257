"""toolcall-deepseek: two names served from data, checked by the kit over their corpus.

The names come from this distribution's entry points (no code: JSON files the hf engine
reads); the shipped cases run through the kit's every check, grammar included; the corpus is
replayed under seeded random splits; and every strictness plan gets a structural tag that
xgrammar compiles, accepting the chat template's rendering and refusing what the plan forbids.
"""

from __future__ import annotations

import json
import math
import os
from importlib import resources
from typing import Any

import pytest

from toolcall import Registry, Request, StrictLevel
from toolcall.cli import main
from toolcall.contract import check_splits
from toolcall.strictness import resolve_plan
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_conformance.compare import first_difference
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.pytest_plugin import ConformanceSuite
from toolcall_conformance.splits import random_splits
from toolcall_conformance.tokenizers import get_tokenizer

NAMES = ("deepseek_v3", "deepseek_v31")
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"


class TestDeepSeekV3(ConformanceSuite):
    parser = "deepseek_v3"


class TestDeepSeekV31(ConformanceSuite):
    parser = "deepseek_v31"


def shipped_json(name: str) -> dict[str, Any]:
    text = resources.files("toolcall_deepseek").joinpath(f"{name}.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@pytest.mark.parametrize("name", NAMES)
def test_the_name_is_served_from_this_distribution(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser_class = Registry.load().get(name)
    assert parser_class.name == name
    assert parser_class.summary == shipped_json(name)["summary"]
    assert main(["list"], registry=Registry.load()) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(name))
    assert "toolcall-deepseek" in row


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_is_large_enough_and_carries_the_shipped_template(name: str) -> None:
    cases, errors = load_cases(shipped_case_dirs(name))
    assert errors == []
    assert len(cases) >= 15
    assert all(case.tokenizer == "deepseek-v3" for case in cases)
    template = shipped_json(name)["response_template"]
    assert all(case.response_template == template for case in cases)
    assert {"template", "constructed"} <= {case.provenance["kind"] for case in cases}
    verdicts = [case.expected.grammar for case in cases]
    assert verdicts.count("accept") >= 2
    assert verdicts.count("reject") >= 2
    assert any(case.expected.reasoning for case in cases)
    assert any(case.finish_reason == "length" for case in cases)


# -- seeded random splits -----------------------------------------------------------------

CASES = [case for name in NAMES for case in load_cases(shipped_case_dirs(name))[0]]
PER_CASE = math.ceil(int(os.environ.get("TOOLCALL_SPLITS", "1000")) / max(len(CASES), 1))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_random_splits_keep_the_contract(case: Case) -> None:
    parser = build_parser(Registry.load().get(case.parser), case)
    assert first_difference(case.expected, parser.parse(case.text)) is None
    chosen = random_splits(case, PER_CASE)
    violations = check_splits(parser, case.text, chosen, promptness=not case.expected.recoveries)
    assert violations == [], "\n".join(map(str, violations[:10]))


# -- the grammar of every plan --------------------------------------------------------------

SESSION = GrammarSession()
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["location"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}


def v3_call(name: str, arguments: str) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{arguments}\n```{CALL_END}"


def v31_call(name: str, arguments: str) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{arguments}{CALL_END}"


def turn(name: str, *calls: tuple[str, str], content: str = "") -> str:
    if name == "deepseek_v3":
        return content + CALLS_BEGIN + "\n".join(v3_call(*c) for c in calls) + CALLS_END
    return content + CALLS_BEGIN + "".join(v31_call(*c) for c in calls) + CALLS_END


def accepts(name: str, text: str, level: StrictLevel | None = None, **body: Any) -> bool:
    request = {"tools": [WEATHER, TIME], **body}
    plan = resolve_plan(Request.from_openai(request), strict_level=level)
    assert plan.grammar
    parser_class = Registry.load().get(name)
    tag = parser_class(
        build_parser_context(request, "<｜Assistant｜></think>" if name != "deepseek_v3" else None)
    ).structural_tag(plan)
    real = get_tokenizer("deepseek-v3")
    compiled = SESSION.compile(tag, real)
    stops = list(real.stop_token_ids)
    return SESSION.match(compiled, [*real.encode(text), stops[0]], stops).accepted


def build_parser_context(request: dict[str, Any], prompt: str | None) -> Any:
    from toolcall import ParserContext

    return ParserContext(request=Request.from_openai(request), prompt=prompt)


PARIS = ("get_weather", '{"location": "Paris", "days": 2}')
NOW = ("get_time", "{}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("body", "calls", "content", "accepted"),
    [
        ({"tool_choice": "required"}, [PARIS], "", True),
        ({"tool_choice": "required"}, [PARIS, NOW], "", True),
        ({"tool_choice": "required"}, [PARIS], "Sure.", False),
        ({"tool_choice": {"type": "function", "function": {"name": "get_time"}}}, [NOW], "", True),
        (
            {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
            [PARIS],
            "",
            False,
        ),
        ({"parallel_tool_calls": False}, [PARIS], "Checking.", True),
        ({"parallel_tool_calls": False}, [PARIS, NOW], "", False),
        ({}, [("get_weather", '{"location": 3}')], "", False),
    ],
)
def test_every_plan_has_a_grammar(
    name: str, body: dict[str, Any], calls: list[tuple[str, str]], content: str, accepted: bool
) -> None:
    text = turn(name, *calls, content=content)
    assert accepts(name, text, StrictLevel.PARAMETER, **body) is accepted


@pytest.mark.parametrize("name", NAMES)
def test_auto_with_a_strict_tool_allows_content_and_pins_that_tool(name: str) -> None:
    strict = {**WEATHER, "function": {**WEATHER["function"], "strict": True}}
    text = turn(name, PARIS, content="Let me look.")
    request = {"tools": [strict, TIME]}
    assert accepts(name, text, **request)
    assert not accepts(name, turn(name, ("get_weather", '{"location": 1}')), **request)
