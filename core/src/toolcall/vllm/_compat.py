"""Every version-specific vLLM (and xgrammar) import of the bridge, behind typed wrappers.

Written against vLLM 0.33.0; the fallbacks cover the module layouts of earlier
releases named in reference/vllm-0.33-parsers.md §9. Importing this module
imports vLLM.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import vllm.envs as _envs
import xgrammar

from toolcall.types import StrictLevel

try:
    from vllm.tool_parsers import ToolParser, ToolParserManager
except ImportError:  # vLLM < 0.14
    from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager

try:
    from vllm.entrypoints.generate.base import protocol as _protocol
except ImportError:  # pragma: no cover - older layouts
    try:
        from vllm.entrypoints.openai.engine import protocol as _protocol
    except ImportError:
        from vllm.entrypoints.openai import protocol as _protocol

try:
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel as _ToolStrictLevel
except ImportError:  # pragma: no cover - before --tool-strict-level
    _ToolStrictLevel = None

__all__ = [
    "ToolParser",
    "ToolParserBase",
    "default_strict_level",
    "delta_message",
    "delta_tool_call",
    "enforce_strict_tool_calling",
    "extracted_tool_calls",
    "function_call",
    "init_base",
    "register_template_reasoning_parser",
    "register_tool_parser",
    "request_data",
    "strict_level",
    "structural_tag",
]

#: The class adapters subclass (``Any`` for the type checker: vLLM is untyped).
ToolParserBase: Any = ToolParser

_BASE_TAKES_TOOLS = "tools" in inspect.signature(ToolParser.__init__).parameters


def init_base(parser: Any, tokenizer: Any, tools: Sequence[Any] | None) -> None:
    """Run ``ToolParser.__init__`` with the arguments the installed vLLM accepts."""
    if _BASE_TAKES_TOOLS:
        ToolParser.__init__(parser, tokenizer, list(tools) if tools else None)
    else:  # pragma: no cover - vLLM before tools were passed to the constructor
        ToolParser.__init__(parser, tokenizer)


def enforce_strict_tool_calling() -> bool:
    """``VLLM_ENFORCE_STRICT_TOOL_CALLING`` as vLLM reads it."""
    return bool(getattr(_envs, "VLLM_ENFORCE_STRICT_TOOL_CALLING", False))


def default_strict_level(level: StrictLevel) -> Any:
    """vLLM's ``ToolStrictLevel`` for ``level`` (the int where vLLM has no enum)."""
    return _ToolStrictLevel(int(level)) if _ToolStrictLevel is not None else int(level)


def register_tool_parser(
    name: str, module_path: str, attribute: str, build: Callable[[], type[Any]]
) -> None:
    """Make ``name`` resolve to our adapter, replacing a built-in of that name.

    Lazy (``register_lazy_module``) where possible, so nothing is imported until
    vLLM asks for the parser. If vLLM already resolved ``name`` to another class
    in this process (its cache wins over lazy entries), or has no lazy
    registration, the adapter is built now and registered eagerly.
    """
    cached = getattr(ToolParserManager, "tool_parsers", {}).get(name)
    if cached is not None and getattr(cached, "toolcall_parser_name", None) == name:
        return
    if cached is None and hasattr(ToolParserManager, "register_lazy_module"):
        ToolParserManager.register_lazy_module(name, module_path, attribute)
        return
    ToolParserManager.register_module(name=name, force=True, module=build())


#: vLLM's response-template reasoning parser, as its lazy registry names it.
_TEMPLATE_REASONING = "ResponseTemplateReasoningParser"


def register_template_reasoning_parser(name: str, module_path: str, attribute: str) -> None:
    """If vLLM's reasoning parser ``name`` is its response-template one (``hf``), register
    ours over it, lazily. Other reasoning parsers are left alone."""
    try:
        from vllm.reasoning import ReasoningParserManager  # noqa: PLC0415
    except ImportError:  # pragma: no cover - before response templates
        return
    lazy = getattr(ReasoningParserManager, "lazy_parsers", {})
    entry = lazy.get(name)
    if entry is None or entry[1] != _TEMPLATE_REASONING:
        return
    if hasattr(ReasoningParserManager, "register_lazy_module"):
        ReasoningParserManager.register_lazy_module(name, module_path, attribute)


def delta_tool_call(
    index: int,
    *,
    id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> Any:
    """A ``DeltaToolCall`` carrying only the fields given (so ``exclude_unset`` drops the rest).

    Built with the validating constructors, not ``model_construct``: in pydantic
    2.14 ``model_construct`` re-inspects the ``default_factory`` of every unset
    field on each call (``DeltaMessage.model_construct(content=...)`` takes ~1 ms,
    ``DeltaMessage(content=...)`` ~4 us), and both set the same ``model_fields_set``.
    """
    function: dict[str, str] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    fields: dict[str, Any] = {"index": index}
    if id is not None:
        fields["id"] = id
    if id is not None or name is not None:
        fields["type"] = "function"
    if function:
        fields["function"] = _protocol.DeltaFunctionCall(**function)
    return _protocol.DeltaToolCall(**fields)


def delta_message(content: str | None, tool_calls: Sequence[Any], reasoning: str = "") -> Any:
    """A ``DeltaMessage`` with only ``content``, ``reasoning`` and/or ``tool_calls`` set
    (``reasoning`` is the field vLLM 0.33 reads; older releases called it
    ``reasoning_content``)."""
    fields: dict[str, Any] = {}
    if content:
        fields["content"] = content
    if reasoning:
        fields[_REASONING_FIELD] = reasoning
    if tool_calls:
        fields["tool_calls"] = list(tool_calls)
    return _protocol.DeltaMessage(**fields)


_REASONING_FIELD = (
    "reasoning" if "reasoning" in _protocol.DeltaMessage.model_fields else "reasoning_content"
)


def function_call(call_id: str | None, name: str, arguments: str) -> Any:
    """A ``FunctionCall`` (the calls a unified parser's ``parse`` returns)."""
    return _protocol.FunctionCall(id=call_id, name=name, arguments=arguments)


def strict_level(level: Any) -> StrictLevel:
    """Our strict level for vLLM's ``ToolStrictLevel`` (or its int)."""
    return StrictLevel(int(level))


def extracted_tool_calls(calls: Sequence[tuple[str, str, str]], content: str | None) -> Any:
    """``ExtractedToolCallInformation`` for ``(id, name, arguments)`` calls."""
    return _protocol.ExtractedToolCallInformation(
        tools_called=bool(calls),
        tool_calls=[
            _protocol.ToolCall(
                id=call_id,
                type="function",
                function=_protocol.FunctionCall(name=name, arguments=arguments),
            )
            for call_id, name, arguments in calls
        ],
        content=content,
    )


_REQUEST_FIELDS = {"tools", "tool_choice", "parallel_tool_calls"}


def request_data(request: Any, tools: Sequence[Any] | None = None) -> dict[str, Any]:
    """``tools``, ``tool_choice`` and ``parallel_tool_calls`` of a vLLM chat or
    Responses request as plain OpenAI JSON (``tools`` from the constructor when
    there is no request)."""
    if request is not None and hasattr(request, "model_dump"):
        data: dict[str, Any] = request.model_dump(mode="json", include=_REQUEST_FIELDS)
    else:
        data = {}
        if tools:
            data["tools"] = [
                tool.model_dump(mode="json") if hasattr(tool, "model_dump") else tool
                for tool in tools
            ]
    choice = data.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") == "allowed_tools":
        # Responses' allowed_tools: vLLM parses it like its mode and never constrains it.
        data["tool_choice"] = choice.get("mode", "auto")
    return data


def structural_tag(data: Mapping[str, Any]) -> Any:
    """The ``xgrammar.StructuralTag`` vLLM's ``get_structural_tag`` must return.

    ``data`` is either a whole structural tag (``{"type": "structural_tag",
    "format": ...}``) or just its format.
    """
    if data.get("type") != "structural_tag":
        data = {"type": "structural_tag", "format": dict(data)}
    return xgrammar.StructuralTag.model_validate(data)
