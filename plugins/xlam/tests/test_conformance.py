"""The conformance kit on the shipped xlam corpus, parsed by the installed ``xlam`` name."""

from __future__ import annotations

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestXlam(ConformanceSuite):
    parser = "xlam"


def test_the_corpus_is_large_enough() -> None:
    cases, errors = load_cases(shipped_case_dirs("xlam"))
    assert errors == []
    assert len(cases) >= 15
    assert {case.tokenizer for case in cases} == {"llama3.1", "qwen2.5"}
    assert {"template", "wild", "constructed"} <= {case.provenance["kind"] for case in cases}
