"""The structural tag (DESIGN §5) for every plan and both generations, compiled by xgrammar
against the real tokenizers, and compared with mistral-common's own grammar.

The corpus's grammar checks (test_conformance.py) run every case through the tag at strict
level ``parameter``; these tests cover what a case cannot: plans without a grammar, levels and
per-tool ``strict``, the generation read from the vocabulary, and the outside oracle.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import xgrammar  # noqa: F401  (the grammar is part of the contract: without it, fail)
from mistral_testing import tool

from toolcall import ParserContext, Request, StrictLevel, Vocabulary
from toolcall.strictness import resolve_plan
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_mistral import MistralParser

CITY = tool("get_weather", {"city": {"type": "string"}})
STRICT_CITY: dict[str, Any] = json.loads(json.dumps(CITY))
STRICT_CITY["function"]["strict"] = True
STRICT_CITY["function"]["name"] = "get_weather_strict"
TIME = tool("get_time", {"timezone": {"type": "string"}})

V11_MARKERS = {"[TOOL_CALLS]": 9, "[ARGS]": 32, "[CALL_ID]": 33}
PRE_V11_MARKERS = {"[TOOL_CALLS]": 5}


def tag_for(
    request: dict[str, Any], markers: dict[str, int], level: StrictLevel | None = None
) -> dict[str, Any] | None:
    view = Request.from_openai(request)
    parser = MistralParser(ParserContext(request=view, vocabulary=Vocabulary(markers)))
    return parser.structural_tag(resolve_plan(view, strict_level=level))


def accepts(tag: dict[str, Any], tokenizer: str, text: str) -> bool:
    real = get_tokenizer(tokenizer)
    session = GrammarSession()
    ids = [*real.encode(text), real.stop_token_ids[0]]
    outcome = session.match(session.compile(tag, real), ids, real.stop_token_ids)
    return outcome.accepted


def test_plain_auto_gets_no_grammar() -> None:
    assert tag_for({"tools": [CITY, TIME]}, V11_MARKERS) is None
    assert tag_for({"tools": [CITY], "tool_choice": "none"}, V11_MARKERS) is None


def test_auto_with_a_strict_tool_pins_only_that_tool() -> None:
    tag = tag_for({"tools": [CITY, STRICT_CITY]}, V11_MARKERS)
    assert tag is not None
    loose = '[TOOL_CALLS]get_weather[ARGS]{"city": 3}'
    pinned = '[TOOL_CALLS]get_weather_strict[ARGS]{"city": 3}'
    assert accepts(tag, "mistral-tekken-v11", loose)
    assert not accepts(tag, "mistral-tekken-v11", pinned)
    assert accepts(tag, "mistral-tekken-v11", "Just text, no call.")


def test_required_named_and_single_call() -> None:
    required = tag_for({"tools": [CITY, TIME], "tool_choice": "required"}, V11_MARKERS)
    assert required is not None
    assert not accepts(required, "mistral-tekken-v11", "Just text.")
    assert accepts(required, "mistral-tekken-v11", "[TOOL_CALLS]get_time[ARGS]{}")
    choice = {"type": "function", "function": {"name": "get_time"}}
    named = tag_for({"tools": [CITY, TIME], "tool_choice": choice}, V11_MARKERS)
    assert named is not None
    assert accepts(named, "mistral-tekken-v11", '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}')
    assert not accepts(named, "mistral-tekken-v11", '[TOOL_CALLS]get_weather[ARGS]{"city": "x"}')
    single = tag_for({"tools": [TIME], "parallel_tool_calls": False}, PRE_V11_MARKERS)
    assert single is not None
    one = '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}]'
    two = one[:-1] + ', {"name": "get_time", "arguments": {}}]'
    assert accepts(single, "mistral-v3", one)
    assert not accepts(single, "mistral-v3", two)


@pytest.mark.parametrize(
    ("markers", "v11", "pre_v11"),
    [(V11_MARKERS, True, False), (PRE_V11_MARKERS, False, True), ({}, True, True)],
)
def test_the_generation_comes_from_the_vocabulary(
    markers: dict[str, int], v11: bool, pre_v11: bool
) -> None:
    tag = tag_for({"tools": [TIME], "tool_choice": "required"}, markers)
    assert tag is not None
    text_v11 = '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}'
    text_list = '[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}]'
    assert accepts(tag, "mistral-tekken-v11", text_v11) is v11
    assert accepts(tag, "mistral-tekken-v11", text_list) is pre_v11


# -- the outside oracle: mistral-common's own grammar (llguidance) ----------------------------

#: Outputs our tag accepts and mistral-common's grammar refuses, on purpose.
DELIBERATE = {
    "mistral/mistral-tekken-v11/template-call-with-id": (
        "the model's [CALL_ID] and id: mistral-common's grammar has no [CALL_ID], ours lets a "
        "v11 model write the id it was trained to write"
    ),
    "mistral/mistral-tekken-v11/template-parallel-calls-with-ids": "[CALL_ID], as above",
    "mistral/mistral-tekken-v11/fallback-without-args-marker": (
        "NAME{json} without [ARGS]: the fallback the parser (and vLLM's engine) reads"
    ),
    "mistral/mistral-tekken-v11/wild-devstral-text-after-call": (
        "text after a call: content to the parser, nothing may follow the calls in "
        "mistral-common's 'content? fcalls'"
    ),
    "mistral/mistral-tekken-v11/two-json-values-after-args": "text after a call, as above",
    "mistral/mistral-tekken-v11/wild-devstral2-call-without-args-marker": (
        "NAME{json} without [ARGS], as the fallback above (a Devstral 2 output)"
    ),
    "mistral/mistral-tekken-v11/constrained-required-two-calls": (
        "generated under our grammar, which lets [TOOL_CALLS] be spelled in plain-text tokens "
        "(the parser reads markers from the text, DESIGN §6); mistral-common's required mode "
        "takes only the control token (in auto, its free text lets the spelling through)"
    ),
    "mistral/mistral-tekken-v11/constrained-single-call-not-parallel": (
        "[ARGS] spelled in plain-text tokens under our grammar, as above"
    ),
    "mistral/mistral-tekken-v11/magistral-reasoning-then-call": (
        "[THINK]...[/THINK] with a v11 file: mistral-common uses its think grammar only from "
        "v13; ours leaves reasoning to free text"
    ),
}


@pytest.mark.vllm
def test_what_our_grammar_accepts_mistral_commons_accepts_too() -> None:
    # mistral-common's grammar runs on llguidance; vLLM (this test's session) brings both.
    import llguidance
    from mistral_common.guidance.grammar_factory import GrammarFactory
    from mistral_common.protocol.instruct.tool_calls import Tool as MistralTool
    from mistral_common.protocol.instruct.tool_calls import ToolChoiceEnum

    real = get_tokenizer("mistral-tekken-v11")
    factory = GrammarFactory(real.hf_tokenizer)
    template = factory.select_jinja_template()
    cases, errors = load_cases(shipped_case_dirs("mistral"))
    assert errors == []
    differ: dict[str, str] = {}
    checked = 0
    for case in cases:
        choice = case.request.get("tool_choice", "auto")
        if case.tokenizer != real.name or case.expected.grammar != "accept":
            continue
        if choice not in ("auto", "required"):
            continue
        tools = [
            MistralTool.from_openai({**t, "function": {**t["function"], "strict": True}})
            for t in case.request["tools"]
        ]
        lark = factory.get_lark_from_jinja(
            template=template,
            mode=ToolChoiceEnum(choice),
            tools=tools,
            json_schema=None,
            parallel_tool_calls=case.request.get("parallel_tool_calls", True),
            json_only=False,
            force_tool_names=False,
        )
        matcher = llguidance.LLMatcher(
            factory.llg_tokenizer, llguidance.LLMatcher.grammar_from_lark(lark)
        )
        ids = [i for step in case.steps for i in step.token_ids]
        ok = matcher.try_consume_tokens([*ids, real.stop_token_ids[0]]) == len(ids) + 1
        checked += 1
        if not ok:
            differ[case.id] = matcher.get_error() or "refused"
    assert checked >= 10
    assert set(differ) == set(DELIBERATE), differ
