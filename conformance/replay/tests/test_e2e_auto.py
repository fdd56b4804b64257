"""End to end: ``--tool-call-parser auto``, the format derived from the chat template.

The weightless model directories of two families (``qwen2.5``: ``<tool_call>`` JSON blocks;
``glm4.5``: ``<tool_call>NAME`` with ``<arg_key>``/``<arg_value>`` lines) carry their chat
template in ``tokenizer_config.json`` and no ``response_template``; vLLM 0.33's real server
loads them and ``auto`` derives the format from the template vLLM hands the parser. Each hf
case of that family's format (recorded without a prefilled prompt and without reasoning) is
replayed through Chat Completions, streaming and not, and must give the case's expected
parse; the servers check the delta contract live, and a test fails if the bridge logged a
warning or an error. A strict tool is served with a structural tag derived from the derived
template.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from e2e_support import (
    AUTO_FAMILIES,
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


def cases_of(family: str) -> list[Case]:
    return served_cases(f"auto-{family}")


APIS = ("chat", "chat-stream")


@pytest.mark.parametrize("api", APIS)
def test_corpus(e2e_auto: Endpoint, api: str) -> None:
    problems = []
    for case in cases_of(e2e_auto.spec.family):
        ask = ask_for(case)
        with no_bridge_errors(e2e_auto):
            answer = e2e_auto.send(api, ask)
        problem = difference(expect_case(case, api, ask, reasoning=None), answer, api)
        if problem is not None:
            problems.append(f"{case.id} via {api}: {problem}")
    assert problems == []


def test_every_family_has_cases_to_replay() -> None:
    assert all(cases_of(family) for family in AUTO_FAMILIES)


def test_a_strict_tool_is_served_with_a_grammar(e2e_auto: Endpoint) -> None:
    auto = e2e_auto
    single = next(case for case in cases_of(auto.spec.family) if case.expected.tool_calls)
    tools = [
        {**tool, "function": {**tool["function"], "strict": True}}
        for tool in (single.request.get("tools") or [])
    ]
    label = "[strict]"
    ask = Ask(marker=f"{case_marker(single.id)} {label}", tools=tuple(tools))
    with no_bridge_errors(auto):
        answer = auto.send("chat", ask)
    assert answer.error is None, answer
    [logged] = [r for r in auto.server.engine_requests() if label in r["prompt"]]
    structured: dict[str, Any] = logged["sampling"]["structured_outputs"]
    assert structured, "no grammar reached the engine"
    assert "<tool_call>" in json.dumps(json.loads(structured["structural_tag"]))


@pytest.mark.parametrize("api", APIS)
def test_a_template_with_no_format_refuses_tools_and_serves_text(
    e2e_auto_underived: Endpoint, api: str
) -> None:
    endpoint = e2e_auto_underived
    case = next(case for case in served_cases("auto-underived") if case.expected.tool_calls)
    marker = case_marker(case.id)
    tools = tuple(case.request.get("tools") or ())
    refused = endpoint.send(api, Ask(marker=marker, tools=tools))
    assert refused.error is not None, refused
    status, message = refused.error
    assert status == 400
    assert "reads no tool calls" in message
    assert "chat template" in message
    # Without tools nothing could be called: the output is the answer's text, markup included.
    answer = endpoint.send(api, Ask(marker=marker))
    assert answer.error is None, answer
    assert answer.calls == ()
    assert answer.content is not None
    assert "<tool_call>" in answer.content
