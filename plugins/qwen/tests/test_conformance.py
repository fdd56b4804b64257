"""The conformance kit over the shipped ``qwen3_coder`` corpus: every case, every check
(one-shot, recorded steps, one token and one character per step, seeded random splits, the
delta contract, the grammar check with the place a reject must be refused).

``qwen3_xml`` is the same template under a second name (test_registry.py shows it), so the
corpus is run once, under ``qwen3_coder``.
"""

from __future__ import annotations

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestQwen3Coder(ConformanceSuite):
    parser = "qwen3_coder"


def test_the_corpus_is_large_enough() -> None:
    cases, errors = load_cases(shipped_case_dirs("qwen3_coder"))
    assert errors == []
    assert len(cases) >= 15
    kinds = {case.provenance["kind"] for case in cases}
    assert {"template", "wild", "constructed"} <= kinds
    assert all(case.tokenizer == "qwen3" for case in cases)
    verdicts = {case.expected.grammar for case in cases}
    assert {"accept", "reject"} <= verdicts
    assert sum(bool(case.request.get("constrained")) for case in cases) >= 3
    choices = {str(case.request.get("tool_choice")) for case in cases}
    assert {"none", "required", "auto"} <= choices
    assert any(isinstance(case.request.get("tool_choice"), dict) for case in cases)
    assert any(case.request.get("parallel_tool_calls") is False for case in cases)


def test_no_case_is_shipped_under_the_alias() -> None:
    assert load_cases(shipped_case_dirs("qwen3_xml"))[0] == []
