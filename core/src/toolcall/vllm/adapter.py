"""The vLLM ``ToolParser`` that runs a toolcall parser (what vLLM 0.33's serving layer asks
of one: core/README.md, "The vLLM bridge").

One subclass per parser name is made by :func:`toolcall.vllm.adapters.adapter_class`.
vLLM builds an instance per request (and a few more: one at start-up with no
tools, one for ``adjust_request``), so instances keep no state that another
needs, and the toolcall parser is built lazily from the first request that
reaches ``extract_tool_calls*``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from toolcall import contract
from toolcall.parser import Parser, ParserContext, Stream, strict_parsing_from_env
from toolcall.strictness import resolve_plan
from toolcall.types import Delta, Request, StrictLevel, Vocabulary
from toolcall.vllm import _compat

__all__ = ["ToolcallToolParser", "adapter_for", "call_entries", "delta_message", "vocabulary_of"]

logger = logging.getLogger("toolcall")

#: Adapter classes are attributes ``ADAPTER_PREFIX + NAME`` of ``toolcall.vllm.adapters``.
ADAPTER_PREFIX = "ToolcallParser_"
#: ``structural_tag_model``: a key of our own, so vLLM asks our ``get_structural_tag``.
STRUCTURAL_TAG_MODEL = "toolcall"


class ToolcallToolParser(_compat.ToolParserBase):  # type: ignore[misc]
    """Base of the per-name adapters; ``toolcall_parser_class`` is set by the factory."""

    engine_based_streaming = True
    # Declared in the class body, as vLLM's own engine-based parsers do, so that
    # required and named choices reach our parser whatever the environment.
    supports_required_and_named = False
    structural_tag_model = STRUCTURAL_TAG_MODEL

    toolcall_parser_name: ClassVar[str] = ""
    # Set by ToolParser.__init__; updated as calls are emitted.
    current_tool_id: int
    current_tool_name_sent: bool
    toolcall_parser_class: ClassVar[type[Parser]]

    def __init__(
        self, tokenizer: Any, tools: Sequence[Any] | None = None, *args: Any, **kwargs: Any
    ) -> None:
        del args, kwargs  # model_config etc., passed by some vLLM call sites
        self._call_names: list[str | None] = []
        self._call_fragments: list[list[str]] = []
        _compat.init_base(self, tokenizer, tools)
        self._tools = tools
        self._vocabulary = vocabulary_of(tokenizer)
        if tokenizer is not None:
            # Raising here rejects the tokenizer at server start-up.
            self.toolcall_parser_class.check_vocabulary(self._vocabulary)
        self._context: ParserContext | None = None
        self._parser: Parser | None = None
        self._stream: Stream | None = None
        self._started = False
        self._finished = False
        self._failed = False
        self._checker: contract.DeltaChecker | None = None
        self._later: list[Delta] = []  # deltas that wait for the next message

    # -- vLLM's bookkeeping, derived from what was emitted --------------------------------

    @property
    def prev_tool_call_arr(self) -> list[dict[str, Any]]:
        """One ``{"name", "arguments"}`` per call, exactly as streamed so far."""
        return [
            {"name": name, "arguments": "".join(fragments)}
            for name, fragments in zip(self._call_names, self._call_fragments, strict=True)
        ]

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list[dict[str, Any]]) -> None:
        self._call_names = [item.get("name") for item in value]
        self._call_fragments = [[_arguments_text(item.get("arguments", ""))] for item in value]

    @property
    def streamed_args_for_tool(self) -> list[str]:
        return ["".join(fragments) for fragments in self._call_fragments]

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list[str]) -> None:
        self._call_fragments = [[text] for text in value]
        del self._call_names[len(value) :]
        self._call_names += [None] * (len(value) - len(self._call_names))

    def get_remaining_unstreamed_args(self) -> str:
        # finish_streaming() is the flush; vLLM appends this before calling it.
        return ""

    # -- request handling -------------------------------------------------------------

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            refused = self.toolcall_parser_class.tools_refused(self._vocabulary)
            if refused is not None:
                # vLLM answers a validation error with HTTP 400 and its message.
                raise _compat.validation_error(
                    f"parser {self.toolcall_parser_name!r} reads no tool calls: {refused}",
                    parameter="tools",
                )
        if (
            request.tools
            and request.tool_choice != "none"
            and hasattr(request, "skip_special_tokens")
        ):
            # Markers may be special tokens; the detokenizer must keep them.
            request.skip_special_tokens = False
        return request

    def get_structural_tag(
        self,
        request: Any,
        *,
        reasoning: bool = False,
        strict_level: Any = None,
    ) -> Any:
        """Our format's xgrammar structural tag for ``request``, or ``None``.

        vLLM calls this whenever it decided a tag applies, even with
        ``VLLM_ENFORCE_STRICT_TOOL_CALLING`` off, so that is checked here. Any
        error is logged and gives ``None``: an exception would be an HTTP 500.
        """
        del reasoning  # always False in vLLM 0.33; the engine gates on reasoning end
        if not _compat.enforce_strict_tool_calling():
            return None
        try:
            view = self._request_view(request)
            level = StrictLevel(int(strict_level)) if strict_level is not None else None
            plan = resolve_plan(
                view,
                strict_level=level,
                default_level=self.toolcall_parser_class.default_strict_level,
                enforce=True,
            )
            if not plan.grammar:
                return None
            data = self.toolcall_parser_class(self._new_context(view)).structural_tag(plan)
            return None if data is None else _compat.structural_tag(data)
        except Exception as error:
            logger.error(
                "toolcall: parser %r could not build a structural tag, none applied: %s: %s",
                self.toolcall_parser_name,
                type(error).__name__,
                error,
            )
            return None

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        try:
            parser = self._parser_for(request)
            if parser is None:
                return _compat.extracted_tool_calls([], model_output)
            parsed = parser.parse(model_output)
        except Exception as error:
            logger.error(
                "toolcall: parser %r failed, returning the output as content: %s: %s",
                self.toolcall_parser_name,
                type(error).__name__,
                error,
            )
            return _compat.extracted_tool_calls([], model_output)
        self._call_names = [call.name for call in parsed.tool_calls]
        self._call_fragments = [[call.arguments] for call in parsed.tool_calls]
        calls = [(call.id, call.name, call.arguments) for call in parsed.tool_calls]
        return _compat.extracted_tool_calls(calls, parsed.content)

    def extract_tool_calls_streaming(  # noqa: PLR0917 - vLLM's signature
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        # Delta-only input (engine_based_streaming): the accumulated texts are
        # ignored, which is also right when a legacy reasoning parser fills them.
        del previous_text, current_text, previous_token_ids, current_token_ids
        if not self._started:
            self._start(request)
        stream = self._stream
        if stream is None:
            return self._message([Delta(delta_text)]) if self._later else _content(delta_text)
        try:
            deltas = stream.feed(delta_text, delta_token_ids)
        except Exception as error:
            self._fail(error)
            return self._message([Delta(delta_text)], last=True)
        if self._checker is not None:
            self._observe(self._checker, delta_text, deltas)
        return self._message(deltas)

    def finish_streaming(self) -> Any:
        """Flush what the stream held back: one ``DeltaMessage``, or ``None``.

        Safe on an instance that was never fed; does something at most once.
        """
        stream, self._stream = self._stream, None
        if self._finished or stream is None:
            self._finished = True
            return self._message([], last=True) if self._later else None
        self._finished = True
        try:
            deltas = stream.finish()
        except Exception as error:
            self._fail(error)
            return self._message([], last=True)
        checker, self._checker = self._checker, None
        if checker is not None:
            self._check(checker, stream, deltas)
        return self._message(deltas, last=True)

    # -- internals ------------------------------------------------------------------------

    def _request_view(self, request: Any) -> Request:
        data = _compat.request_data(request, self._tools)
        try:
            return Request.from_openai(data)
        except ValueError as error:
            logger.warning(
                "toolcall: parser %r reads the request as tool_choice auto: %s",
                self.toolcall_parser_name,
                error,
            )
            return Request.from_openai({"tools": data.get("tools") or []})

    def _new_context(self, view: Request) -> ParserContext:
        return ParserContext(
            request=view, vocabulary=self._vocabulary, strict_parsing=strict_parsing_from_env()
        )

    def _parser_for(self, request: Any) -> Parser | None:
        """The toolcall parser for this request; ``None`` for ``tool_choice: "none"`` and
        for a request without tools.

        Without tools vLLM's chat layer drops every call it is given (``keeps_tool_calls``),
        and the Anthropic endpoint sends ``tool_choice: "auto"`` with no tools, so a call
        parsed then would take its text with it: the output is content, as for "none".
        """
        if self._parser is None:
            view = self._request_view(request)
            if view.tool_choice == "none" or not view.tools:
                return None
            self._context = self._new_context(view)
            self._parser = self.toolcall_parser_class(self._context)
        return self._parser

    def _start(self, request: Any) -> None:
        self._started = True
        try:
            parser = self._parser_for(request)
            if parser is None:
                return  # "none" or no tools: everything is content, markup included
            self._stream = parser.stream()
        except Exception as error:
            self._fail(error)
            return
        if contract.enabled_from_env():
            self._checker = contract.DeltaChecker(parser.markers, openers=parser.unmarked_starts)

    def _fail(self, error: Exception) -> None:
        self._stream = None
        if not self._failed:
            self._failed = True
            logger.error(
                "toolcall: parser %r failed while streaming; the rest of the output "
                "passes through as content: %s: %s",
                self.toolcall_parser_name,
                type(error).__name__,
                error,
            )

    def _message(self, deltas: Sequence[Delta], *, last: bool = False) -> Any:
        """One step's deltas as one ``DeltaMessage`` (one entry per call), or ``None``.

        A ``DeltaMessage`` does not order its content against its tool calls, and
        vLLM's Responses stream takes the content first (``split_delta``), closing the
        function call that was open: a fragment of that call in the same message then
        breaks the stream. So content that follows a fragment of a call announced in
        an earlier message waits, with what comes after it, for the next message (the
        ``last`` one takes everything).
        """
        if self._later:
            deltas = [*self._later, *deltas]
            self._later = []
        elif len(deltas) == 1:
            # Nearly every step: one piece of content, or one argument fragment (one
            # delta is never split: nothing in it comes after anything else).
            delta = deltas[0]
            calls = delta.tool_calls
            if not calls:
                if delta.content or delta.reasoning:
                    return _compat.delta_message(delta.content, (), delta.reasoning)
                return None
            if len(calls) == 1 and not delta.content and not delta.reasoning:
                entry = calls[0]
                index, text = entry.index, entry.arguments
                fragments = self._call_fragments
                if entry.id is None and entry.name is None and index < len(fragments):
                    if not text:
                        return None
                    fragments[index].append(text)
                    return _compat.arguments_message(index, text)
        elif not deltas:
            return None
        if not last:
            announced: set[int] = set()  # calls whose first entry is in this message
            continued = False  # a call announced earlier got a fragment here
            for at, delta in enumerate(deltas):
                if continued and (delta.content or delta.reasoning):
                    self._later = list(deltas[at:])
                    deltas = deltas[:at]
                    break
                for entry in delta.tool_calls:
                    if entry.id is not None or entry.name is not None:
                        announced.add(entry.index)
                    elif entry.index not in announced:
                        continued = True
        return self._merged(deltas)

    def _merged(self, deltas: Sequence[Delta]) -> Any:
        """Several pieces of one step: content and reasoning joined, each call's pieces
        merged into one entry (its head, if any, and its argument text, in order)."""
        for index, _, name, text in call_entries(deltas):
            self._record(index, name, text)
        return delta_message(deltas)

    def _record(self, index: int, name: str | None, arguments: str) -> None:
        missing = index + 1 - len(self._call_fragments)
        if missing > 0:
            self._call_names += [None] * missing
            self._call_fragments += [[] for _ in range(missing)]
        if name is not None:
            self._call_names[index] = name
            self.current_tool_name_sent = True
        if arguments:
            self._call_fragments[index].append(arguments)
        self.current_tool_id = max(self.current_tool_id, index)

    # -- TOOLCALL_CHECK_CONTRACT=1: the delta contract checked on the live stream --------

    def _observe(self, checker: contract.DeltaChecker, text: str, deltas: Sequence[Delta]) -> None:
        try:
            self._report(checker.observe(text, deltas))
        except Exception as error:
            self._checker = None
            logger.error("toolcall: contract check failed: %s: %s", type(error).__name__, error)

    def _check(
        self, checker: contract.DeltaChecker, stream: Stream, final: Sequence[Delta]
    ) -> None:
        # §4.6 excuses a documented recovery that needs the whole call (bare-json needs
        # the whole output), so promptness is not held against a stream that applied one,
        # as the conformance kit does not hold it against a case that expects one.
        checker.promptness = not any(event.is_recovery for event in stream.events)
        try:
            found = checker.finish(final, events=stream.events, framing=stream.framing)
            reference = self.toolcall_parser_class(self._context).parse(checker.output)
            found += contract.compare_parses(checker.parsed, reference)
        except Exception as error:
            logger.error("toolcall: contract check failed: %s: %s", type(error).__name__, error)
            return
        self._report(found)

    def _report(self, violations: Sequence[contract.Violation]) -> None:
        for violation in violations:
            logger.error(
                "toolcall: parser %r broke the delta contract: %s",
                self.toolcall_parser_name,
                violation,
            )


def adapter_for(parser_class: type[Parser], name: str | None = None) -> type[ToolcallToolParser]:
    """A vLLM ``ToolParser`` class that runs ``parser_class`` under ``name``.

    The class lives (for pickling and messages) as the attribute
    ``ToolcallParser_NAME`` of :mod:`toolcall.vllm.adapters`.
    """
    name = name if name is not None else parser_class.name
    attribute = ADAPTER_PREFIX + name
    return type(
        attribute,
        (ToolcallToolParser,),
        {
            "__module__": "toolcall.vllm.adapters",
            "__qualname__": attribute,
            "__doc__": f"vLLM tool parser {name!r}: runs {parser_class.__qualname__}.",
            "toolcall_parser_name": name,
            "toolcall_parser_class": parser_class,
            "default_tool_strict_level": _compat.default_strict_level(
                parser_class.default_strict_level
            ),
        },
    )


def call_entries(deltas: Sequence[Delta]) -> list[tuple[int, str | None, str | None, str]]:
    """One step's call entries, one per call: ``(index, id, name, arguments)``."""
    heads: dict[int, tuple[str | None, str | None]] = {}
    arguments: dict[int, list[str]] = {}
    for delta in deltas:
        for entry in delta.tool_calls:
            head = heads.setdefault(entry.index, (None, None))
            if entry.id is not None or entry.name is not None:
                heads[entry.index] = (entry.id or head[0], entry.name or head[1])
            arguments.setdefault(entry.index, [])
            if entry.arguments:
                arguments[entry.index].append(entry.arguments)
    entries = []
    for index, (call_id, name) in heads.items():
        text = "".join(arguments[index])
        if call_id is not None or name is not None or text:
            entries.append((index, call_id, name, text))
    return entries


def delta_message(deltas: Sequence[Delta]) -> Any:
    """One step's deltas as one ``DeltaMessage`` (content, reasoning, one entry per
    call), or ``None`` when they carry nothing."""
    content = "".join(delta.content for delta in deltas)
    reasoning = "".join(delta.reasoning for delta in deltas)
    tool_calls = [
        _compat.delta_tool_call(index, id=call_id, name=name, arguments=text or None)
        for index, call_id, name, text in call_entries(deltas)
    ]
    if not content and not reasoning and not tool_calls:
        return None
    return _compat.delta_message(content, tool_calls, reasoning)


def _content(text: str) -> Any:
    """``text`` passed through as content (``None`` for nothing)."""
    return _compat.delta_message(text, ()) if text else None


def _arguments_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


# -- the tokenizer's vocabulary, as a parser sees it ---------------------------------------


def vocabulary_of(tokenizer: Any) -> Vocabulary:
    """The added and special tokens of a vLLM tokenizer, and its ``response_template``.

    Never the full vocabulary. Cached per tokenizer object (vLLM builds a parser
    per request with the same tokenizer).
    """
    if tokenizer is None:
        return Vocabulary()
    try:
        hash(tokenizer)
    except TypeError:
        return _build_vocabulary(tokenizer)
    return _cached_vocabulary(tokenizer)


def _build_vocabulary(tokenizer: Any) -> Vocabulary:
    try:
        special = _special_tokens(tokenizer)
    except Exception as error:
        special = None
        reason = f"{type(error).__name__}: {error}"
    else:
        reason = "it has neither get_added_vocab() nor all_special_tokens"
    if special is None:
        # Parsers read their markers from the text; they still parse, without the
        # tokenizer's special tokens (e.g. a Mistral grammar for either generation).
        _cannot_read(f"{type(tokenizer).__module__}.{type(tokenizer).__qualname__}", reason)
        special = {}
    metadata: dict[str, Any] = {}
    # Where vLLM reads it (vllm/parser/response_template.py): the attribute, else init_kwargs.
    template = getattr(tokenizer, "response_template", None)
    init_kwargs = getattr(tokenizer, "init_kwargs", None)
    if not isinstance(template, Mapping) and isinstance(init_kwargs, Mapping):
        template = init_kwargs.get("response_template")
    if isinstance(template, Mapping):
        metadata["response_template"] = template
    # The chat template and the special tokens it is rendered with, for parsers that
    # derive their format from it (``auto``).
    chat_template = getattr(tokenizer, "chat_template", None)
    if isinstance(chat_template, str | Mapping):
        metadata["chat_template"] = chat_template
    for key in ("bos_token", "eos_token", "pad_token", "unk_token"):
        value = getattr(tokenizer, key, None)
        if isinstance(value, str):
            metadata[key] = value
    return Vocabulary(special_tokens=special, metadata=metadata)


def _special_tokens(tokenizer: Any) -> dict[str, int] | None:
    """Text -> id of the tokenizer's added and special tokens; ``None`` if the tokenizer
    offers no way to read them."""
    special: dict[str, int] = {}
    get_added_vocab = getattr(tokenizer, "get_added_vocab", None)
    tokens = getattr(tokenizer, "all_special_tokens", None)
    if not callable(get_added_vocab) and tokens is None:
        return None
    if callable(get_added_vocab):
        added = get_added_vocab()
        if isinstance(added, Mapping):
            special.update(
                (text, token_id)
                for text, token_id in added.items()
                if isinstance(text, str) and isinstance(token_id, int)
            )
    tokens = list(tokens or ())
    ids = list(getattr(tokenizer, "all_special_ids", None) or ())
    if len(ids) != len(tokens):
        convert = getattr(tokenizer, "convert_tokens_to_ids", None)
        ids = [convert(token) for token in tokens] if callable(convert) else []
    for text, token_id in zip(tokens, ids, strict=False):
        if isinstance(text, str) and isinstance(token_id, int):
            special.setdefault(text, token_id)
    return special


@functools.lru_cache(maxsize=64)
def _cannot_read(tokenizer_type: str, reason: str) -> None:
    """One log line per tokenizer type (and reason)."""
    logger.warning(
        "toolcall: cannot read the special tokens of tokenizer type %s (%s); "
        "parsers read their markers from the text and parse without them",
        tokenizer_type,
        reason,
    )


_cached_vocabulary = functools.lru_cache(maxsize=8)(_build_vocabulary)
