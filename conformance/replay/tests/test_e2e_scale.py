"""End to end at scale: ``vllm serve --api-server-count 2``, 128 concurrent streams.

vLLM's multi-process front end runs N API server processes behind one listening socket; each
one loads the ``vllm.general_plugins`` and looks the tool parser up by itself. With the
replay, each API server process has its own
replay engine (toolcall_replay.seams), and the parent starts no engine core.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from e2e_support import (
    Endpoint,
    ask_for,
    corpus,
    difference,
    expect_case,
    max_in_flight,
    no_bridge_errors,
    served_lines,
    stream_all,
)

from toolcall_conformance.cases import Case

pytestmark = pytest.mark.vllm

API_SERVERS = 2
CONCURRENT = 128
#: If the kernel handed every connection of the 128 to one API server, more waves of 16 go
#: out until the other one has answered too (its answers are checked like the first wave's).
EXTRA_WAVES, WAVE = 8, 16


def test_the_plugin_loads_in_every_api_server_process(e2e_hermes_2api: Endpoint) -> None:
    """Each API server process says, once, which distribution serves every name (through
    vLLM's default logging); the parent, which never looks a parser up, says nothing."""
    lines = e2e_hermes_2api.log.toolcall_lines()
    for name, message in served_lines().items():
        said = [line for line in lines if line.message == message]
        assert len(said) == API_SERVERS, (name, lines)
        assert {line.process for line in said} == {f"ApiServer_{i}" for i in range(API_SERVERS)}
        assert len({line.pid for line in said}) == API_SERVERS
    assert all(line.process.startswith("ApiServer_") for line in lines), lines


def test_128_concurrent_streams_are_all_exact(e2e_hermes_2api: Endpoint) -> None:
    server = e2e_hermes_2api.server
    cases = corpus("hermes", "qwen2.5")
    chosen = [cases[i % len(cases)] for i in range(CONCURRENT)]
    problems: list[str] = []

    def send(batch: list[Case], concurrency: int) -> None:
        answers = asyncio.run(
            asyncio.wait_for(stream_all(e2e_hermes_2api, batch, concurrency), timeout=900)
        )
        for case, answer in zip(batch, answers, strict=True):
            problem = difference(expect_case(case, "chat-stream", ask_for(case)), answer)
            if problem is not None:
                problems.append(f"{case.id}: {problem}")

    with no_bridge_errors(e2e_hermes_2api):
        send(chosen, CONCURRENT)
        in_flight = max_in_flight(server.requests(), {c.id for c in chosen})
        for wave in range(EXTRA_WAVES):
            if len(answered_by(server.requests())) >= API_SERVERS:
                break
            send(chosen[wave * WAVE : (wave + 1) * WAVE], WAVE)
    assert not problems, "\n".join(problems)
    by_process = answered_by(server.requests())
    print(f"requests answered per API server process: {dict(by_process)}")
    assert len(by_process) == API_SERVERS, by_process
    # They really were in flight together.
    assert in_flight > 1


def answered_by(log: list[dict[str, object]]) -> Counter[object]:
    """Requests per API server process (the replay engine writes its pid)."""
    return Counter(entry["pid"] for entry in log if entry["event"] == "request")
