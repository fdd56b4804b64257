"""The conformance kit on the shipped GLM corpus: every case, every check, grammar included.

Each parser is checked against its own corpus through the kit's pytest base class, and
against the other framing's corpus too: both parsers read both framings.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.checks import Resources, run_case
from toolcall_conformance.pytest_plugin import ConformanceSuite
from toolcall_glm import Glm45Parser, Glm47Parser


class TestGlm45(ConformanceSuite):
    parser = "glm45"


class TestGlm47(ConformanceSuite):
    parser = "glm47"


def other_corpus(parser_class: type[Glm45Parser]) -> list[Any]:
    other = "glm47" if parser_class is Glm45Parser else "glm45"
    cases, errors = load_cases(shipped_case_dirs(other))
    assert errors == []
    return cases


def test_the_corpus_is_large_enough() -> None:
    cases, errors = load_cases(shipped_case_dirs("glm45") + shipped_case_dirs("glm47"))
    assert errors == []
    assert len(cases) >= 25
    kinds = {case.provenance["kind"] for case in cases}
    assert {"template", "wild", "constructed"} <= kinds
    assert all(case.tokenizer == "glm4.5" for case in cases)
    assert sum(case.expected.grammar is not None for case in cases) >= 25


@pytest.fixture(scope="module")
def resources() -> Resources:
    return Resources()


@pytest.mark.parametrize("parser_class", [Glm45Parser, Glm47Parser])
def test_each_parser_passes_the_other_framings_corpus(
    parser_class: type[Glm45Parser], resources: Resources
) -> None:
    failures = [
        str(result)
        for case in other_corpus(parser_class)
        for result in run_case(parser_class, case, resources)
        if not result.passed
    ]
    assert failures == []
