"""Serving a parser that reads the whole message the way vLLM serves its own ``hf``.

vLLM composes ``--tool-call-parser hf`` and ``--reasoning-parser hf`` into one parser
of the whole message (``vllm.parser.response_template.ResponseTemplateParser``), and
refuses to combine one of them with any other kind of parser
(vLLM 0.33's ``vllm/tool_parsers/response_template_tool_parser.py`` and
``vllm/parser/chat_parsing/``). A toolcall parser that declares
``Parser.whole_message`` is served the same way: its tool adapter subclasses vLLM's
``ResponseTemplateToolParser``, a reasoning parser of the same name replaces vLLM's
(``ResponseTemplateReasoningParser``, unchanged but for the class it composes into),
and both compose into :func:`unified_class`, which:

* parses with the toolcall parser, given the rendered prompt (what the message's
  prefill opened) and tools off where vLLM turns tool parsing off, and hands vLLM
  the reasoning, the content and the calls, streamed or not;
* constrains the request with the parser's structural tag where the strictness
  plan asks for one (strict tools, ``required``, a named tool,
  ``parallel_tool_calls: false``), from the first generated token, as the tag covers
  the reasoning; a plan the template cannot give a grammar is an HTTP 400 that says
  why. vLLM's own ``hf`` refuses all four requests.

Importing this module imports vLLM.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from vllm.exceptions import VLLMValidationError
from vllm.parser.response_template import (
    ResponseTemplateParser,
    ResponseTemplateReasoningParser,
    ResponseTemplateToolParser,
    _tool_parsing_enabled,
)
from vllm.sampling_params import StructuredOutputsParams

from toolcall.parser import Parser, ParserContext, Stream, strict_parsing_from_env
from toolcall.strictness import resolve_plan
from toolcall.types import Delta, Request
from toolcall.vllm import _compat
from toolcall.vllm.adapter import ToolcallToolParser, adapter_for, delta_message, vocabulary_of

__all__ = ["reasoning_class", "tool_adapter", "unified_class", "vllm_reasoning_class"]

logger = logging.getLogger("toolcall")


@functools.cache
def tool_adapter(parser_class: type[Parser], name: str) -> type[ToolcallToolParser]:
    """The tool parser vLLM registers under ``name``: our adapter, composed like vLLM's
    ``hf`` tool parser."""
    base = adapter_for(parser_class, name)
    return type(
        base.__name__,
        (base, ResponseTemplateToolParser),
        {
            "__module__": base.__module__,
            "__qualname__": base.__qualname__,
            "unified_parser_cls": classmethod(lambda _cls: unified_class(parser_class, name)),
        },
    )


@functools.cache
def reasoning_class(parser_class: type[Parser], name: str) -> type[Any]:
    """The reasoning parser vLLM registers under ``name``: vLLM's response-template
    reasoning parser, composed with our parser of the whole message."""
    return type(
        f"ToolcallReasoning_{name}",
        (ResponseTemplateReasoningParser,),
        {
            "__module__": "toolcall.vllm.adapters",
            "__qualname__": f"ToolcallReasoning_{name}",
            "unified_parser_cls": classmethod(lambda _cls: unified_class(parser_class, name)),
        },
    )


def vllm_reasoning_class() -> type[Any]:
    """vLLM's own response-template reasoning parser."""
    cls: type[Any] = ResponseTemplateReasoningParser
    return cls


@functools.cache
def unified_class(parser_class: type[Parser], name: str) -> type[Any]:
    return type(
        f"ToolcallMessageParser_{name}",
        (_MessageParser,),
        {
            "__module__": "toolcall.vllm.adapters",
            "__qualname__": f"ToolcallMessageParser_{name}",
            "toolcall_parser_class": parser_class,
            "toolcall_parser_name": name,
            "reasoning_parser_cls": reasoning_class(parser_class, name),
            "tool_parser_cls": tool_adapter(parser_class, name),
        },
    )


class _MessageParser(ResponseTemplateParser):  # type: ignore[misc]
    """vLLM's unified parser, parsing with a toolcall parser (see the module)."""

    toolcall_parser_class: ClassVar[type[Parser]]
    toolcall_parser_name: ClassVar[str]

    def __init__(self, tokenizer: Any, tools: Sequence[Any] | None = None, **kwargs: Any):
        super().__init__(tokenizer, tools, **kwargs)
        self._vocabulary = vocabulary_of(tokenizer)
        self._request_tools = tools
        self._toolcall_stream: Stream | None = None
        self._stream_failed = False

    # -- the toolcall parser for a request -------------------------------------------------

    def _view(self, request: Any) -> Request:
        data = _compat.request_data(request, self._request_tools)
        try:
            return Request.from_openai(data)
        except ValueError:
            return Request.from_openai({"tools": data.get("tools") or []})

    def _toolcall_parser(self, request: Any, *, enable_auto_tools: bool) -> Parser:
        view = self._view(request)
        tools_on = self._tool_parser is not None and _tool_parsing_enabled(
            request, enable_auto_tools=enable_auto_tools
        )
        if not tools_on:
            view = Request(tools=view.tools, tool_choice="none")
        context = ParserContext(
            request=view,
            vocabulary=self._vocabulary,
            strict_parsing=strict_parsing_from_env(),
            prompt=self._prefix,
        )
        return self.toolcall_parser_class(context)

    # -- vLLM's Parser ------------------------------------------------------------------------

    def _constrain_request(self, request: Any) -> Any:
        """Apply the structural tag the strictness plan asks for (vLLM's own hf refuses
        these requests)."""
        if (
            self._tool_parser is None
            or not request.tools
            or request.tool_choice == "none"
            or not _tool_parsing_enabled(request, enable_auto_tools=self._enable_auto_tools)
        ):
            return request
        view = self._view(request)
        level = self.tool_strict_level
        try:
            plan = resolve_plan(
                view,
                strict_level=None if level is None else _compat.strict_level(level),
                default_level=self.toolcall_parser_class.default_strict_level,
                enforce=_compat.enforce_strict_tool_calling(),
            )
        except ValueError as error:
            raise VLLMValidationError(str(error), parameter="tool_choice") from error
        if not plan.grammar:
            return request
        parser = self._toolcall_parser(request, enable_auto_tools=self._enable_auto_tools)
        try:
            tag = parser.structural_tag(plan)
        except ValueError as error:
            raise VLLMValidationError(
                f"--tool-call-parser {self.toolcall_parser_name} cannot constrain this request "
                f"to the response template: {error}",
                parameter="tools",
            ) from error
        if tag is None:
            return request
        grammar = StructuredOutputsParams(structural_tag=json.dumps(tag, ensure_ascii=False))
        if hasattr(request, "response_format"):
            request.structured_outputs = grammar
            request.response_format = None
        else:
            request._parser_structured_outputs = grammar
        # The tag covers the reasoning: it applies from the first generated token.
        request._grammar_from_parser = True
        return request

    def parse(
        self,
        model_output: str,
        request: Any,
        enable_auto_tools: bool = False,
        model_output_token_ids: Sequence[int] = (),
    ) -> tuple[str | None, str | None, list[Any] | None]:
        del model_output_token_ids
        try:
            parsed = self._toolcall_parser(request, enable_auto_tools=enable_auto_tools).parse(
                model_output
            )
        except Exception as error:
            logger.error(
                "toolcall: parser %r failed, returning the output as content: %s: %s",
                self.toolcall_parser_name,
                type(error).__name__,
                error,
            )
            return None, model_output or None, None
        calls = [
            _compat.function_call(call.id, call.name, call.arguments) for call in parsed.tool_calls
        ]
        return parsed.reasoning, parsed.content, calls or None

    def parse_delta(
        self,
        delta_text: str,
        delta_token_ids: list[int],
        request: Any,
        prompt_token_ids: list[int] | None = None,
        *,
        finished: bool,
    ) -> Any:
        if self._prompt_token_ids is None and prompt_token_ids is not None:
            self.set_prompt_token_ids(prompt_token_ids)
        deltas: list[Delta] = []
        if self._stream_failed:
            deltas.append(Delta(delta_text))
        else:
            try:
                if self._toolcall_stream is None:
                    parser = self._toolcall_parser(
                        request, enable_auto_tools=self._enable_auto_tools
                    )
                    self._toolcall_stream = parser.stream()
                stream = self._toolcall_stream
                deltas += stream.feed(delta_text, delta_token_ids)
                if finished:
                    deltas += stream.finish()
            except Exception as error:
                self._stream_failed = True
                logger.error(
                    "toolcall: parser %r failed while streaming; the rest of the output "
                    "passes through as content: %s: %s",
                    self.toolcall_parser_name,
                    type(error).__name__,
                    error,
                )
                deltas.append(Delta(delta_text))
        message = delta_message(deltas)
        if message is not None and not getattr(request, "include_reasoning", True):
            message.reasoning = None
            if not message.content and not message.tool_calls:
                return None
        return message
