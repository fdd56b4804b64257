"""End to end: the request options around a parse, through the real server with our plugin.

tool_choice auto / required / named / none (and no tools at all), parallel_tool_calls=false,
max_tokens cut-offs at every length, n=2, a client that disconnects mid-stream, and 64
concurrent streams. Every expectation is derived from a shipped case and the parsing policy
(DESIGN §6): required and named choices are parsed from the family's own format like auto;
with ``tool_choice: "none"`` (or no tools) the whole output is content, markup included.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from e2e_support import (
    APIS,
    Ask,
    Endpoint,
    ask_for,
    chat_answers,
    chat_stream_answers,
    corpus,
    difference,
    expect,
    expect_case,
    max_in_flight,
    no_bridge_errors,
    stream_all,
)

from toolcall import ToolCall
from toolcall_conformance.cases import Case, ExpectedCall
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_replay.script import Recording

pytestmark = pytest.mark.vllm

# Content, then two calls, then content again.
HERMES_CASE = "hermes/qwen2.5/content-around-calls"
GLM_CASE = "glm45/glm4.5/template-parallel-calls"


def case_named(parser: str, tokenizer: str, case_id: str) -> Case:
    [case] = [c for c in corpus(parser, tokenizer) if c.id == case_id]
    return case


@pytest.fixture(scope="module")
def hermes_case() -> Case:
    case = case_named("hermes", "qwen2.5", HERMES_CASE)
    assert len(case.expected.tool_calls) == 2  # the premise
    assert case.expected.content
    return case


@pytest.fixture(scope="module")
def glm_case() -> Case:
    case = case_named("glm45", "glm4.5", GLM_CASE)
    assert len(case.expected.tool_calls) == 2  # the premise
    return case


def check(endpoint: Endpoint, api: str, ask: Ask, expected: Any) -> None:
    with no_bridge_errors(endpoint):
        answer = endpoint.send(api, ask)
    problem = difference(expected, answer, api)
    assert problem is None, f"{api}: {problem}\n  expected {expected}\n  got {answer}"


# -- tool_choice ------------------------------------------------------------------------------


def choices(case: Case) -> list[Any]:
    first = case.expected.tool_calls[0].name
    named = {"type": "function", "function": {"name": first}}
    return [
        pytest.param("auto", id="auto"),
        pytest.param("required", id="required"),
        pytest.param(named, id="named"),
        pytest.param("none", id="none"),
    ]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("choice", choices(case_named("hermes", "qwen2.5", HERMES_CASE)))
def test_tool_choice_hermes(e2e_hermes: Endpoint, hermes_case: Case, choice: Any, api: str) -> None:
    tool_choice(e2e_hermes, hermes_case, choice, api)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("choice", choices(case_named("glm45", "glm4.5", GLM_CASE)))
def test_tool_choice_glm45(e2e_glm45: Endpoint, glm_case: Case, choice: Any, api: str) -> None:
    tool_choice(e2e_glm45, glm_case, choice, api)


def tool_choice(endpoint: Endpoint, case: Case, choice: Any, api: str) -> None:
    ask = Ask(marker=ask_for(case).marker, tools=ask_for(case).tools, tool_choice=choice)
    if choice == "none":
        # Everything is content, the calls' markup included (DESIGN §6).
        expected = expect(case.text, (), api, ask, length=False)
    else:
        expected = expect_case(case, api, ask)
    check(endpoint, api, ask, expected)


@pytest.mark.parametrize("api", APIS)
def test_no_tools_is_all_content(e2e_hermes: Endpoint, hermes_case: Case, api: str) -> None:
    ask = Ask(marker=ask_for(hermes_case).marker)
    check(e2e_hermes, api, ask, expect(hermes_case.text, (), api, ask, length=False))


# -- parallel_tool_calls=false ------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_parallel_tool_calls_false_keeps_the_first_call(
    e2e_hermes: Endpoint, hermes_case: Case, api: str
) -> None:
    base = ask_for(hermes_case)
    ask = Ask(marker=base.marker, tools=base.tools, parallel_tool_calls=False)
    expected = expect_case(hermes_case, api, ask)
    assert len(expected.calls) == 1  # vLLM keeps call 0 only
    check(e2e_hermes, api, ask, expected)


# -- max_tokens cut-offs ---------------------------------------------------------------------


@pytest.mark.parametrize("family", ["hermes", "glm45"])
def test_max_tokens_cuts_at_every_length(
    request: pytest.FixtureRequest, family: str, hermes_case: Case, glm_case: Case
) -> None:
    """Cut the output after every k ids (k = 1 … all of them). At each k, streaming and not
    agree exactly, ``finish_reason`` is ``length``, the calls are the first calls of the
    whole output, complete ones with their full arguments, and (DESIGN §6: a cut call keeps
    the arguments the stream had emitted) each call's arguments only grow with k."""
    endpoint: Endpoint = request.getfixturevalue(
        "e2e_hermes" if family == "hermes" else "e2e_glm45"
    )
    case = hermes_case if family == "hermes" else glm_case
    total = len(case.token_ids or ())
    full = case.expected.tool_calls
    previous: tuple[ToolCall, ...] = ()
    problems: list[str] = []
    with no_bridge_errors(endpoint):
        for k in range(1, total + 1):
            ask = Ask(marker=ask_for(case).marker, tools=ask_for(case).tools, max_tokens=k)
            plain = endpoint.send("chat", ask)
            streamed = endpoint.send("chat-stream", ask)
            problems += [f"k={k}: {p}" for p in cut_problems(plain, streamed, full, previous)]
            previous = plain.calls
    assert [c.name for c in previous] == [c.name for c in full]
    assert not problems, "\n".join(problems)


def cut_problems(
    plain: Any, streamed: Any, full: tuple[ExpectedCall, ...], previous: tuple[ToolCall, ...]
) -> list[str]:
    found = []
    if (plain.content or "").strip() != (streamed.content or "").strip():
        found.append(f"content differs: {plain.content!r} vs streamed {streamed.content!r}")
    pairs = [(c.name, c.arguments) for c in plain.calls]
    if pairs != [(c.name, c.arguments) for c in streamed.calls]:
        found.append(f"calls differ: {plain.calls} vs streamed {streamed.calls}")
    if (plain.finish, streamed.finish) != ("length", "length"):
        found.append(f"finish_reason {plain.finish!r} / streamed {streamed.finish!r}")
    if [c.name for c in plain.calls] != [c.name for c in full[: len(plain.calls)]]:
        found.append(f"calls {[c.name for c in plain.calls]} are not the first of {full}")
    for index, call in enumerate(plain.calls[:-1]):
        if json.loads(call.arguments) != full[index].arguments:
            found.append(f"call {index} was complete but has {call.arguments!r}")
    for index, call in enumerate(previous):
        if index < len(plain.calls) and not grows(call.arguments, plain.calls[index].arguments):
            found.append(
                f"call {index}: {call.arguments!r} became {plain.calls[index].arguments!r}"
            )
    if len(plain.calls) < len(previous):
        found.append(f"a call disappeared: {previous} -> {plain.calls}")
    return found


def grows(before: str, after: str) -> bool:
    """``after`` continues ``before``. One exception: a body that looked complete at the cut
    was closed by the ``missing-end`` recovery (DESIGN §6), and one id later it is open again
    (GLM closes ``{"city": "London"`` with ``}`` after ``</arg_value>``, and a call with no
    arguments yet as ``{}``)."""
    if after.startswith(before):
        return True
    closed = before.endswith("}")
    return closed and (after.startswith(before[:-1]) or (before == "{}" and not after))


WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
#: A GLM call whose output ends right after a closed value (DESIGN §6: ``missing-end``,
#: the call is closed).
ENDS_AFTER_A_VALUE = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"


def test_the_flush_vllm_merges_into_the_last_chunk(e2e_glm45: Endpoint) -> None:
    """The output ends (``max_tokens``) in the step that closes the value: that step's
    fragment (the closing quote) and the flush's ``}`` reach the client in the chunk that
    carries the ``finish_reason``, two entries for call 0 (vLLM's merge, core/README.md).
    The stream assembles to the closed call, and that chunk is the only place where the
    assembly tolerates two entries."""
    ids = get_tokenizer("glm4.5").encode(ENDS_AFTER_A_VALUE)
    e2e_glm45.server.add(
        Recording.from_token_ids("ends-after-a-value", ids, prompt_contains="[e2e:ends]")
    )
    ask = Ask(marker="[e2e:ends]", tools=(WEATHER,), max_tokens=len(ids))
    with no_bridge_errors(e2e_glm45):
        stream = e2e_glm45.openai.chat.completions.create(
            **ask.chat_body(e2e_glm45.model), stream=True
        )
        with stream:
            chunks = list(stream)
    [answer] = chat_stream_answers(chunks)
    expected_call = ExpectedCall("get_weather", {"city": "Paris"})
    expected = expect(None, (expected_call,), "chat-stream", ask, length=True)
    assert difference(expected, answer, "chat-stream") is None, answer
    # GLM emits the value's closing quote at </arg_value> (the last step) and the call's
    # "}" from finish() (the flush); should that change, this needs an output whose last
    # step and flush both carry a fragment.
    [last] = [c.choices[0] for c in chunks if c.choices and c.choices[0].finish_reason]
    entries = [(e.index, e.function.arguments) for e in last.delta.tool_calls or ()]
    assert entries == [(0, '"'), (0, "}")]
    # anywhere else, two entries for one call are a stream-shape problem
    moved = [c.model_copy(deep=True) for c in chunks]
    for chunk in moved:
        if chunk.choices and chunk.choices[0].finish_reason:
            chunk.choices[0].finish_reason = None
    [strict] = chat_stream_answers(moved)
    assert any("2 entries for call 0" in problem for problem in strict.problems)


# -- n=2 ----------------------------------------------------------------------------------------


def test_n_2_gives_both_choices_the_parse(e2e_hermes: Endpoint, hermes_case: Case) -> None:
    ask = ask_for(hermes_case)
    body = {**ask.chat_body(e2e_hermes.model), "n": 2}
    with no_bridge_errors(e2e_hermes):
        plain = chat_answers(e2e_hermes.openai.chat.completions.create(**body))
        with e2e_hermes.openai.chat.completions.create(**body, stream=True) as stream:
            streamed = chat_stream_answers(stream)
    expected = expect_case(hermes_case, "chat", ask)
    assert len(plain) == len(streamed) == 2
    for answer in [*plain, *streamed]:
        assert difference(expected, answer, "chat") is None, answer
    ids = [call.id for answer in [*plain, *streamed] for call in answer.calls]
    assert len(set(ids)) == len(ids), f"call ids repeat across choices: {ids}"


# -- a client disconnecting mid-stream ---------------------------------------------------------

LONG_TEXT = " ".join(f"line {i} of the file" for i in range(300))
LONG_OUTPUT = (
    "Writing it now.\n<tool_call>\n"
    + json.dumps({"name": "write_file", "arguments": {"path": "notes.txt", "content": LONG_TEXT}})
    + "\n</tool_call>"
)
WRITE_FILE: Any = {
    "type": "function",
    "function": {
        "name": "write_file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        },
    },
}


def test_a_client_disconnecting_mid_call(e2e_hermes: Endpoint) -> None:
    qwen = get_tokenizer("qwen2.5")
    e2e_hermes.server.add(
        Recording.from_token_ids(
            "long-call", qwen.encode(LONG_OUTPUT), prompt_contains="[e2e:long]"
        )
    )
    ask = Ask(marker="[e2e:long]", tools=(WRITE_FILE,))
    with no_bridge_errors(e2e_hermes):
        stream = e2e_hermes.openai.chat.completions.create(
            **ask.chat_body(e2e_hermes.model), stream=True
        )
        argument_chunks = 0
        with stream:
            for chunk in stream:
                calls = chunk.choices[0].delta.tool_calls if chunk.choices else None
                argument_chunks += bool(calls)
                if argument_chunks >= 5:  # inside the call's arguments
                    break
        [logged] = e2e_hermes.server.engine_requests("long-call")
        events = wait_for_end(e2e_hermes, logged["request_id"])
        assert [e["event"] for e in events] == ["request", "abort"]
        # The server goes on serving, and the same output in full is exact.
        answer = e2e_hermes.send("chat-stream", ask)
    expected_call = ExpectedCall("write_file", {"path": "notes.txt", "content": LONG_TEXT})
    expected = expect("Writing it now.", (expected_call,), "chat-stream", ask, length=False)
    assert difference(expected, answer, "chat-stream") is None, answer


def wait_for_end(endpoint: Endpoint, request_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(400):  # the abort reaches the engine asynchronously
        events = [r for r in endpoint.server.requests() if r.get("request_id") == request_id]
        if any(e["event"] in ("abort", "finish") for e in events):
            break
        time.sleep(0.05)
    return events


# -- 64 concurrent streams ----------------------------------------------------------------------

CONCURRENT = 64


def test_64_concurrent_streams_are_all_exact(e2e_hermes: Endpoint) -> None:
    cases = corpus("hermes", "qwen2.5")
    chosen = [cases[i % len(cases)] for i in range(CONCURRENT)]
    with no_bridge_errors(e2e_hermes):
        answers = asyncio.run(
            asyncio.wait_for(stream_all(e2e_hermes, chosen, CONCURRENT), timeout=600)
        )
    problems = []
    for case, answer in zip(chosen, answers, strict=True):
        problem = difference(expect_case(case, "chat-stream", ask_for(case)), answer)
        if problem is not None:
            problems.append(f"{case.id}: {problem}")
    assert not problems, "\n".join(problems)
    # They really were in flight together: the engine had many of them at once.
    assert max_in_flight(e2e_hermes.server.requests(), {c.id for c in chosen}) > 1
