"""Outputs generated under a grammar: the ids of ``request.constrained`` cases.

A constrained case claims that its output was generated under the structural tag the
parser builds for the case's request. Without a model, :func:`generate_under_grammar`
does what constrained decoding does with one, with a seeded choice in place of the
model's: at each step it asks xgrammar's matcher (the tag compiled against the real
tokenizer, as vLLM compiles it) which tokens the grammar allows, keeps those whose text
continues the intended output, and picks one of them with ``random.Random(seed)``; at the
end the stop token must be allowed and end the grammar. The text is the intended output
(a chat template's rendering, say); the token boundaries are what the grammar let through,
which may split a marker that the model would emit as one added token into plain-text
tokens. If the grammar refuses every token that could continue the text, the text cannot
be generated under it and :class:`GenerationError` says where.

xgrammar (and torch) are needed, as for the grammar check.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from toolcall_conformance.grammar import GrammarSession, load_xgrammar
from toolcall_conformance.tokenizers import RealTokenizer

__all__ = ["GenerationError", "generate_under_grammar"]


class GenerationError(ValueError):
    """The text cannot be generated under the grammar (the message says where)."""


def generate_under_grammar(
    tag: Mapping[str, Any],
    tokenizer: RealTokenizer,
    text: str,
    *,
    seed: str,
    stop_token_ids: Sequence[int] = (),
    session: GrammarSession | None = None,
) -> list[int]:
    """Token ids that spell ``text``, each chosen among the tokens the grammar allows at
    that step (see the module docstring); the stop token that ends it is not included."""
    xgrammar = load_xgrammar()
    session = session if session is not None else GrammarSession()
    stops = list(stop_token_ids) or list(tokenizer.stop_token_ids)
    info = tokenizer.xgrammar_info()
    vocab = [bytes(piece) for piece in info.decoded_vocab]  # a fresh list at every access
    by_bytes: dict[bytes, list[int]] = {}
    for token_id, piece in enumerate(vocab):
        if piece and token_id not in stops:
            by_bytes.setdefault(piece, []).append(token_id)
    longest = max(map(len, by_bytes))
    matcher = xgrammar.GrammarMatcher(session.compile(tag, tokenizer), override_stop_tokens=stops)
    bitmask = xgrammar.allocate_token_bitmask(1, info.vocab_size)
    rng = random.Random(seed)
    target = text.encode("utf-8")
    ids: list[int] = []
    position = 0
    while position < len(target):
        allowed = _allowed(matcher, bitmask)
        candidates = [
            token_id
            for size in range(1, min(longest, len(target) - position) + 1)
            for token_id in by_bytes.get(target[position : position + size], ())
            if allowed(token_id)
        ]
        if not candidates:
            done = target[:position].decode("utf-8", errors="replace")
            msg = (
                f"the grammar allows no token that continues the text after {done[-40:]!r} "
                f"(byte {position} of {len(target)})"
            )
            raise GenerationError(msg)
        chosen = rng.choice(sorted(candidates))
        if not matcher.accept_token(chosen):  # pragma: no cover - the mask allowed it
            msg = f"xgrammar refused token {chosen}, which its own mask allowed"
            raise GenerationError(msg)
        ids.append(chosen)
        position += len(vocab[chosen])
    if not _allowed(matcher, bitmask)(stops[0]) or not matcher.accept_token(stops[0]):
        msg = f"the grammar does not allow the output to end after {text[-40:]!r}"
        raise GenerationError(msg)
    if not matcher.is_terminated():  # pragma: no cover - a stop token ends the grammar
        msg = "the stop token did not end the grammar"
        raise GenerationError(msg)
    return ids


def _allowed(matcher: Any, bitmask: Any) -> Any:
    """A test for "the grammar allows this token id now" (bit ``id`` of the mask)."""
    matcher.fill_next_token_bitmask(bitmask)
    words = bitmask[0].tolist()

    def allowed(token_id: int) -> bool:
        return bool((words[token_id >> 5] >> (token_id & 31)) & 1)

    return allowed
