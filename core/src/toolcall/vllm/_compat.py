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
    "init_base",
    "register_tool_parser",
    "request_data",
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


def delta_message(content: str | None, tool_calls: Sequence[Any]) -> Any:
    """A ``DeltaMessage`` with only ``content`` and/or ``tool_calls`` set."""
    fields: dict[str, Any] = {}
    if content:
        fields["content"] = content
    if tool_calls:
        fields["tool_calls"] = list(tool_calls)
    return _protocol.DeltaMessage(**fields)


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


def request_data(request: Any, tools: Sequence[Any] | None = None) -> dict[str, Any]:
    """``tools``, ``tool_choice`` and ``parallel_tool_calls`` of a vLLM request as plain
    OpenAI JSON, read through the attributes vLLM's request types define.

    Any object with those attributes will do: ``ChatCompletionRequest``,
    ``ResponsesRequest``, the Anthropic endpoint's converted request, and the test
    doubles of vLLM's own suite (``Mock(spec=ChatCompletionRequest)`` with ``tools`` and
    ``tool_choice`` set, or ``request=None`` with the tools given to the constructor).
    Tools come from the request when it has a list of them, else from ``tools``; an
    attribute that is not of its documented type counts as absent.
    """
    raw_tools = getattr(request, "tools", None)
    if not isinstance(raw_tools, list | tuple):
        raw_tools = tools
    data: dict[str, Any] = {"tools": [_tool_json(tool) for tool in raw_tools or ()]}
    if request is not None:
        data["tool_choice"] = _choice_json(getattr(request, "tool_choice", None))
        parallel = getattr(request, "parallel_tool_calls", None)
        data["parallel_tool_calls"] = parallel if isinstance(parallel, bool) else None
    return data


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


_FUNCTION_FIELDS = ("name", "description", "parameters", "strict")


def _tool_json(tool: Any) -> Any:
    """A Chat Completions tool (``ChatCompletionToolsParam``) or a Responses API tool
    (``FunctionTool``, ``NamespaceTool``, ``CustomTool``, ...) as OpenAI JSON."""
    if isinstance(tool, Mapping):
        return tool
    data: dict[str, Any] = {"type": _field(tool, "type") or "function"}
    function = _field(tool, "function")
    source = tool if function is None else function
    fields = {name: _field(source, name) for name in _FUNCTION_FIELDS}
    fields = {name: value for name, value in fields.items() if value is not None}
    if function is not None:
        data["function"] = fields
    else:
        data |= fields
    members = _field(tool, "tools")
    if isinstance(members, list | tuple):
        data["tools"] = [_tool_json(member) for member in members]
    return data


def _choice_json(choice: Any) -> Any:
    """``tool_choice`` as OpenAI JSON: a mode string or ``None`` as it is; a named
    function (Chat's ``ChatCompletionNamedToolChoiceParam``, Responses'
    ``ToolChoiceFunction`` or ``ToolChoiceCustom``) as ``{"type": "function",
    "function": {"name": ...}}``; Responses' ``allowed_tools`` as its mode, which is how
    vLLM parses it (it never constrains it); anything else as it is, for
    ``Request.from_openai`` to refuse."""
    if choice is None or isinstance(choice, str):
        return choice
    kind = _field(choice, "type")
    if kind == "allowed_tools":
        return _field(choice, "mode") or "auto"
    function = _field(choice, "function")
    name = _field(function, "name") if function is not None else _field(choice, "name")
    if isinstance(name, str):
        return {"type": "function", "function": {"name": name}}
    return {"type": kind}


def structural_tag(data: Mapping[str, Any]) -> Any:
    """The ``xgrammar.StructuralTag`` vLLM's ``get_structural_tag`` must return.

    ``data`` is either a whole structural tag (``{"type": "structural_tag",
    "format": ...}``) or just its format.
    """
    if data.get("type") != "structural_tag":
        data = {"type": "structural_tag", "format": dict(data)}
    return xgrammar.StructuralTag.model_validate(data)
