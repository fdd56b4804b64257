"""The grammar machinery on its own: a tiny structural tag compiled against the real
Qwen2.5 tokenizer, fed real token ids (accept, reject at the diverging token, termination
only on a stop token)."""

from __future__ import annotations

import pytest
from kit_helpers import TAG

from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import RealTokenizer, get_tokenizer


@pytest.fixture(scope="module")
def qwen() -> RealTokenizer:
    return get_tokenizer("qwen2.5")


@pytest.fixture(scope="module")
def session() -> GrammarSession:
    return GrammarSession()


def test_a_valid_output_is_accepted_and_terminates_on_a_stop_token(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    compiled = session.compile(TAG, qwen)
    ids = qwen.encode('Result: <f>{"n": 7}</f>')
    for stop in qwen.stop_token_ids:  # <|im_end|> and <|endoftext|>
        outcome = session.match(compiled, [*ids, stop], qwen.stop_token_ids)
        assert outcome.refused is None
        assert outcome.terminated
        assert outcome.accepted


def test_without_the_stop_token_it_does_not_terminate(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    compiled = session.compile(TAG, qwen)
    outcome = session.match(compiled, qwen.encode('<f>{"n": 7}</f>'), qwen.stop_token_ids)
    assert outcome.refused is None
    assert not outcome.terminated
    assert not outcome.accepted


def test_the_first_token_that_breaks_the_schema_is_refused(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    compiled = session.compile(TAG, qwen)
    ids = qwen.encode('<f>{"n": "seven"}</f>')
    outcome = session.match(compiled, [*ids, qwen.stop_token_ids[0]], qwen.stop_token_ids)
    assert outcome.refused is not None
    accepted_text = qwen.decode(ids[: outcome.refused])
    # Everything up to the value is fine; the token that opens the string is refused.
    assert accepted_text.rstrip() == '<f>{"n":'
    assert '"' in qwen.decode([ids[outcome.refused]])


def test_an_obligation_refuses_the_stop_token_when_no_call_was_made(
    qwen: RealTokenizer, session: GrammarSession
) -> None:
    required = {"type": "structural_tag", "format": {**TAG["format"], "at_least_one": True}}
    ids = qwen.encode("No call here.")
    stop = qwen.stop_token_ids[0]
    free = session.match(session.compile(TAG, qwen), [*ids, stop], qwen.stop_token_ids)
    assert free.accepted
    outcome = session.match(session.compile(required, qwen), [*ids, stop], qwen.stop_token_ids)
    assert outcome.refused is not None


def test_compilers_are_made_once_per_tokenizer(qwen: RealTokenizer) -> None:
    session = GrammarSession()
    session.compile(TAG, qwen)
    session.compile(TAG, qwen)
    assert list(session._compilers) == ["qwen2.5"]
