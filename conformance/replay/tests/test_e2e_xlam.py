"""End to end: ``--tool-call-parser xlam``, the data family of toolcall-xlam, in vLLM 0.33.

A name made of a template alone (plugins/xlam) is served by the hf engine as an ordinary
tool parser, with its own template whatever the tokenizer carries. Every xlam case is replayed
on the model directory of its tokenizer (Llama 3.1 for xLAM-2-8b/70b, Qwen2.5 for
xLAM-2-1b/3b/32b) and asked through Chat Completions, streaming and not; what the client gets
must be the case's expected parse shaped by vLLM's rules (e2e_support.expect), with the bridge
checking the delta contract live. A plain ``auto`` request reaches the engine without a
structural tag (the format needs none).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from e2e_support import (
    Ask,
    Endpoint,
    ask_for,
    corpus,
    difference,
    expect_case,
    no_bridge_errors,
)

from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_replay.script import case_marker

pytestmark = pytest.mark.vllm

TOKENIZERS = ("llama3.1", "qwen2.5")
CASES = {tokenizer: corpus("xlam", tokenizer) for tokenizer in TOKENIZERS}
APIS = ("chat", "chat-stream")


@pytest.mark.parametrize("api", APIS)
def test_corpus(e2e_xlam: Endpoint, api: str) -> None:
    endpoint = e2e_xlam
    tokenizer = endpoint.spec.family
    problems = []
    for case in CASES[tokenizer]:
        ask = ask_for(case)
        with no_bridge_errors(endpoint):
            answer = endpoint.send(api, ask)
        problem = difference(expect_case(case, api, ask), answer, api)
        if problem is not None:
            problems.append(f"{case.id} via {api}: {problem}")
    assert problems == []


def engine_tag(endpoint: Endpoint, label: str) -> dict[str, Any] | None:
    [logged] = [r for r in endpoint.server.engine_requests() if label in r["prompt"]]
    structured = logged["sampling"]["structured_outputs"]
    if not structured:
        return None
    tag: dict[str, Any] = json.loads(structured["structural_tag"])
    return tag


def test_auto_gets_no_grammar(e2e_xlam: Endpoint) -> None:
    endpoint = e2e_xlam
    tokenizer = endpoint.spec.family
    single: Case = next(c for c in CASES[tokenizer] if c.id.endswith("template-single-call"))
    ask = Ask(marker=f"{case_marker(single.id)} [auto]", tools=tuple(single.request["tools"]))
    with no_bridge_errors(endpoint):
        answer = endpoint.send("chat", ask)
    assert answer.error is None, answer
    assert [call.name for call in answer.calls] == ["get_current_weather"]
    assert engine_tag(endpoint, "[auto]") is None


def test_every_shipped_xlam_case_is_run() -> None:
    shipped, _ = load_cases(shipped_case_dirs("xlam"))
    assert sorted(c.id for t in TOKENIZERS for c in CASES[t]) == sorted(c.id for c in shipped)
