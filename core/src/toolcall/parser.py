"""The parser protocol: what a model family implements.

A family writes two classes. The :class:`Parser` subclass is built once per request
from a :class:`ParserContext` and describes the format (its name, markers, default
strict level, id style and structural tag). Its :meth:`Parser.stream` returns a
fresh :class:`Stream` for one output: ``feed`` takes each delta as the engine
releases it, ``finish`` flushes what was held back. :meth:`Parser.parse` is that
same stream fed the whole text and finished, so the one-shot and the streaming
results cannot drift apart::

    class MyParser(Parser):
        name = "my_format"
        markers = ("<call>", "</call>")

        def stream(self) -> Stream:
            return MyStream(self)

Register the class through the ``toolcall`` entry-point group (see
:mod:`toolcall.registry`).
"""

from __future__ import annotations

import abc
import os
import secrets
import string
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeAlias

from toolcall.types import (
    Delta,
    Event,
    Parsed,
    Request,
    Span,
    StrictLevel,
    ToolCall,
    Vocabulary,
    is_blank,
)

if TYPE_CHECKING:
    from toolcall.strictness import Plan

__all__ = [
    "IdStyle",
    "Parser",
    "ParserContext",
    "Stream",
    "assemble",
    "new_call_id",
    "strict_parsing_from_env",
]

IdStyle: TypeAlias = Literal["openai", "mistral"]

_MISTRAL_ID_ALPHABET = string.ascii_letters + string.digits


def new_call_id(style: IdStyle = "openai") -> str:
    """A fresh tool-call id in the family's style.

    ``openai`` is vLLM's default (``chatcmpl-tool-`` and 32 hex digits); ``mistral``
    is the 9 alphanumeric characters that mistral-common and Mistral's chat
    templates accept.
    """
    if style == "mistral":
        return "".join(secrets.choice(_MISTRAL_ID_ALPHABET) for _ in range(9))
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


def strict_parsing_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``TOOLCALL_STRICT_PARSING=1`` switches every named recovery off."""
    value = (environ if environ is not None else os.environ).get("TOOLCALL_STRICT_PARSING", "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class ParserContext:
    """Everything a parser is built from, for one request."""

    request: Request = field(default_factory=Request)
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    #: When true, named recoveries are off: what they would have read is content
    #: (or, inside a committed call, malformed arguments).
    strict_parsing: bool = False
    #: The rendered prompt the output continues, decoded with its special tokens, for
    #: formats that read the start of the message from it (an ``hf`` response
    #: template's prefill, such as an opened ``<think>``); ``None`` when unknown.
    prompt: str | None = None


class Stream(Protocol):
    """The incremental parse of one output."""

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        """Take the next piece of output; return what can be released now."""
        ...

    def finish(self) -> list[Delta]:
        """The output has ended: release everything still held back."""
        ...

    @property
    def events(self) -> tuple[Event, ...]:
        """The events recorded so far (recoveries, defects)."""
        ...

    @property
    def framing(self) -> tuple[Span, ...]:
        """The ranges of the output read so far as tool-call markup."""
        ...


class Parser(abc.ABC):
    """A model family's tool-call format."""

    #: The ``--tool-call-parser`` name.
    name: ClassVar[str]
    #: Framing strings that must never reach content (unless returned verbatim
    #: as unreadable markup).
    markers: ClassVar[tuple[str, ...]] = ()
    #: Strings that may begin a call written without a start marker (DESIGN §6:
    #: hermes' bare JSON ``{``, a pythonic list ``[``): the delta contract lets the
    #: stream hold text that starts with one until it knows whether it is a call.
    unmarked_starts: ClassVar[tuple[str, ...]] = ()
    #: vLLM's ``default_tool_strict_level`` for this family.
    default_strict_level: ClassVar[StrictLevel] = StrictLevel.AUTO
    id_style: ClassVar[IdStyle] = "openai"
    #: One line for ``toolcall list``.
    summary: ClassVar[str] = ""
    #: The shipped conformance corpus this parser must pass (a parser name whose
    #: format it shares, e.g. ``qwen3_json`` passes ``hermes``); empty means ``name``.
    corpus: ClassVar[str] = ""
    #: Whether the parser reads the whole message from the tokenizer's
    #: ``response_template`` (reasoning included, and the prompt's prefill): the vLLM
    #: bridge then serves it the way vLLM serves its own ``hf``, combinable with
    #: ``--reasoning-parser NAME`` (``toolcall.vllm.template_route``).
    whole_message: ClassVar[bool] = False

    def __init__(self, context: ParserContext | None = None) -> None:
        self.context = context if context is not None else ParserContext()

    @property
    def request(self) -> Request:
        return self.context.request

    @classmethod
    def check_vocabulary(cls, vocabulary: Vocabulary) -> None:
        """Raise ``ValueError`` if the tokenizer cannot carry this format.

        The vLLM bridge calls this at server start-up, where vLLM builds one parser
        with the model's tokenizer.
        """
        del vocabulary

    @classmethod
    def tools_refused(cls, vocabulary: Vocabulary) -> str | None:
        """Why this parser reads no tool calls with this tokenizer, or ``None`` (it does).

        A parser that serves the model's text but cannot read its calls (``auto``, when the
        chat template says no format) gives the reason; the vLLM bridge answers a request
        that could call a tool (tools, and ``tool_choice`` not ``"none"``) with HTTP 400 and
        that reason, rather than serve calls as content.
        """
        del vocabulary
        return None

    def new_call_id(self) -> str:
        return new_call_id(self.id_style)

    @abc.abstractmethod
    def stream(self) -> Stream:
        """A fresh incremental parse of one output."""

    def parse(self, text: str) -> Parsed:
        """Parse a whole output: the stream fed ``text`` in one piece, then finished."""
        stream = self.stream()
        deltas = stream.feed(text)
        deltas += stream.finish()
        return assemble(deltas, events=stream.events, framing=stream.framing)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        """The xgrammar structural tag (as JSON data) that constrains output to this
        format under ``plan``, or ``None`` when the plan applies no grammar or the
        family has none."""
        del plan
        return None


def assemble(
    deltas: Iterable[Delta],
    *,
    events: Sequence[Event] = (),
    framing: Sequence[Span] = (),
) -> Parsed:
    """Reassemble a stream's deltas into the parse they add up to.

    Content is concatenated (content of :data:`~toolcall.types.WHITESPACE` only
    becomes ``None``, as does reasoning); each call's id and name come from its
    first entry and its arguments are the concatenated fragments. Assumes the
    deltas keep the delta contract; use :mod:`toolcall.contract` to check that.
    """
    content: list[str] = []
    reasoning: list[str] = []
    ids: dict[int, str] = {}
    names: dict[int, str] = {}
    arguments: dict[int, list[str]] = {}
    for delta in deltas:
        if delta.content:
            content.append(delta.content)
        if delta.reasoning:
            reasoning.append(delta.reasoning)
        for entry in delta.tool_calls:
            if entry.index not in names:
                ids[entry.index] = entry.id or ""
                names[entry.index] = entry.name or ""
                arguments[entry.index] = []
            if entry.arguments:
                arguments[entry.index].append(entry.arguments)
    text = "".join(content)
    thought = "".join(reasoning)
    calls = tuple(
        ToolCall(id=ids[index], name=names[index], arguments="".join(arguments[index]))
        for index in sorted(names)
    )
    return Parsed(
        content=None if is_blank(text) else text,
        tool_calls=calls,
        events=tuple(events),
        framing=tuple(framing),
        reasoning=None if is_blank(thought) else thought,
    )
