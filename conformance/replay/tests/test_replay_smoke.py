"""Smoke test: the literal ``vllm serve`` with vLLM's built-in hermes parser, answering from a
recording, serves a tool call to the real ``openai`` client, streaming and not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcall_replay.script import Recording

pytestmark = pytest.mark.vllm

TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["location"],
            },
        },
    }
]
ARGUMENTS = {"location": "San Francisco, CA", "unit": "fahrenheit"}
# The model output in the hermes format (Qwen2.5's chat template renders calls the same way).
OUTPUT = (
    "I'll look that up.\n<tool_call>\n"
    + json.dumps({"name": "get_weather", "arguments": ARGUMENTS})
    + "\n</tool_call>"
)


@pytest.fixture(scope="module")
def recording(hermes_server: Any, qwen: Any) -> Recording:
    rec = Recording.from_token_ids(
        "smoke-hermes-call", qwen.encode(OUTPUT), prompt_contains="[case:smoke-hermes-call]"
    )
    hermes_server.add(rec)
    return rec


def ask(server: Any, **kwargs: Any) -> Any:
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    return client.chat.completions.create(
        model=server.served_model_name,
        messages=[{"role": "user", "content": "Weather in SF? [case:smoke-hermes-call]"}],
        tools=TOOLS,
        **kwargs,
    )


def test_recorded_output_is_what_the_tokenizer_gives(qwen: Any, recording: Recording) -> None:
    # the ids are the real tokenizer's, and the markers are single tokens, as in Qwen2.5
    assert qwen.hf_tokenizer.decode(list(recording.token_ids)) == OUTPUT
    assert qwen.special_tokens["<tool_call>"] in recording.token_ids


def test_non_streaming_tool_call(hermes_server: Any, recording: Recording) -> None:
    response = ask(hermes_server)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "I'll look that up.\n"
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == ARGUMENTS
    [logged] = [
        r
        for r in hermes_server.engine_requests(recording.name)
        if r["request_id"].startswith(response.id)
    ]
    assert logged["sampling"]["output_kind"] == "FINAL_ONLY"
    assert logged["sampling"]["skip_special_tokens"] is False  # the hermes parser's adjust_request


def test_streaming_tool_call(hermes_server: Any, recording: Recording) -> None:
    chunks = list(ask(hermes_server, stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(tc.index, {"name": "", "arguments": "", "id": ""})
            call["id"] += tc.id or ""
            call["name"] += (tc.function.name or "") if tc.function else ""
            call["arguments"] += (tc.function.arguments or "") if tc.function else ""
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert content == "I'll look that up.\n"
    assert list(calls) == [0]
    assert calls[0]["name"] == "get_weather"
    assert calls[0]["id"]
    assert json.loads(calls[0]["arguments"]) == ARGUMENTS
    assert finish == ["tool_calls"]
    # the arguments arrived in several deltas, not at once
    arg_deltas = [
        tc
        for c in chunks
        if c.choices
        for tc in c.choices[0].delta.tool_calls or []
        if tc.function and tc.function.arguments
    ]
    assert len(arg_deltas) > 1


GLM_TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
# GLM-4.5's format: name after <tool_call>, then <arg_key>/<arg_value> pairs; the model ends its
# turn with <|observation|> after a call.
GLM_OUTPUT = (
    "Let me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
)


def test_glm_tool_call_through_the_built_in_glm45_parser(glm_server: Any) -> None:
    import openai

    from toolcall_conformance.tokenizers import get_tokenizer

    glm = get_tokenizer("glm4.5")
    observation = glm.special_tokens["<|observation|>"]
    ids = [*glm.encode(GLM_OUTPUT), observation]
    glm_server.add(
        Recording.from_token_ids("smoke-glm-call", ids, prompt_contains="[case:smoke-glm]")
    )
    client = openai.OpenAI(base_url=glm_server.base_url, api_key="unused", max_retries=0)
    request: dict[str, Any] = {
        "model": glm_server.served_model_name,
        "messages": [{"role": "user", "content": "Weather in Beijing? [case:smoke-glm]"}],
        "tools": GLM_TOOLS,
    }

    choice = client.chat.completions.create(**request).choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.stop_reason == observation  # a generation_config eos id, stopped as vLLM does
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Beijing", "days": 3}

    chunks = list(client.chat.completions.create(**request, stream=True))
    names = [
        tc.function.name
        for c in chunks
        if c.choices
        for tc in c.choices[0].delta.tool_calls or []
        if tc.function and tc.function.name
    ]
    arguments = "".join(
        tc.function.arguments
        for c in chunks
        if c.choices
        for tc in c.choices[0].delta.tool_calls or []
        if tc.function and tc.function.arguments
    )
    assert names == ["get_weather"]
    assert json.loads(arguments) == {"city": "Beijing", "days": 3}
