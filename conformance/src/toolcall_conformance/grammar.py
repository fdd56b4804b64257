"""The grammar check (DESIGN §7): does the parser's structural tag accept the output?

A parser turns a strictness plan into an xgrammar structural tag (plain JSON data).
This module compiles that tag against a real tokenizer, as vLLM does, and feeds it the
case's token ids followed by a stop token, with the model's stop ids as
``override_stop_tokens`` (``xgrammar.TokenizerInfo.from_huggingface`` records one eos
only, and vLLM passes the request's stop ids the same way).

xgrammar (which needs torch) is imported lazily: without it :func:`load_xgrammar`
raises :class:`GrammarUnavailable`, which the checks report as a failure ("not run:
xgrammar missing"), never as a pass.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

__all__ = [
    "GrammarSession",
    "GrammarUnavailable",
    "MatchOutcome",
    "load_xgrammar",
]


class GrammarUnavailable(RuntimeError):
    """xgrammar cannot be imported here."""


def load_xgrammar() -> ModuleType:
    """The ``xgrammar`` module, or :class:`GrammarUnavailable` naming why not."""
    try:
        return importlib.import_module("xgrammar")
    except ImportError as error:
        msg = f"xgrammar missing ({error}); install toolcall-conformance[grammar]"
        raise GrammarUnavailable(msg) from error


@dataclass(frozen=True)
class MatchOutcome:
    """What the matcher made of a token sequence.

    ``refused`` is the position of the first token the grammar refused (``None`` when
    every token was accepted); ``terminated`` whether the matcher ended on a stop token.
    """

    fed: int
    refused: int | None
    terminated: bool

    @property
    def accepted(self) -> bool:
        return self.refused is None and self.terminated


@dataclass
class GrammarSession:
    """Compilers for one run: one per tokenizer (keyed by tokenizer name), so that each
    tokenizer's ``TokenizerInfo`` and compile cache is built once."""

    _compilers: dict[str, Any] = field(default_factory=dict, repr=False)

    def compile(self, tag: Mapping[str, Any], tokenizer: Any) -> Any:
        """Compile a structural tag (JSON data) for ``tokenizer`` (a RealTokenizer)."""
        xgrammar = load_xgrammar()
        compiler = self._compilers.get(tokenizer.name)
        if compiler is None:
            compiler = xgrammar.GrammarCompiler(tokenizer.xgrammar_info())
            self._compilers[tokenizer.name] = compiler
        structural_tag = xgrammar.StructuralTag.model_validate(dict(tag))
        return compiler.compile_structural_tag(structural_tag)

    def match(
        self, compiled: Any, token_ids: Sequence[int], stop_token_ids: Sequence[int]
    ) -> MatchOutcome:
        """Feed ``token_ids`` to a fresh matcher that stops on ``stop_token_ids``."""
        xgrammar = load_xgrammar()
        matcher = xgrammar.GrammarMatcher(compiled, override_stop_tokens=list(stop_token_ids))
        for position, token_id in enumerate(token_ids):
            if not matcher.accept_token(int(token_id)):
                return MatchOutcome(fed=position, refused=position, terminated=False)
        return MatchOutcome(fed=len(token_ids), refused=None, terminated=matcher.is_terminated())
