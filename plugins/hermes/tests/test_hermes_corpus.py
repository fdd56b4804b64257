"""The shipped Hermes corpus: the conformance kit's checks for both parser names, the
delta contract on every case's recorded engine steps, and the corpus itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolcall import ParserContext, Vocabulary
from toolcall.contract import check_stream
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.compare import first_difference
from toolcall_conformance.pytest_plugin import ConformanceSuite
from toolcall_hermes import HermesParser, Qwen3JsonParser

CASES, ERRORS = load_cases(shipped_case_dirs("hermes"))
CORPUS_SCRIPT = Path(__file__).resolve().parents[3] / "conformance" / "corpus" / "hermes.py"


class TestHermesConformance(ConformanceSuite):
    parser = HermesParser


class TestQwen3JsonConformance(ConformanceSuite):
    parser = Qwen3JsonParser


def test_the_corpus_loads_and_is_large_enough() -> None:
    assert ERRORS == []
    assert len(CASES) >= 25
    kinds = {case.provenance["kind"] for case in CASES}
    assert {"template", "constructed", "wild"} <= kinds
    assert {case.tokenizer for case in CASES} == {"qwen2.5", "llama3.1"}
    for case in CASES:
        assert case.id.startswith(f"hermes/{case.tokenizer}/")
        # A grammar verdict wherever one is decidable: every output not cut off.
        assert (case.expected.grammar is None) == (case.finish_reason == "length"), case.id


def test_the_markers_are_single_tokens_for_qwen_and_plain_text_for_llama() -> None:
    for case in CASES:
        ids = [i for step in case.steps for i in (step.token_ids or ())]
        if case.tokenizer == "qwen2.5" and "<tool_call>" in case.text:
            assert case.special_tokens.get("<tool_call>") == 151657
            assert 151657 in ids
        if case.tokenizer == "llama3.1":
            assert "<tool_call>" not in case.special_tokens


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
@pytest.mark.parametrize("parser_class", [HermesParser, Qwen3JsonParser])
def test_recorded_steps_keep_the_contract(case: Case, parser_class: type[HermesParser]) -> None:
    parser = parser_class(
        ParserContext(
            request=case.request_view(),
            vocabulary=Vocabulary(special_tokens=dict(case.special_tokens)),
        )
    )
    steps = [step.text for step in case.steps]
    token_ids = [list(step.token_ids or ()) for step in case.steps]
    parsed, violations = check_stream(
        parser, steps, token_ids=token_ids, promptness=not case.expected.recoveries
    )
    assert violations == [], "\n".join(map(str, violations))
    assert first_difference(case.expected, parsed) is None


@pytest.mark.skipif(not CORPUS_SCRIPT.exists(), reason="runs from a checkout of the monorepo")
def test_the_case_files_are_what_the_corpus_script_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(CORPUS_SCRIPT), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
