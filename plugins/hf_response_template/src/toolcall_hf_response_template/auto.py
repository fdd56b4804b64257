"""Parsers whose format is derived from a chat template: ``auto`` (the served
tokenizer's template) and the parser ``toolcall parse --chat-template`` makes."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from toolcall.parser import Parser, ParserContext
from toolcall.types import Vocabulary
from toolcall_hf_response_template.derive import (
    Derived,
    Refusal,
    chat_template_of_text,
    derive,
)
from toolcall_hf_response_template.parser import HfParser, _cached, template_parser
from toolcall_hf_response_template.template import (
    Template,
    TemplateError,
    markers_of,
    unmarked_starts_of,
)

__all__ = ["AutoParser", "derived_for", "parser_from_chat_template"]

logger = logging.getLogger(__name__)

#: Keys of the tokenizer's metadata passed to the chat template as transformers passes them.
_TOKEN_KEYS = ("bos_token", "eos_token", "pad_token", "unk_token")


@functools.lru_cache(maxsize=16)
def _derived(chat_template: str, tokens: tuple[tuple[str, str], ...]) -> Derived | Refusal:
    result = derive(chat_template, dict(tokens))
    if isinstance(result, Derived):
        fields = result.template["fields"]
        logger.info(
            "toolcall auto: derived from the chat template (%s): %s",
            result.encoding,
            json.dumps(fields.get("tool_calls"), ensure_ascii=False),
        )
    else:
        logger.warning(
            "toolcall auto: no tool-call format derived from the chat template: %s", result
        )
    return result


def derived_for(vocabulary: Vocabulary) -> Derived | Refusal:
    """What :func:`derive` makes of the tokenizer's chat template (``metadata``'s
    ``chat_template``), logged once per template."""
    raw = vocabulary.metadata.get("chat_template")
    if isinstance(raw, Mapping):  # named templates: the tool one, else the default
        raw = raw.get("tool_use") or raw.get("default")
    if not isinstance(raw, str) or not raw.strip():
        return Refusal("tokenizer", "the tokenizer carries no chat template")
    tokens = tuple(
        (key, value)
        for key in _TOKEN_KEYS
        if isinstance(value := vocabulary.metadata.get(key), str)
    )
    return _derived(raw, tokens)


class AutoParser(HfParser):
    """The ``hf`` engine, with the template derived from the tokenizer's chat template."""

    name: ClassVar[str] = "auto"
    whole_message: ClassVar[bool] = False
    summary: ClassVar[str] = (
        "the tool-call format derived from the tokenizer's chat template (toolcall derive), "
        "read by the hf engine"
    )

    def __init__(self, context: ParserContext | None = None) -> None:
        context = context or ParserContext()
        derived = derived_for(context.vocabulary)
        self.refusal = derived if isinstance(derived, Refusal) else None
        if self.refusal is None or context.request.tools:
            super().__init__(context)  # with tools and no format: the refusal raises
            return
        # Nothing derived and no tools: the output is the answer's text.
        Parser.__init__(self, context)
        self.template = _cached(_TEXT_ONLY)
        self.markers = markers_of(self.template)  # type: ignore[misc]
        self.unmarked_starts = unmarked_starts_of(self.template)  # type: ignore[misc]

    @classmethod
    def template_of(cls, vocabulary: Vocabulary) -> Template:
        derived = derived_for(vocabulary)
        if isinstance(derived, Refusal):
            raise TemplateError(
                "chat_template",
                f"parser 'auto' derived no tool-call format from the tokenizer's chat "
                f"template: {derived}",
            )
        return _cached(derived.template)

    @classmethod
    def tools_refused(cls, vocabulary: Vocabulary) -> str | None:
        derived = derived_for(vocabulary)
        if isinstance(derived, Refusal):
            return f"no tool-call format derived from the tokenizer's chat template: {derived}"
        return None

    @classmethod
    def check_vocabulary(cls, vocabulary: Vocabulary) -> None:
        # A template it cannot derive from does not stop the server: requests without
        # tools are served, requests with tools get the reason.
        derived_for(vocabulary)


#: Text only: what ``auto`` reads when it derived nothing and the request has no tools.
_TEXT_ONLY: dict[str, Any] = {
    "version": 1,
    "start_anchor_pattern": "(?!)",
    "fields": {"content": {"content": "text", "content_args": {"strip": False}}},
}


def parser_from_chat_template(text: str) -> type[HfParser]:
    """A parser whose format is derived from ``text`` (a chat template, or a tokenizer
    config's JSON carrying one); raises ``ValueError`` with the refusal."""
    chat_template, tokens = chat_template_of_text(text)
    derived = derive(chat_template, tokens)
    if isinstance(derived, Refusal):
        raise ValueError(f"no tool-call format derived from the chat template: {derived}")
    return template_parser(
        "chat_template",
        {
            "response_template": derived.template,
            "summary": f"derived from a chat template ({derived.encoding})",
        },
    )
