"""The conformance kit on the shipped hf corpus: every case, every check, grammar included."""

from __future__ import annotations

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestHf(ConformanceSuite):
    parser = "hf"


def test_the_corpus_is_large_enough() -> None:
    cases, errors = load_cases(shipped_case_dirs("hf"))
    assert errors == []
    assert len(cases) >= 25
    templates = {str(case.response_template) for case in cases}
    assert len(templates) >= 3
    assert {"template", "constructed"} <= {case.provenance["kind"] for case in cases}
    assert sum(case.expected.grammar is not None for case in cases) >= 20
    assert any(case.prompt for case in cases)
    assert any(case.expected.reasoning for case in cases)
