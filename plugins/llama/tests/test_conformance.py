"""The shipped Llama corpora: the conformance kit's checks for each parser name (the parse,
the recorded steps, one token and one character per step and random splits, each under the
delta contract, and the grammar), and the corpus itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolcall import Parser
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.pytest_plugin import ConformanceSuite
from toolcall_llama import Llama3JsonParser, Llama4JsonParser, Llama4PythonicParser

PARSERS: dict[str, type[Parser]] = {
    "llama3_json": Llama3JsonParser,
    "llama4_json": Llama4JsonParser,
    "llama4_pythonic": Llama4PythonicParser,
}
CASES = {name: load_cases(shipped_case_dirs(name)) for name in PARSERS}
ALL = [(case, PARSERS[name]) for name, (cases, _) in CASES.items() for case in cases]
CORPUS_SCRIPT = Path(__file__).resolve().parents[3] / "conformance" / "corpus" / "llama.py"


class TestLlama3JsonConformance(ConformanceSuite):
    parser = Llama3JsonParser


class TestLlama4JsonConformance(ConformanceSuite):
    parser = Llama4JsonParser


class TestLlama4PythonicConformance(ConformanceSuite):
    parser = Llama4PythonicParser


@pytest.mark.parametrize(
    ("name", "least", "tokenizers"),
    [
        ("llama3_json", 25, {"llama3.1"}),
        ("llama4_json", 10, {"llama4"}),
        ("llama4_pythonic", 20, {"llama4"}),
    ],
)
def test_the_corpus_loads_and_is_large_enough(name: str, least: int, tokenizers: set[str]) -> None:
    cases, errors = CASES[name]
    assert errors == []
    assert len(cases) >= least
    assert {case.tokenizer for case in cases} == tokenizers
    kinds = {case.provenance["kind"] for case in cases}
    assert {"template", "constructed", "wild"} <= kinds
    for case in cases:
        assert case.id.startswith(f"{name}/{case.tokenizer}/")
        decidable = case.finish_reason == "stop" and case.request.get("tool_choice") != "none"
        if case.expected.grammar is not None:
            assert decidable, case.id


def test_the_markers_are_single_special_tokens() -> None:
    """<|python_tag|> is 128010 in the Llama 3.1 vocabulary; <|python_start|> and
    <|python_end|> are 200016 and 200017 in Llama 4's: one token each, as vLLM's
    detokenizer hands them over (skip_special_tokens off)."""
    seen = set()
    for case, _ in ALL:
        ids = [i for step in case.steps for i in (step.token_ids or ())]
        for marker, token in (
            ("<|python_tag|>", 128010),
            ("<|python_start|>", 200016),
            ("<|python_end|>", 200017),
        ):
            if marker in case.text:
                assert case.special_tokens[marker] == token
                assert token in ids
                assert any(step.text == marker for step in case.steps)
                seen.add(marker)
    assert seen == {"<|python_tag|>", "<|python_start|>", "<|python_end|>"}


def test_no_case_holds_a_stop_token() -> None:
    """<|eom_id|>, <|eot_id|>, <|eot|> and <|eom|> end generation: vLLM never hands them
    to the parser, so no case text holds one."""
    for case, _ in ALL:
        for stop in ("<|eom_id|>", "<|eot_id|>", "<|eot|>", "<|eom|>", "<|end_of_text|>"):
            assert stop not in case.text, case.id
        stops = set(case.stop_token_ids)
        assert not stops & {i for step in case.steps for i in (step.token_ids or ())}


@pytest.mark.skipif(not CORPUS_SCRIPT.exists(), reason="runs from a checkout of the monorepo")
def test_the_case_files_are_what_the_corpus_script_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(CORPUS_SCRIPT), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
