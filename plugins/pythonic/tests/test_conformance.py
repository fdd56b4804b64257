"""The conformance kit on the shipped Python-call corpus: every case, every check."""

from __future__ import annotations

from collections import Counter

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestPythonic(ConformanceSuite):
    parser = "pythonic"


class TestOlmo3(ConformanceSuite):
    parser = "olmo3"


def test_the_corpus_is_as_large_and_as_real_as_the_issue_asks() -> None:
    pythonic, errors = load_cases(shipped_case_dirs("pythonic"))
    assert errors == []
    olmo3, errors = load_cases(shipped_case_dirs("olmo3"))
    assert errors == []
    assert len(pythonic) >= 25
    assert len(olmo3) >= 15
    assert {case.tokenizer for case in pythonic} == {"llama3.1"}
    assert {case.tokenizer for case in olmo3} == {"olmo3"}
    kinds = Counter(case.provenance["kind"] for case in pythonic)
    assert kinds["wild"] >= 10
    # Every wild case cites where it was quoted.
    assert all(
        "#" in case.provenance["source"] or "prompt-format" in case.provenance["source"]
        for case in pythonic
        if case.provenance["kind"] == "wild"
    )
    assert sum(case.expected.grammar is not None for case in pythonic + olmo3) >= 25
    # The olmo3 tokenizer is not the real file: every case says so.
    assert all("not available" in case.provenance["model"] for case in olmo3)
