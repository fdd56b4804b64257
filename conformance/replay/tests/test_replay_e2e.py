"""What the replay engine does inside the real server: lockstep steps, regrouping, stop rules,
n > 1, aborts, unknown prompts, per-request selection and the request log."""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolcall_replay.script import Recording

pytestmark = pytest.mark.vllm

PLAIN = "Hello! How can I help you today? I can look up the weather for any city you like."


def client(server: Any) -> Any:
    import openai

    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def chat(server: Any, marker: str, **kwargs: Any) -> Any:
    return client(server).chat.completions.create(
        model=server.served_model_name,
        messages=[{"role": "user", "content": f"Say hello. {marker}"}],
        **kwargs,
    )


def contents(chunks: list[Any], index: int = 0) -> list[str]:
    return [
        c.choices[0].delta.content
        for c in chunks
        if c.choices and c.choices[0].index == index and c.choices[0].delta.content
    ]


@pytest.fixture(scope="module")
def plain(hermes_server: Any, qwen: Any) -> Recording:
    rec = Recording.from_token_ids("plain", qwen.encode(PLAIN), prompt_contains="[case:plain]")
    hermes_server.add(rec)
    return rec


def test_one_engine_step_is_one_chunk(hermes_server: Any, qwen: Any, plain: Recording) -> None:
    chunks = list(chat(hermes_server, "[case:plain]", stream=True))
    expected = [qwen.hf_tokenizer.decode([t]) for t in plain.token_ids]
    assert contents(chunks) == expected
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_k_tokens_per_step(hermes_server: Any, qwen: Any, plain: Recording) -> None:
    chunks = list(
        chat(
            hermes_server,
            "[case:plain]",
            stream=True,
            extra_body={"vllm_xargs": {"replay_tokens_per_step": 4}},
        )
    )
    ids = plain.token_ids
    expected = [qwen.hf_tokenizer.decode(list(ids[i : i + 4])) for i in range(0, len(ids), 4)]
    assert contents(chunks) == expected


def test_recorded_multi_token_steps_are_kept(hermes_server: Any, qwen: Any) -> None:
    ids = qwen.encode(PLAIN)
    steps = [ids[:3], ids[3:4], ids[4:]]
    hermes_server.add(Recording.from_steps("steps", steps, prompt_contains="[case:steps]"))
    chunks = list(chat(hermes_server, "[case:steps]", stream=True))
    assert contents(chunks) == [qwen.hf_tokenizer.decode(s) for s in steps]


def test_non_streaming_gets_the_whole_text(hermes_server: Any, plain: Recording) -> None:
    response = chat(hermes_server, "[case:plain]")
    assert response.choices[0].message.content == PLAIN
    assert response.choices[0].finish_reason == "stop"
    # the eos id the replay adds at the end counts as a completion token, as vLLM counts it
    assert response.usage.completion_tokens == len(plain.token_ids) + 1


def test_max_tokens_cuts_with_length(hermes_server: Any, qwen: Any, plain: Recording) -> None:
    response = chat(hermes_server, "[case:plain]", max_tokens=5)
    assert response.choices[0].finish_reason == "length"
    assert response.choices[0].message.content == qwen.hf_tokenizer.decode(
        list(plain.token_ids[:5])
    )


def test_a_stop_token_id_stops_before_its_text(
    hermes_server: Any, qwen: Any, plain: Recording
) -> None:
    stop_at = 6
    stop_id = plain.token_ids[stop_at]
    assert stop_id not in plain.token_ids[:stop_at]
    response = chat(hermes_server, "[case:plain]", extra_body={"stop_token_ids": [stop_id]})
    assert response.choices[0].finish_reason == "stop"
    assert response.choices[0].stop_reason == stop_id
    assert response.choices[0].message.content == qwen.hf_tokenizer.decode(
        list(plain.token_ids[:stop_at])
    )


def test_n_2_gives_both_choices_the_recording(hermes_server: Any, plain: Recording) -> None:
    response = chat(hermes_server, "[case:plain]", n=2)
    assert [c.message.content for c in response.choices] == [PLAIN, PLAIN]
    chunks = list(chat(hermes_server, "[case:plain]", n=2, stream=True))
    assert "".join(contents(chunks, 0)) == PLAIN
    assert "".join(contents(chunks, 1)) == PLAIN


def test_a_recording_is_chosen_by_vllm_xargs(hermes_server: Any, plain: Recording) -> None:
    response = chat(hermes_server, "(no marker)", extra_body={"vllm_xargs": {"replay": "plain"}})
    assert response.choices[0].message.content == PLAIN
    [logged] = [r for r in hermes_server.engine_requests() if "(no marker)" in r["prompt"]]
    assert (logged["recording"], logged["matched_by"]) == ("plain", "xargs")


def test_an_unknown_prompt_is_a_server_error_and_logged(hermes_server: Any) -> None:
    import openai

    with pytest.raises(openai.InternalServerError):
        chat(hermes_server, "[case:nobody-recorded-this]")
    [logged] = [r for r in hermes_server.engine_requests() if "nobody-recorded-this" in r["prompt"]]
    assert logged["recording"] is None
    assert "no recording's marker is in the prompt" in logged["error"]
    assert "[case:nobody-recorded-this]" in hermes_server.log_text()


def test_recordings_added_while_running_are_served(hermes_server: Any, qwen: Any) -> None:
    hermes_server.add(
        Recording.from_token_ids("late", qwen.encode("Late answer."), prompt_contains="[case:late]")
    )
    assert chat(hermes_server, "[case:late]").choices[0].message.content == "Late answer."


def test_a_client_disconnect_aborts_the_request(hermes_server: Any, qwen: Any) -> None:
    long_text = " ".join(f"word{i}" for i in range(400))
    hermes_server.add(
        Recording.from_token_ids("long", qwen.encode(long_text), prompt_contains="[case:long]")
    )
    stream = chat(hermes_server, "[case:long]", stream=True)
    for _, _chunk in zip(range(3), stream, strict=False):
        pass
    stream.close()
    [logged] = hermes_server.engine_requests("long")
    rid = logged["request_id"]
    events: list[dict[str, Any]] = []
    for _ in range(200):  # the abort reaches the engine asynchronously
        events = [r for r in hermes_server.requests() if r.get("request_id") == rid]
        if any(e["event"] in ("abort", "finish") for e in events):
            break
        time.sleep(0.05)
    assert [e["event"] for e in events] == ["request", "abort"]
    assert chat(hermes_server, "[case:plain]").choices[0].message.content == PLAIN  # still serving


def test_the_request_log_carries_the_structural_tag(hermes_server: Any, plain: Recording) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    response = chat(hermes_server, "[case:plain] (required)", tools=tools, tool_choice="required")
    [logged] = [r for r in hermes_server.engine_requests() if "(required)" in r["prompt"]]
    assert logged["request_id"].startswith(response.id)
    tag = logged["sampling"]["structured_outputs"]["structural_tag"]
    assert isinstance(tag, str)
    assert "<tool_call>" in tag
    assert "get_weather" in tag
