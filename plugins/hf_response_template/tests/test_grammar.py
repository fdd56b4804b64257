"""The structural tag derived from a template, compiled by xgrammar against real tokenizers.

For every plan (auto with a strict tool, required, a named tool, parallel_tool_calls false,
per-tool pinning) the grammar accepts what the parser reads cleanly for the request and
refuses what the plan forbids; where a template cannot be turned into a grammar,
``GrammarError`` says why (vLLM answers it with HTTP 400).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hf_testing import TIME, WEATHER, parser, shipped, with_field

from toolcall import Request, StrictLevel
from toolcall.strictness import resolve_plan
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_hf_response_template.grammar import GrammarError
from toolcall_hf_response_template.patterns import looks_around

HERMES = shipped("hermes")
CODER = shipped("qwen3_coder")
GLM = shipped("glm")
SESSION = GrammarSession()


def strict(tool: dict[str, Any]) -> dict[str, Any]:
    return {**tool, "function": {**tool["function"], "strict": True}}


def tag_for(template: dict[str, Any], level: StrictLevel | None = None, **body: Any) -> Any:
    request = {"tools": [WEATHER, TIME], **body}
    view = Request.from_openai(request)
    plan = resolve_plan(view, strict_level=level)
    assert plan.grammar
    return parser(template, **request).structural_tag(plan)


def accepts(tag: Any, text: str, tokenizer: str = "qwen2.5") -> bool:
    real = get_tokenizer(tokenizer)
    compiled = SESSION.compile(tag, real)
    stops = list(real.stop_token_ids)
    return SESSION.match(compiled, [*real.encode(text), stops[0]], stops).accepted


def hermes_call(name: str, arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": name, "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call>"


PARIS = hermes_call("get_weather", {"city": "Paris", "days": 2})
TIME_CALL = hermes_call("get_time", {})


@pytest.mark.parametrize(
    ("body", "text", "accepted"),
    [
        ({"tool_choice": "required"}, PARIS, True),
        ({"tool_choice": "required"}, PARIS + "\n" + TIME_CALL, True),
        ({"tool_choice": "required"}, "No call at all.", False),
        ({"tool_choice": "required"}, hermes_call("delete_all", {}), False),
        ({"parallel_tool_calls": False}, "Sure.\n" + PARIS, True),
        ({"parallel_tool_calls": False}, PARIS + "\n" + TIME_CALL, False),
        ({"tool_choice": {"type": "function", "function": {"name": "get_time"}}}, TIME_CALL, True),
        ({"tool_choice": {"type": "function", "function": {"name": "get_time"}}}, PARIS, False),
        ({"tools": [strict(WEATHER), TIME]}, "Plain answer.", True),
        ({"tools": [strict(WEATHER), TIME]}, "<think>\nhm\n</think>\n\n" + PARIS, True),
        (
            {"tools": [strict(WEATHER), TIME]},
            hermes_call("get_weather", {"city": 7}),
            False,
        ),
        (
            {"tools": [WEATHER, strict(TIME)], "tool_choice": "required"},
            hermes_call("get_weather", {"anything": ["goes"]}),
            True,
        ),
    ],
)
def test_hermes_plans(body: dict[str, Any], text: str, accepted: bool) -> None:
    assert accepts(tag_for(HERMES, **body), text) is accepted


def coder_call(name: str, arguments: dict[str, Any]) -> str:
    rendered = "".join(
        f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
        for k, v in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{rendered}</function>\n</tool_call>"


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        (coder_call("get_weather", {"city": "Paris", "days": 3}), True),
        (coder_call("get_weather", {"city": "Paris", "days": "three"}), False),
        (coder_call("get_weather", {"town": "Paris"}), False),
        (coder_call("get_time", {}), True),
    ],
)
def test_xml_inline_parameters_are_pinned(text: str, accepted: bool) -> None:
    tag = tag_for(CODER, StrictLevel.PARAMETER, tool_choice="required")
    assert accepts(tag, text) is accepted


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        (
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>",
            True,
        ),
        (
            "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
            True,
        ),
        (
            "<tool_call>get_weather<arg_key>days</arg_key><arg_value>two</arg_value></tool_call>",
            False,
        ),
    ],
)
def test_glm_parameters_on_the_glm_tokenizer(text: str, accepted: bool) -> None:
    tag = tag_for(GLM, StrictLevel.PARAMETER, tool_choice="required")
    assert accepts(tag, text, "glm4.5") is accepted


def test_a_prompt_that_leaves_reasoning_open_starts_the_grammar_inside_it() -> None:
    request = {"tools": [WEATHER, TIME], "tool_choice": "required"}
    plan = resolve_plan(Request.from_openai(request))
    hf = parser(HERMES, prompt="<|im_start|>assistant\n<think>\n", **request)
    tag = hf.structural_tag(plan)
    assert accepts(tag, "Thinking on.\n</think>\n\n" + PARIS)
    assert not accepts(tag, PARIS)  # the reasoning must close before a call


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        (
            with_field(HERMES, "tool_calls", content_args={"unquoted_keys": True}),
            "unquoted_keys or string_delims",
        ),
        (shipped("mistral_v11"), "not literal text"),
        (shipped("llama3_json"), "not literal text"),
        (with_field(HERMES, "tool_calls", close=None), "no closer"),
        (
            with_field(
                HERMES,
                "tool_calls",
                open=None,
                open_pattern="<call (?P<name>[a-z]+)>",
                close="</call>",
                transform={"function": {"name": "{name}", "arguments": "{content}"}},
            ),
            "cannot be written by the opener",
        ),
        (
            with_field(
                HERMES,
                "tool_calls",
                content="kv-lines",
                transform={"function": {"name": "{content.tool}", "arguments": "{content.args}"}},
            ),
            "read whole",
        ),
    ],
)
def test_what_xgrammar_cannot_express_says_why(template: dict[str, Any], reason: str) -> None:
    with pytest.raises(GrammarError, match=reason):
        tag_for(template, tool_choice="required")


def test_no_grammar_where_the_plan_applies_none() -> None:
    request = {"tools": [WEATHER, TIME]}
    plan = resolve_plan(Request.from_openai(request))
    assert not plan.grammar
    assert parser(HERMES, **request).structural_tag(plan) is None


@pytest.mark.parametrize(
    ("pattern", "asserts"),
    [
        # A class that starts with ^ (or holds ^ or $) matches characters: a grammar can say it.
        (r"<parameter=(?P<key>[^>\n]+)>\n?", False),
        (r"[a^$]x", False),
        (r"\^\$", False),
        # Anchors, boundaries and look-arounds test the text around a match.
        (r"^\s*", True),
        (r"end$", True),
        (r"\bword", True),
        (r"a(?=b)c", True),
        (r"(?<!x)y", True),
        (r"(?:a|(?!b)c)+", True),
    ],
)
def test_an_anchor_is_told_from_a_negated_class(pattern: str, asserts: bool) -> None:
    assert looks_around(pattern) is asserts
