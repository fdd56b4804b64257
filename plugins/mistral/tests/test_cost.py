"""Linear cost on every input shape (DESIGN §4.7), degenerate ones included, measured by
toolcall.contract.check_cost (no clock: Python trace events and allocations per delta)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from mistral_testing import make_parser

from toolcall.contract import check_cost, check_stream

PIECES = [" lorem", " ipsum", "\\n", " 東京", '\\"', " [TOOL_CALLS]", " [ARGS]", ",", " 42"]


def v11_arguments(n: int) -> list[str]:
    head = ["[TOOL_CALLS]", "search", "[ARGS]", '{"', "query", '":', ' "']
    return head + [PIECES[i % len(PIECES)] for i in range(n)] + ['"}']


def pre_v11_arguments(n: int) -> list[str]:
    head = ["[TOOL_CALLS]", " [", '{"', "name", '":', ' "', "search", '",', ' "', "arguments"]
    head += ['":', ' {"', "query", '":', ' "']
    return head + [PIECES[i % len(PIECES)] for i in range(n)] + ['"}}]']


def many_v11_calls(n: int) -> list[str]:
    return [piece for _ in range(n) for piece in ("[TOOL_CALLS]", "get_time", "[ARGS]", "{}")]


def many_list_calls(n: int) -> list[str]:
    call = ['{"', "name", '":', ' "get_time"', ",", ' "arguments"', ":", " {}", "}"]
    steps = ["[TOOL_CALLS]", "["]
    for index in range(n):
        steps += ([", "] if index else []) + call
    return [*steps, "]"]


def whitespace_run(n: int) -> list[str]:
    return ["Hello", *([" "] * n), "[TOOL_CALLS]", *(["\n"] * n), "get_time", "[ARGS]", "{}"]


def deep_nesting(n: int) -> list[str]:
    return ["[TOOL_CALLS]", "search", "[ARGS]", '{"a": ', *(["["] * n), *(["]"] * n), "}"]


def partial_markers(n: int) -> list[str]:
    return ["[TOOL", "_CALL", "x "] * n


def content(n: int) -> list[str]:
    return [" plain", " text", " [not a marker]", " and", " more"] * (n // 5)


def list_whitespace(n: int) -> list[str]:
    return ["[TOOL_CALLS]", *([" "] * n), "[", *(["\n"] * n), '{"name": "get_time"}', "]"]


def held_name(n: int) -> list[str]:
    return ["[TOOL_CALLS]", *(["\t"] * n), "get", "_time", *([" "] * n), "[ARGS]", "{}"]


SHAPES: dict[str, Callable[[int], list[str]]] = {
    "v11-arguments": v11_arguments,
    "pre-v11-arguments": pre_v11_arguments,
    "many-v11-calls": many_v11_calls,
    "many-list-calls": many_list_calls,
    "whitespace-run": whitespace_run,
    "deep-nesting": deep_nesting,
    "partial-markers": partial_markers,
    "content": content,
    "list-whitespace": list_whitespace,
    "held-name": held_name,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_cost_per_delta_does_not_grow(shape: str) -> None:
    assert check_cost(make_parser(), SHAPES[shape]) == []


def test_ten_thousand_calls_keep_the_contract() -> None:
    steps = many_v11_calls(10_000)
    parsed, violations = check_stream(make_parser(), steps)
    assert violations == []
    assert len(parsed.tool_calls) == 10_000
    listed, violations = check_stream(make_parser(), many_list_calls(10_000))
    assert violations == []
    assert len(listed.tool_calls) == 10_000
