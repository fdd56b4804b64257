"""The ``hf`` parser: the checkpoint's ``response_template`` is the format.

The template comes from the tokenizer, as vLLM reads it (``tokenizer_config.json``'s
``response_template``, carried to the parser as ``Vocabulary.metadata``), or, for a
checkpoint without one, from the JSON file named by ``TOOLCALL_RESPONSE_TEMPLATE``.
It is validated when vLLM starts (:meth:`HfParser.check_vocabulary`): a template
that cannot be served stops the server with the field and the reason.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

from toolcall.parser import Parser, ParserContext
from toolcall.types import Vocabulary
from toolcall_hf_response_template.stream import HfStream
from toolcall_hf_response_template.template import (
    Template,
    TemplateError,
    load_template,
    markers_of,
    unmarked_starts_of,
)

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = ["ENV", "HfParser", "template_for"]

#: A JSON file with the template, for checkpoints whose tokenizer config has none.
ENV: Final = "TOOLCALL_RESPONSE_TEMPLATE"


@functools.lru_cache(maxsize=32)
def _loaded(text: str) -> Template:
    return load_template(json.loads(text))


def template_for(vocabulary: Vocabulary, environ: Mapping[str, str] | None = None) -> Template:
    """The template a parser reads: the tokenizer's, else the file named by
    ``TOOLCALL_RESPONSE_TEMPLATE``; raises :class:`TemplateError` saying which is
    missing or what is wrong with it."""
    raw = vocabulary.metadata.get("response_template")
    if raw is not None:
        return _cached(raw)
    path = (environ if environ is not None else os.environ).get(ENV, "").strip()
    if not path:
        raise TemplateError(
            "",
            "the tokenizer config has no response_template, and TOOLCALL_RESPONSE_TEMPLATE "
            "names no file with one",
        )
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise TemplateError("", f"{ENV}={path}: cannot read the file: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise TemplateError("", f"{ENV}={path} is not JSON: {error}") from None
    if isinstance(data, Mapping) and "response_template" in data and "fields" not in data:
        data = data["response_template"]
    try:
        return _cached(data)
    except TemplateError as error:
        raise TemplateError(error.where, f"{error.reason} (in {ENV}={path})") from None


def _cached(raw: Any) -> Template:
    try:
        key = json.dumps(raw, sort_keys=True)
    except (TypeError, ValueError):
        return load_template(raw)
    return _loaded(key)


class HfParser(Parser):
    """Any checkpoint's ``response_template`` (the Hugging Face region spec)."""

    name: ClassVar[str] = "hf"
    #: Served the way vLLM serves its own hf (combinable with --reasoning-parser hf),
    #: unless the template comes from TOOLCALL_RESPONSE_TEMPLATE: that route checks the
    #: tokenizer's template before any plugin code runs, so then hf is served as a tool
    #: parser (read when the plugin is imported, in the server's process).
    whole_message: ClassVar[bool] = not os.environ.get(ENV, "").strip()
    summary: ClassVar[str] = (
        "the checkpoint's response_template (tokenizer_config.json): thinking, content, "
        "tool_calls regions"
    )

    def __init__(self, context: ParserContext | None = None) -> None:
        super().__init__(context)
        self.template = self.template_of(self.context.vocabulary)
        # Markup that stands in content only as markup that was not read (unparsed-markup).
        self.markers = markers_of(self.template)  # type: ignore[misc]
        # Where a call may begin without a marker (a look-ahead opener): held, not leaked.
        self.unmarked_starts = unmarked_starts_of(self.template)  # type: ignore[misc]

    @classmethod
    def template_of(cls, vocabulary: Vocabulary) -> Template:
        return template_for(vocabulary)

    @classmethod
    def check_vocabulary(cls, vocabulary: Vocabulary) -> None:
        cls.template_of(vocabulary)

    def stream(self) -> HfStream:
        return HfStream(self)

    # -- what the benchmark runs it with (bench/toolcall_bench) ----------------------------

    @classmethod
    def example_template(cls) -> dict[str, Any]:
        """The template the benchmark gives the tokenizer: the Hermes/Qwen one shipped here."""
        text = resources.files(__package__).joinpath("templates/hermes.json").read_text("utf-8")
        data: dict[str, Any] = json.loads(text)
        return data

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """An assistant turn in the format of :meth:`example_template` (Qwen2.5's chat
        template writes it so: the content, then per call ``<tool_call>`` and its JSON)."""
        turn = ("\n" + content if content else "") + "".join(
            "\n<tool_call>\n"
            + json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
            + "\n</tool_call>"
            for name, arguments in calls
        )
        return turn.removeprefix("\n")

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        from toolcall_hf_response_template.grammar import structural_tag  # noqa: PLC0415

        return structural_tag(self.template, plan, prompt=self.context.prompt)


def template_parser(name: str, data: Mapping[str, Any]) -> type[HfParser]:
    """A parser named ``name`` whose format is the template in ``data`` (the template
    itself, or ``{"response_template": ..., "summary": ...}``), whatever the tokenizer
    carries; raises :class:`TemplateError` for a template that cannot be served."""
    raw = data.get("response_template", data)
    template = _cached(raw)
    summary = data.get("summary")
    text = summary if isinstance(summary, str) else f"the response template of {name!r} (data)"

    def template_of(cls: type[HfParser], vocabulary: Vocabulary) -> Template:
        del cls, vocabulary
        return template

    return type(
        f"TemplateParser_{name}",
        (HfParser,),
        {
            "__module__": __name__,
            "name": name,
            "summary": text,
            # Its template is its own, not the tokenizer's: vLLM serves it as a tool parser
            # (vLLM's response-template route checks the tokenizer's template).
            "whole_message": False,
            "template_of": classmethod(template_of),
            # The benchmark's Hermes example is not this format: it renders a named data
            # format with the family's corpus script (bench/toolcall_bench/outputs.py).
            "example_template": None,
            "example_output": None,
        },
    )
