"""Every version-specific vLLM (and xgrammar) import of the bridge, behind typed wrappers.

Written against vLLM 0.33.0; the fallbacks cover the module layouts of earlier
releases that moved them (vLLM 0.33's ``vllm/tool_parsers/__init__.py`` and
``vllm/parser/``). Importing this module imports vLLM.
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
    "FAST_MESSAGES",
    "ToolParser",
    "ToolParserBase",
    "arguments_message",
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
    "validation_error",
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


# -- the messages of a stream, built as cheaply as vLLM's pydantic allows -----------------
#
# Measured in vLLM 0.33's environment (pydantic 2.14): the validating constructors run
# OpenAIBaseModel's wrap validator in Python (~2-4 us per object, three objects per
# argument fragment); ``model_construct`` is slower still (it resolves every unset field's
# default on each call). What ``model_construct`` ends up doing, setting ``__dict__`` and
# the fields-set, extra and private slots on a bare instance, costs a fraction of either.
# It is used only if it gives exactly what the validating constructors give (checked once,
# below); otherwise the validating constructors are used.

_new = object.__new__
_set = object.__setattr__


def _extra_of(cls: Any) -> bool:
    return bool(cls.model_config.get("extra") == "allow")


_EXTRA_FUNCTION = _extra_of(_protocol.DeltaFunctionCall)
_EXTRA_TOOL_CALL = _extra_of(_protocol.DeltaToolCall)
_EXTRA_MESSAGE = _extra_of(_protocol.DeltaMessage)


def _built(cls: Any, values: dict[str, Any], fields_set: set[str], extra: bool) -> Any:
    instance = _new(cls)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", fields_set)
    _set(instance, "__pydantic_extra__", {} if extra else None)
    _set(instance, "__pydantic_private__", None)
    return instance


def _fast_function(name: str | None, arguments: str | None) -> Any:
    fields_set = set()
    if name is not None:
        fields_set.add("name")
    if arguments is not None:
        fields_set.add("arguments")
    values = {"name": name, "arguments": arguments}
    return _built(_protocol.DeltaFunctionCall, values, fields_set, _EXTRA_FUNCTION)


def _fast_tool_call(
    index: int, call_id: str | None, name: str | None, arguments: str | None
) -> Any:
    function = None
    fields_set = {"index"}
    if name is not None or arguments is not None:
        function = _fast_function(name, arguments)
        fields_set.add("function")
    kind = None
    if call_id is not None or name is not None:
        kind = "function"
        fields_set.add("type")
    if call_id is not None:
        fields_set.add("id")
    values = {"id": call_id, "type": kind, "index": index, "function": function}
    return _built(_protocol.DeltaToolCall, values, fields_set, _EXTRA_TOOL_CALL)


def _fast_message(content: str | None, tool_calls: list[Any], reasoning: str | None) -> Any:
    fields_set = set()
    if content:
        fields_set.add("content")
    else:
        content = None
    if reasoning:
        fields_set.add("reasoning")
    else:
        reasoning = None
    if tool_calls:
        fields_set.add("tool_calls")
    values = {"role": None, "content": content, "reasoning": reasoning, "tool_calls": tool_calls}
    return _built(_protocol.DeltaMessage, values, fields_set, _EXTRA_MESSAGE)


def _validated_tool_call(
    index: int, call_id: str | None, name: str | None, arguments: str | None
) -> Any:
    function: dict[str, str] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    fields: dict[str, Any] = {"index": index}
    if call_id is not None:
        fields["id"] = call_id
    if call_id is not None or name is not None:
        fields["type"] = "function"
    if function:
        fields["function"] = _protocol.DeltaFunctionCall(**function)
    return _protocol.DeltaToolCall(**fields)


def _validated_message(content: str | None, tool_calls: list[Any], reasoning: str | None) -> Any:
    fields: dict[str, Any] = {}
    if content:
        fields["content"] = content
    if reasoning:
        fields["reasoning"] = reasoning
    if tool_calls:
        fields["tool_calls"] = tool_calls
    return _protocol.DeltaMessage(**fields)


def _fast_is_exact() -> bool:
    """Whether the fast builders give what the validating constructors give, field for
    field, for every shape a stream produces (and the classes hold nothing else)."""
    expected_fields = {
        _protocol.DeltaFunctionCall: {"name", "arguments"},
        _protocol.DeltaToolCall: {"id", "type", "index", "function"},
        _protocol.DeltaMessage: {"role", "content", "reasoning", "tool_calls"},
    }
    for cls, names in expected_fields.items():
        if (
            set(cls.model_fields) != names
            or cls.__pydantic_post_init__ is not None
            or cls.__private_attributes__
            or cls.__pydantic_root_model__
        ):
            return False
    Call = tuple[int, str | None, str | None, str | None]
    shapes: list[tuple[str | None, list[Call], str | None]] = [
        ("Hi", [], None),
        (None, [(0, "chatcmpl-tool-x", "f", None)], None),
        (None, [(0, "chatcmpl-tool-x", "f", '{"a"')], None),
        (None, [(1, None, None, ": 1}")], None),
        ("Hi", [(0, None, None, "}"), (1, "chatcmpl-tool-y", "g", "{}")], "think"),
        (None, [], "think"),
    ]
    for content, calls, reasoning in shapes:
        fast = _fast_message(content, [_fast_tool_call(*c) for c in calls], reasoning)
        slow = _validated_message(content, [_validated_tool_call(*c) for c in calls], reasoning)
        for one, other in [(fast, slow), *zip(fast.tool_calls, slow.tool_calls, strict=True)]:
            if (
                one != other
                or one.model_fields_set != other.model_fields_set
                or one.__pydantic_extra__ != other.__pydantic_extra__
            ):
                return False
        if fast.model_dump_json(exclude_unset=True) != slow.model_dump_json(exclude_unset=True):
            return False
    return True


#: Whether messages are built by the fast builders (see above).
FAST_MESSAGES = _fast_is_exact()


def delta_tool_call(
    index: int,
    *,
    id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> Any:
    """A ``DeltaToolCall`` carrying only the fields given (so ``exclude_unset`` drops the
    rest): ``type="function"`` comes with an id or a name."""
    if FAST_MESSAGES:
        return _fast_tool_call(index, id, name, arguments)
    return _validated_tool_call(index, id, name, arguments)


def delta_message(
    content: str | None, tool_calls: Sequence[Any], reasoning: str | None = None
) -> Any:
    """A ``DeltaMessage`` with only ``content``, ``reasoning`` and/or ``tool_calls`` set
    (empty text counts as not set)."""
    if FAST_MESSAGES:
        return _fast_message(content, list(tool_calls), reasoning)
    return _validated_message(content, list(tool_calls), reasoning)


def arguments_message(index: int, arguments: str) -> Any:
    """``DeltaMessage(tool_calls=[DeltaToolCall(index=index,
    function=DeltaFunctionCall(arguments=arguments))])``: one argument fragment, the
    message a stream sends for nearly every token of a call."""
    if FAST_MESSAGES:
        function = _built(
            _protocol.DeltaFunctionCall,
            {"name": None, "arguments": arguments},
            {"arguments"},
            _EXTRA_FUNCTION,
        )
        call = _built(
            _protocol.DeltaToolCall,
            {"id": None, "type": None, "index": index, "function": function},
            {"index", "function"},
            _EXTRA_TOOL_CALL,
        )
        return _built(
            _protocol.DeltaMessage,
            {"role": None, "content": None, "reasoning": None, "tool_calls": [call]},
            {"tool_calls"},
            _EXTRA_MESSAGE,
        )
    return _validated_message(None, [_validated_tool_call(index, None, None, arguments)], None)


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


def validation_error(message: str, *, parameter: str) -> Exception:
    """The error vLLM answers with HTTP 400 and ``message`` (``VLLMValidationError``)."""
    from vllm.exceptions import VLLMValidationError  # noqa: PLC0415 - newer vLLMs only

    error: Exception = VLLMValidationError(message, parameter=parameter)
    return error
