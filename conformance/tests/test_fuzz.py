"""Every installed parser on mutated corpus outputs (toolcall_conformance.fuzz).

The budget is ``TOOLCALL_FUZZ_EXAMPLES`` outputs per parser (default 150, what CI
runs, derandomized so that CI is repeatable); the on-demand ``fuzz`` nox session
runs a large budget with random seeds (``TOOLCALL_FUZZ_RANDOM=1``). A parser class
served under several names (an alias) is fuzzed once.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

from toolcall import Parsed, Parser, ToolCall
from toolcall.registry import Registry
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser, corpus_of
from toolcall_conformance.fuzz import (
    Example,
    Seed,
    check_output,
    check_stream_api,
    lost_words,
    outputs,
)

BUDGET = int(os.environ.get("TOOLCALL_FUZZ_EXAMPLES", "150"))
RANDOM = os.environ.get("TOOLCALL_FUZZ_RANDOM", "") not in ("", "0")

REGISTRY = Registry.load()


def _distinct_parsers() -> dict[str, type[Parser]]:
    """One name per parser class and corpus (aliases are not a second pass)."""
    chosen: dict[tuple[str, object], str] = {}
    for name in REGISTRY.names():
        parser_class = REGISTRY.get(name)
        key = (corpus_of(parser_class), parser_class.stream)
        chosen.setdefault(key, name)
    return {name: REGISTRY.get(name) for name in sorted(chosen.values())}


PARSERS = _distinct_parsers()
MARKERS = sorted({marker for cls in PARSERS.values() for marker in cls.markers})


def _seeds(parser_class: type[Parser]) -> list[Seed]:
    cases, errors = load_cases(shipped_case_dirs(corpus_of(parser_class)))
    assert not errors, errors
    seeds = []
    for case in cases:

        def make(case: object = case) -> Parser:
            return build_parser(parser_class, case)  # type: ignore[arg-type]

        seeds.append(Seed(case.text, make))
    return seeds


FUZZED = [name for name, cls in PARSERS.items() if shipped_case_dirs(corpus_of(cls))]


def test_every_parser_with_a_corpus_is_fuzzed() -> None:
    assert FUZZED, "no installed parser has a shipped corpus"
    assert {"hermes", "glm45"} <= set(FUZZED)


@pytest.mark.parametrize("name", FUZZED)
def test_mutated_outputs_keep_every_property(name: str) -> None:
    seeds = _seeds(PARSERS[name])

    @settings(
        max_examples=BUDGET,
        deadline=None,
        derandomize=not RANDOM,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(outputs(seeds, MARKERS))
    def run(example: Example) -> None:
        problems = check_output(example.seed.make_parser(), example.text, example.splits())
        assert not problems, "\n".join(problems)

    run()


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_the_stream_api_rejects_misuse_clearly(name: str) -> None:
    # Built for a corpus request where there is one: a parser whose format is data (hf)
    # needs the request's tokenizer metadata.
    seeds = _seeds(PARSERS[name]) if name in FUZZED else []
    parser = seeds[0].make_parser() if seeds else PARSERS[name]()
    assert check_stream_api(parser) == []


# -- the oracle itself -------------------------------------------------------------------


def test_the_oracle_sees_lost_words_and_forgives_escapes() -> None:
    text = 'Hello <tool_call>{"name": "f", "arguments": {"q": "caf\\u00e9 bar"}}</tool_call>'
    kept = Parsed(
        content="Hello",
        tool_calls=(ToolCall("id", "f", '{"q": "caf\\u00e9 bar"}'),),
    )
    assert lost_words(text, kept, ("<tool_call>", "</tool_call>")) == []
    dropped = Parsed(content=None, tool_calls=(ToolCall("id", "f", "{}"),))
    assert lost_words(text, dropped, ("<tool_call>", "</tool_call>")) == [
        "bar",
        "caf",
        "hello",
        "q",
    ]
    # A repeated word must be returned as often as it was written.
    twice = Parsed(content="Hello", tool_calls=())
    assert lost_words("Hello Hello", twice, ()) == ["hello"]
    # A marker cut off by the end of the output may be framing (missing-end): its
    # letters are not words the parse owes; the same letters elsewhere are.
    call = Parsed(content=None, tool_calls=(ToolCall("id", "f", "{}"),))
    markers = ("<tool_call>", "</tool_call>")
    cut = '<tool_call>{"name": "f", "arguments": {}}</tool_ca'
    assert lost_words(cut, call, markers) == []
    assert lost_words(cut + " x", call, markers) == ["ca", "x"]
