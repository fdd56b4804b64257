"""End to end: ``--tool-call-parser deepseek_v3`` and ``deepseek_v31`` (toolcall-deepseek),
two names made of data, served by the real ``vllm serve`` with our plugin.

The weightless DeepSeek model directory (toolcall_replay.model_dir family ``deepseek-v3``:
the real tokenizer on a stand-in text config) renders prompts that end with
``<｜Assistant｜></think>`` (V3.1's non-thinking mode); each name's shipped cases that need no
other prompt (none, or that one) and hold no reasoning are replayed and asked through Chat
Completions, streaming and not. What the client receives is the case's expected parse shaped
by vLLM's rules (e2e_support.expect), with the delta contract checked live
(``TOOLCALL_CHECK_CONTRACT=1``); a test fails if the bridge logged a warning or an error.
Strict tools, ``required``, a named tool and ``parallel_tool_calls: false`` reach the engine
with our structural tag.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from e2e_support import (
    DEEPSEEK,
    Ask,
    Endpoint,
    ask_for,
    difference,
    expect_case,
    no_bridge_errors,
    served_cases,
)

from toolcall_conformance.cases import Case
from toolcall_replay.script import case_marker

pytestmark = pytest.mark.vllm

APIS = ("chat", "chat-stream")
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}


def cases_of(endpoint: Endpoint) -> list[Case]:
    return served_cases(endpoint.spec.name)


def test_every_name_has_cases_to_replay() -> None:
    assert all(len(served_cases(name.replace("_", "-"))) >= 12 for name in DEEPSEEK)


@pytest.mark.parametrize("api", APIS)
def test_corpus(e2e_deepseek: Endpoint, api: str) -> None:
    problems = []
    for case in cases_of(e2e_deepseek):
        ask = ask_for(case)
        with no_bridge_errors(e2e_deepseek):
            answer = e2e_deepseek.send(api, ask)
        expected = expect_case(case, api, ask, reasoning=case.expected.reasoning)
        problem = difference(expected, answer, api)
        if problem is not None:
            problems.append(
                f"{case.id} via {api}: {problem}\n  expected {expected}\n  got {answer}"
            )
    assert problems == []


def engine_tag(endpoint: Endpoint, label: str) -> dict[str, Any] | None:
    [logged] = [r for r in endpoint.server.engine_requests() if label in r["prompt"]]
    structured = logged["sampling"]["structured_outputs"]
    if not structured:
        return None
    tag: dict[str, Any] = json.loads(structured["structural_tag"])
    return tag


@pytest.mark.parametrize(
    ("label", "fields"),
    [
        (
            "[strict]",
            {"tools": ({**WEATHER, "function": {**WEATHER["function"], "strict": True}}, TIME)},
        ),
        ("[required]", {"tool_choice": "required"}),
        ("[named]", {"tool_choice": {"type": "function", "function": {"name": "get_time"}}}),
        ("[single]", {"parallel_tool_calls": False}),
    ],
)
def test_every_plan_reaches_the_engine_with_our_grammar(
    e2e_deepseek: Endpoint, label: str, fields: dict[str, Any]
) -> None:
    fields = dict(fields)  # shared by both servers' runs
    tools = fields.pop("tools", (WEATHER, TIME))
    section_end = next(c for c in cases_of(e2e_deepseek) if c.id.endswith("/missing-section-end"))
    ask = Ask(marker=f"{case_marker(section_end.id)} {label}", tools=tools, **fields)
    with no_bridge_errors(e2e_deepseek):
        answer = e2e_deepseek.send("chat", ask)
    assert answer.error is None, answer
    assert [call.name for call in answer.calls] == ["get_time"]
    tag = engine_tag(e2e_deepseek, label)
    assert tag is not None, "no grammar reached the engine"
    assert "<｜tool▁call" in json.dumps(tag, ensure_ascii=False)
