"""The three ways an output is parsed.

* ``builtin``: vLLM's own parser of the name, inside vLLM's ``DelegatingParser``;
* ``adapter``: our parser through our vLLM adapter, inside the same ``DelegatingParser``;
* ``core``: our parser through the core protocol alone (``stream().feed``/``finish``);
* ``floor``: not a parser: a vLLM tool parser that only wraps each delta, as an argument
  fragment, in the ``DeltaMessage`` every parser must return (built as cheaply as vLLM's
  pydantic allows), inside the same ``DelegatingParser``. It is what vLLM costs any parser
  that streams a fragment per delta, the part of the other two vLLM columns that no parser
  can remove.

Both vLLM drivers are composed and fed by the conformance kit's
:mod:`toolcall_conformance.vllm_baseline` (``compose`` and ``replay``), so they get
exactly what vLLM's chat stream gives them: a legacy parser (``hermes``) the
accumulated previous/current text and ids and, at the end,
``get_remaining_unstreamed_args()``; an engine-based one (the built-in ``glm45``/``glm47``
and our adapter) the delta alone and ``finish_streaming()``.

A driver builds its per-request object in :meth:`Driver.prepare` (not timed) and parses
in :meth:`Driver.stream` or :meth:`Driver.parse` (timed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolcall.parser import Parser, ParserContext, assemble
from toolcall.types import Delta, Parsed
from toolcall_bench.outputs import Feed
from toolcall_conformance.vllm_baseline import replay

__all__ = [
    "DRIVERS",
    "CoreDriver",
    "Driver",
    "Reassembled",
    "VllmDriver",
    "floor_parser_class",
    "problem_with",
]

#: Driver keys and how tables name them.
DRIVERS = {
    "builtin": "vLLM built-in",
    "adapter": "ours, vLLM adapter",
    "core": "ours, core",
    "floor": "vLLM floor",
}


@dataclass(frozen=True)
class Reassembled:
    """What a parse adds up to: content, and each call's name and argument text."""

    content: str
    calls: tuple[tuple[str, str], ...]


class Driver(Protocol):
    key: str
    #: Whether its results are checked (the floor parses nothing).
    verified: bool

    def prepare(self) -> Any:
        """A fresh per-request parser object."""
        ...

    def stream(self, parser: Any, feed: Feed) -> list[Any]:
        """Feed every delta, then finish; return what each step returned."""
        ...

    def parse(self, parser: Any, text: str) -> Any:
        """The one-shot parse of ``text``."""
        ...

    def reassemble_stream(self, outputs: list[Any]) -> Reassembled: ...

    def reassemble_parse(self, result: Any) -> Reassembled: ...


class VllmDriver:
    """A vLLM ``ToolParser`` class inside vLLM's ``DelegatingParser``."""

    def __init__(
        self, key: str, composed: type[Any], tokenizer: Any, request: Any, *, verified: bool = True
    ) -> None:
        self.key = key
        self.verified = verified
        self.composed = composed
        self.tokenizer = tokenizer
        self.request = request

    def prepare(self) -> Any:
        return self.composed(self.tokenizer, self.request.tools)

    def stream(self, parser: Any, feed: Feed) -> list[Any]:
        return replay(parser, self.request, feed.texts, feed.id_lists)

    def parse(self, parser: Any, text: str) -> Any:
        return parser.parse(text, self.request, enable_auto_tools=True)

    def reassemble_stream(self, outputs: list[Any]) -> Reassembled:
        content: list[str] = []
        names: dict[int, str] = {}
        arguments: dict[int, list[str]] = {}
        for message in outputs:
            if message is None:
                continue
            content.append(message.content or "")
            for entry in message.tool_calls or ():
                function = entry.function
                if entry.index not in names:
                    names[entry.index] = (function.name if function else None) or ""
                    arguments[entry.index] = []
                if function is not None and function.arguments:
                    arguments[entry.index].append(function.arguments)
        calls = tuple((names[i], "".join(arguments[i])) for i in sorted(names))
        return Reassembled("".join(content), calls)

    def reassemble_parse(self, result: Any) -> Reassembled:
        _reasoning, content, calls = result
        return Reassembled(
            content or "", tuple((call.name, call.arguments) for call in calls or ())
        )


class CoreDriver:
    """A toolcall parser through the core protocol, no vLLM involved."""

    key = "core"
    verified = True

    def __init__(self, parser_class: type[Parser], context: ParserContext) -> None:
        self.parser_class = parser_class
        self.context = context

    def prepare(self) -> Parser:
        return self.parser_class(self.context)

    def stream(self, parser: Parser, feed: Feed) -> list[list[Delta]]:
        stream = parser.stream()
        steps = zip(feed.texts, feed.id_tuples, strict=True)
        outputs = [stream.feed(text, ids) for text, ids in steps]
        outputs.append(stream.finish())
        return outputs

    def parse(self, parser: Parser, text: str) -> Parsed:
        return parser.parse(text)

    def reassemble_stream(self, outputs: list[list[Delta]]) -> Reassembled:
        return self.reassemble_parse(assemble(delta for deltas in outputs for delta in deltas))

    def reassemble_parse(self, result: Parsed) -> Reassembled:
        return Reassembled(
            result.content or "", tuple((call.name, call.arguments) for call in result.tool_calls)
        )


def floor_parser_class() -> type[Any]:
    """The ``floor`` driver's vLLM tool parser (engine-based, as our adapter is).

    Its messages are built the cheapest way known in vLLM 0.33's pydantic, the way our
    adapter builds them (``toolcall.vllm._compat``: what ``model_construct`` does, on a
    bare instance, when that gives exactly what the validating constructors give), so
    that *above floor* is what a parser adds to the least vLLM makes any parser pay. A
    parser that builds its messages with the validating constructors (vLLM's built-ins)
    pays for that above the floor.
    """
    from vllm.entrypoints.generate.base.protocol import (  # noqa: PLC0415 - vLLM only here
        ExtractedToolCallInformation,
    )
    from vllm.tool_parsers import ToolParser  # noqa: PLC0415

    from toolcall.vllm import _compat  # noqa: PLC0415 - imports vLLM

    class FloorToolParser(ToolParser):  # type: ignore[misc]
        engine_based_streaming = True
        supports_required_and_named = False

        def __init__(self, tokenizer: Any, tools: Any = None) -> None:
            super().__init__(tokenizer, tools)
            self._started = False

        def extract_tool_calls(self, model_output: str, request: Any) -> Any:
            del model_output, request
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=None)

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
            del previous_text, current_text, request
            del previous_token_ids, current_token_ids, delta_token_ids
            if self._started:
                return _compat.arguments_message(0, delta_text)
            self._started = True
            entry = _compat.delta_tool_call(
                0, id="chatcmpl-tool-floor", name="floor", arguments=delta_text
            )
            return _compat.delta_message(None, [entry])

        def finish_streaming(self) -> Any:
            return None

    return FloorToolParser


def problem_with(
    found: Reassembled, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]
) -> str | None:
    """How ``found`` differs from the output's content and calls (``None``: it does not).

    Arguments are compared as JSON values: a parser may re-serialise them.
    """
    if len(found.calls) != len(calls):
        return f"{len(found.calls)} call(s), expected {len(calls)}"
    for index, ((name, text), (want_name, want)) in enumerate(zip(found.calls, calls, strict=True)):
        if name != want_name:
            return f"call {index} is named {name!r}, expected {want_name!r}"
        try:
            value = json.loads(text)
        except ValueError:
            return f"call {index}: arguments are not JSON: {_preview(text)}"
        if value != want:
            return f"call {index}: arguments differ: {_preview(text)}"
    if found.content.strip() != content.strip():
        return f"content {_preview(found.content)}, expected {_preview(content)}"
    return None


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
