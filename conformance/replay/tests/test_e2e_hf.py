"""End to end: ``--tool-call-parser hf``, alone and with ``--reasoning-parser hf``.

The weightless Qwen2.5 model directory gets a ``response_template`` in its
``tokenizer_config.json`` (the Hermes/Qwen template the plugin ships), as a checkpoint
carries it; vLLM 0.33's real server loads it and our plugin serves ``hf`` through the
response-template route (``toolcall.vllm.template_route``). Each hf case recorded with that
template (and no prefilled prompt: vLLM renders the prompt, which ends at the template's
start anchor) is replayed and asked through Chat Completions, streaming and not; what the
client receives is the case's expected parse, reasoning included, shaped by vLLM's rules
(e2e_support.expect). The servers check the delta contract live
(``TOOLCALL_CHECK_CONTRACT=1``); a test fails if the bridge logged a warning or an error.

Strict tools, ``tool_choice: "required"``, a named tool and ``parallel_tool_calls: false``,
which vLLM's own ``hf`` refuses with HTTP 400, are served: the engine core gets our
structural tag (the replay engine logs it). A template the plan cannot be turned into a
grammar for is an HTTP 400 that says why. The two servers run one after the other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    Ask,
    Endpoint,
    ServerSpec,
    ask_for,
    corpus,
    difference,
    expect_case,
    no_bridge_errors,
)

from toolcall_conformance.cases import Case
from toolcall_replay.model_dir import build_model_dir
from toolcall_replay.script import Recording, case_marker
from toolcall_replay.server import ReplayServer

pytestmark = pytest.mark.vllm

TEMPLATE: dict[str, Any] = json.loads(
    resources.files("toolcall_hf_response_template")
    .joinpath("templates/hermes.json")
    .read_text(encoding="utf-8")
)
CASES = [
    case
    for case in corpus("hf", "qwen2.5")
    if case.response_template == TEMPLATE and case.prompt is None
]
APIS = ("chat", "chat-stream")
SERVERS = {
    "hf": ServerSpec("hf", "qwen2.5", "hf"),
    "hf-reasoning": ServerSpec(
        "hf-reasoning", "qwen2.5", "hf", ("toolcall",), ("--reasoning-parser", "hf")
    ),
}

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["location"],
        },
    },
}
TIME: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}},
    },
}


def strict(tool: dict[str, Any]) -> dict[str, Any]:
    return {**tool, "function": {**tool["function"], "strict": True}}


@pytest.fixture(scope="module", params=list(SERVERS))
def hf(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Endpoint]:
    spec = SERVERS[request.param]
    workdir = Path(tmp_path_factory.mktemp(spec.name))
    server = ReplayServer(
        build_model_dir("qwen2.5", tokenizer_config={"response_template": TEMPLATE}),
        tool_call_parser="hf",
        recordings=[Recording.from_case(case) for case in CASES],
        extra_args=spec.args(),
        plugins=spec.plugins,
        env={"TOOLCALL_CHECK_CONTRACT": "1"},
        workdir=workdir,
    )
    server.start()
    endpoint = Endpoint(server, spec)
    try:
        yield endpoint
    finally:
        endpoint.close()
        server.stop()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_corpus(hf: Endpoint, case: Case, api: str) -> None:
    ask = ask_for(case)
    with no_bridge_errors(hf):
        answer = hf.send(api, ask)
    expected = expect_case(case, api, ask, reasoning=case.expected.reasoning)
    problem = difference(expected, answer, api)
    assert problem is None, f"{case.id} via {api}: {problem}\n  expected {expected}\n  got {answer}"
    if case.expected.reasoning is None:
        assert not (answer.reasoning or "").strip(), answer


def engine_tag(endpoint: Endpoint, ask: Ask, label: str) -> dict[str, Any] | None:
    [logged] = [r for r in endpoint.server.engine_requests() if label in r["prompt"]]
    structured = logged["sampling"]["structured_outputs"]
    if not structured:
        return None
    tag: dict[str, Any] = json.loads(structured["structural_tag"])
    return tag


def served(hf: Endpoint, label: str, **request: Any) -> tuple[Any, dict[str, Any] | None]:
    single = next(c for c in CASES if c.id.endswith("hermes-template-single-call"))
    ask = Ask(marker=f"{case_marker(single.id)} {label}", tools=(WEATHER, TIME), **request)
    with no_bridge_errors(hf):
        answer = hf.send("chat", ask)
    return answer, engine_tag(hf, ask, label)


@pytest.mark.parametrize(
    ("label", "request_fields"),
    [
        ("[strict]", {"tools": (strict(WEATHER), TIME)}),
        ("[required]", {"tool_choice": "required"}),
        (
            "[named]",
            {"tool_choice": {"type": "function", "function": {"name": "get_current_weather"}}},
        ),
        ("[single]", {"parallel_tool_calls": False}),
    ],
)
def test_guarantees_vllm_refuses_are_served_with_a_grammar(
    hf: Endpoint, label: str, request_fields: dict[str, Any]
) -> None:
    fields = dict(request_fields)  # the parameter's dict is shared by both servers' runs
    tools = fields.pop("tools", (WEATHER, TIME))
    single = next(c for c in CASES if c.id.endswith("hermes-template-single-call"))
    ask = Ask(marker=f"{case_marker(single.id)} {label}", tools=tools, **fields)
    with no_bridge_errors(hf):
        answer = hf.send("chat", ask)
    assert answer.error is None, answer
    assert [call.name for call in answer.calls] == ["get_current_weather"]
    tag = engine_tag(hf, ask, label)
    assert tag is not None, "no grammar reached the engine"
    text = json.dumps(tag)
    assert "<tool_call>" in text
    assert "get_current_weather" in text
    if label == "[named]":
        assert "get_time" not in text  # only the named tool may be called
    if label == "[strict]":
        assert WEATHER["function"]["parameters"]["properties"]["location"] == {"type": "string"}
        assert '"location": {"type": "string"}' in text  # its schema is pinned


def test_auto_without_strict_tools_gets_no_grammar(hf: Endpoint) -> None:
    answer, tag = served(hf, "[auto]")
    assert answer.error is None
    assert tag is None
