"""Generating an output under a grammar (``request.constrained`` cases): every token the
generator picks is one the grammar allows at that step, the ids spell the text, and a text
the grammar forbids cannot be generated."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit_helpers import PROVENANCE, REQUEST, TAG

from toolcall_conformance.builder import BuildError, build_case_under_grammar
from toolcall_conformance.cases import load_case, write_case
from toolcall_conformance.checks import run_case
from toolcall_conformance.constrained import GenerationError, generate_under_grammar
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import RealTokenizer, get_tokenizer
from toolcall_example_tags import ExampleTagsParser


@pytest.fixture(scope="module")
def qwen() -> RealTokenizer:
    return get_tokenizer("qwen2.5")


@pytest.fixture(scope="module")
def session() -> GrammarSession:
    return GrammarSession()


def test_the_ids_spell_the_text_and_the_grammar_accepts_each(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    text = 'Sum: <f>{"n": 12345}</f> — done ✓'
    ids = generate_under_grammar(TAG, qwen, text, seed="a", session=session)
    assert qwen.decode(ids) == text
    stops = qwen.stop_token_ids
    outcome = session.match(session.compile(TAG, qwen), [*ids, stops[0]], stops)
    assert outcome.accepted
    # The same seed gives the same ids; the choice is among several tokenizations.
    assert generate_under_grammar(TAG, qwen, text, seed="a", session=session) == ids
    others = {
        tuple(generate_under_grammar(TAG, qwen, text, seed=seed, session=session))
        for seed in "bcdef"
    }
    assert len(others | {tuple(ids)}) > 1


def test_a_text_the_grammar_forbids_cannot_be_generated(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    with pytest.raises(GenerationError) as info:
        generate_under_grammar(TAG, qwen, '<f>{"n": "seven"}</f>', seed="a", session=session)
    assert str(info.value).startswith("the grammar allows no token that continues the text after")
    assert "(byte 9 of 21)" in str(info.value)
    # A call that is not closed may not end the output.
    with pytest.raises(GenerationError, match="does not allow the output to end after '<f>"):
        generate_under_grammar(TAG, qwen, '<f>{"n": 1}', seed="a", session=session)


def test_a_constrained_case_is_built_and_passes(tmp_path: Path) -> None:
    text = '<call name="get_weather">{"city": "Zürich"}</call>'
    data = build_case_under_grammar(
        ExampleTagsParser,
        tokenizer="qwen2.5",
        text=text,
        request={**REQUEST, "tool_choice": "required"},
        provenance=PROVENANCE,
        expected={
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Zürich"}}],
        },
        case_id="example_tags/qwen2.5/constrained",
        seed="constrained",
    )
    assert data["request"]["constrained"] is True
    assert "generate_under_grammar with seed 'constrained'" in data["provenance"]["notes"]
    assert "strict level auto" in data["provenance"]["notes"]
    case = load_case(write_case(data, tmp_path / "constrained.json"))
    assert case.text == text
    results = {r.check: r for r in run_case(ExampleTagsParser, case)}
    assert results["grammar-constrained"].passed, str(results["grammar-constrained"])


def test_no_grammar_no_constrained_case() -> None:
    with pytest.raises(BuildError, match="example_tags applies no grammar to this request"):
        build_case_under_grammar(
            ExampleTagsParser,
            tokenizer="qwen2.5",
            text="hello",
            request=REQUEST,  # auto at level auto: vLLM applies no grammar
            provenance=PROVENANCE,
            expected={"content": "hello", "tool_calls": []},
            case_id="example_tags/qwen2.5/unconstrained",
            seed="x",
        )
    with pytest.raises(BuildError, match="the grammar allows no token"):
        build_case_under_grammar(
            ExampleTagsParser,
            tokenizer="qwen2.5",
            text='<call name="get_time">{}</call>',
            request={**REQUEST, "tool_choice": "required"},
            provenance=PROVENANCE,
            expected={"content": None, "tool_calls": [{"name": "get_time", "arguments": {}}]},
            case_id="example_tags/qwen2.5/undeclared",
            seed="x",
        )
