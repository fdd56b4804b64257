"""The conformance kit on the shipped Mistral corpus: every case, every check, grammar included."""

from __future__ import annotations

import regex

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite


class TestMistral(ConformanceSuite):
    parser = "mistral"


def test_the_corpus_covers_both_generations_and_three_tokenizers() -> None:
    cases, errors = load_cases(shipped_case_dirs("mistral"))
    assert errors == []
    assert len(cases) >= 30
    tokenizers = {case.tokenizer for case in cases}
    assert tokenizers == {"mistral-v3", "mistral-tekken", "mistral-tekken-v11"}
    kinds = {case.provenance["kind"] for case in cases}
    assert {"template", "wild", "constructed"} <= kinds
    wild = [case for case in cases if case.provenance["kind"] == "wild"]
    assert len(wild) >= 6
    # Every wild case names its public source: a thread (owner/repo#number) or a file of a
    # public repository (owner/repo path).
    public = regex.compile(r"[\w.-]+/[\w.-]+(?:#\d+| [\w./-]+)")
    assert all(public.match(case.provenance["source"]) for case in wild)
    v11 = [case for case in cases if "[ARGS]" in case.text]
    pre_v11 = [case for case in cases if "[TOOL_CALLS]" in case.text and "[ARGS]" not in case.text]
    assert len(v11) >= 10
    assert len(pre_v11) >= 10
    assert sum(case.expected.grammar is not None for case in cases) >= 30
