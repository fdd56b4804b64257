"""Every installed parser on mutated corpus outputs (toolcall_conformance.fuzz).

The budget is ``TOOLCALL_FUZZ_EXAMPLES`` outputs per parser (default 150, what CI
runs, derandomized so that CI is repeatable); the on-demand ``fuzz`` nox session
runs a large budget with random seeds (``TOOLCALL_FUZZ_RANDOM=1``). A parser class
served under several names (an alias) is fuzzed once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from toolcall import Delta, Parsed, Parser, Stream, ToolCall
from toolcall.registry import Registry
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.checks import corpus_of
from toolcall_conformance.fuzz import (
    Finding,
    Seed,
    check_stream_api,
    installed_markers,
    lost_words,
    search,
    seeds_from_cases,
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
MARKERS = installed_markers(REGISTRY)


def _seeds(parser_class: type[Parser]) -> list[Seed]:
    cases, errors = load_cases(shipped_case_dirs(corpus_of(parser_class)))
    assert not errors, errors
    return seeds_from_cases(parser_class, cases)


FUZZED = [name for name, cls in PARSERS.items() if shipped_case_dirs(corpus_of(cls))]


def test_every_parser_with_a_corpus_is_fuzzed() -> None:
    assert FUZZED, "no installed parser has a shipped corpus"
    assert {"hermes", "glm45"} <= set(FUZZED)


@pytest.mark.parametrize("name", FUZZED)
def test_mutated_outputs_keep_every_property(name: str) -> None:
    searched = search(_seeds(PARSERS[name]), MARKERS, examples=BUDGET, randomize=RANDOM)
    assert searched.finding is None, str(searched.finding)
    assert searched.examples >= 1


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


# -- the search ----------------------------------------------------------------------------


class _Swallowing:
    """A stream that loses everything it is fed."""

    events = ()
    framing = ()

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        return []

    def finish(self) -> list[Delta]:
        return []


class _Forgetful(Parser):
    name = "forgetful"
    markers = ("<call",)

    def stream(self) -> Stream:
        return _Swallowing()


def test_the_search_finds_a_parser_that_loses_text_and_names_the_output() -> None:
    searched = search([Seed("Hello there", _Forgetful)], [], examples=5)
    finding = searched.finding
    assert isinstance(finding, Finding)
    assert not searched.ok
    assert searched.examples == 1  # the seed itself already loses its words
    assert any("does not return" in problem for problem in finding.problems)
    assert repr(finding.text) in str(finding)


def test_the_search_is_repeatable_and_wants_seeds_and_a_budget() -> None:
    seeds = seeds_from_cases(PARSERS["hermes"], load_cases(shipped_case_dirs("hermes"))[0])
    first = search(seeds, MARKERS, examples=10)
    assert first == search(seeds, MARKERS, examples=10)
    assert first.ok
    assert 1 <= first.examples <= 10
    with pytest.raises(ValueError, match="no seed outputs"):
        search([], MARKERS, examples=10)
    with pytest.raises(ValueError, match="at least one output"):
        search(seeds, MARKERS, examples=0)


def test_installed_markers_cover_every_installed_parser() -> None:
    assert set(MARKERS) >= {marker for cls in PARSERS.values() for marker in cls.markers}
    assert "<call" in installed_markers(REGISTRY, _Forgetful)


def test_a_stream_that_breaks_on_plain_use_is_a_problem_not_a_crash() -> None:
    class Broken(_Forgetful):
        name = "broken"

        def stream(self) -> Stream:
            raise RuntimeError("no stream today")

    assert check_stream_api(Broken()) == ["stream() raised RuntimeError: no stream today"]

    def build() -> Parser:
        raise RuntimeError("no tokenizer")

    assert check_stream_api(build) == ["building the parser raised RuntimeError: no tokenizer"]
    assert check_stream_api(Broken) == ["stream() raised RuntimeError: no stream today"]
    # A stream that accepts anything: every misuse is named.
    problems = check_stream_api(_Forgetful())
    assert "feed(None) was accepted" in problems
    assert "feed() after finish() was accepted" in problems
