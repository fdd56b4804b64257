"""The values a parser reads and writes: requests, deltas, calls, parses.

All of them are frozen dataclasses with no behaviour beyond small conversions, so
that a parser, the conformance kit and the vLLM bridge can exchange them without
importing one another (and without pydantic or vLLM).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

__all__ = [
    "CUSTOM_TOOL_PARAMETERS",
    "NAMESPACE_SEPARATOR",
    "RECOVERIES",
    "WHITESPACE",
    "Delta",
    "Event",
    "EventName",
    "NamedChoice",
    "Parsed",
    "Request",
    "Span",
    "StrictLevel",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "Vocabulary",
    "function_tools",
    "is_blank",
]


#: The whitespace of the parsing policy: JSON's four characters. Content made of
#: them only is null, and they are the only characters the content whitespace
#: rules hold back or trim, in streaming and one-shot parsing alike.
WHITESPACE = " \t\r\n"


def is_blank(text: str) -> bool:
    """Whether ``text`` holds nothing but :data:`WHITESPACE` (or nothing)."""
    return not text.strip(WHITESPACE)


class StrictLevel(enum.IntEnum):
    """vLLM's ``--tool-strict-level`` (``ToolStrictLevel`` in vLLM 0.33), same order."""

    AUTO = 0
    FUNCTION = 1
    PARAMETER = 2

    @classmethod
    def from_name(cls, name: str) -> StrictLevel:
        try:
            return cls[name.strip().upper()]
        except KeyError:
            choices = ", ".join(level.name.lower() for level in cls)
            msg = f"unknown strict level {name!r} (choose from {choices})"
            raise ValueError(msg) from None


@dataclass(frozen=True)
class Tool:
    """One function tool of a request."""

    name: str
    parameters: Mapping[str, Any] | None = None
    strict: bool | None = None
    description: str | None = None

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Tool:
        """Read a Chat Completions tool (``{"type": "function", "function": {...}}``)
        or a Responses API function tool (``{"type": "function", "name": ...}``)."""
        function = data.get("function", data)
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            msg = "a tool needs a function name"
            raise ValueError(msg)
        parameters = function.get("parameters")
        strict = function.get("strict")
        description = function.get("description")
        return cls(
            name=function["name"],
            parameters=parameters if isinstance(parameters, Mapping) else None,
            strict=strict if isinstance(strict, bool) else None,
            description=description if isinstance(description, str) else None,
        )

    def to_openai(self) -> dict[str, Any]:
        function: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            function["description"] = self.description
        if self.parameters is not None:
            function["parameters"] = self.parameters
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}


#: How vLLM 0.33 names a function of a Responses API ``namespace`` tool to the model:
#: ``NAMESPACE__NAME`` (``flat_namespace_tool_name``, vllm/tool_parsers/utils.py:199,208-209).
NAMESPACE_SEPARATOR = "__"

#: The parameters of the one-string function vLLM 0.33 shows the model for a Responses API
#: ``custom`` tool (``custom_tool_parameters``, vllm/tool_parsers/utils.py:42-57,60-66).
CUSTOM_TOOL_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "input": {"type": "string", "description": "The freeform text payload for this tool."}
    },
    "required": ["input"],
    "additionalProperties": False,
}


def function_tools(raw_tools: Sequence[object]) -> Iterator[Tool]:
    """The function tools of a request's ``tools``, as vLLM 0.33 shows them to the model.

    Mirrors ``get_function_tools`` (vllm/tool_parsers/utils.py:212-244), the one list vLLM
    renders into the chat template and constrains with a tool-call grammar: function tools
    as they are (Chat Completions or Responses shape); each function of a Responses
    ``namespace`` tool as ``NAMESPACE__NAME`` (its custom members are dropped, as vLLM
    drops them); a ``custom`` tool as a function taking one string, ``input``. Every other
    tool type (web search, MCP servers, ...) is never shown to the model and is skipped.
    """
    for tool in raw_tools:
        if not isinstance(tool, Mapping):
            continue
        kind = tool.get("type", "function")
        if kind == "function":
            yield Tool.from_openai(tool)
        elif kind == "namespace":
            namespace, members = tool.get("name"), tool.get("tools")
            if not isinstance(namespace, str) or not isinstance(members, Sequence):
                msg = "a namespace tool needs a name and a list of tools"
                raise ValueError(msg)
            for member in members:
                if isinstance(member, Mapping) and member.get("type") == "function":
                    function = Tool.from_openai(member)
                    yield replace(function, name=namespace + NAMESPACE_SEPARATOR + function.name)
        elif kind == "custom":
            name, description = tool.get("name"), tool.get("description")
            if not isinstance(name, str):
                msg = "a custom tool needs a name"
                raise ValueError(msg)
            yield Tool(
                name=name,
                parameters=CUSTOM_TOOL_PARAMETERS,
                description=description if isinstance(description, str) else None,
            )


@dataclass(frozen=True)
class NamedChoice:
    """``tool_choice: {"type": "function", "function": {"name": NAME}}``."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "required", "none"] | NamedChoice | None


@dataclass(frozen=True)
class Request:
    """The part of a chat request that parsing depends on.

    ``tool_choice=None`` is an explicit ``null`` in the request: vLLM parses it like
    ``auto`` but never constrains it (see the strictness resolver).
    """

    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool = True

    def __post_init__(self) -> None:
        # ``tools=None`` means no tools, and any iterable of Tool is kept as a tuple;
        # anything else is a TypeError here rather than a crash in the first parser.
        given: object = self.tools
        if given is None:
            given = ()
        if not isinstance(given, Iterable) or isinstance(given, str | bytes | Mapping):
            msg = f"Request.tools must be Tool values, not {type(given).__name__}"
            raise TypeError(msg)
        tools = tuple(given)
        for tool in tools:
            if not isinstance(tool, Tool):
                msg = f"Request.tools must be Tool values, not {type(tool).__name__}"
                raise TypeError(msg)
        if tools is not self.tools:
            object.__setattr__(self, "tools", tools)

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Request:
        """Read ``tools``, ``tool_choice`` and ``parallel_tool_calls`` of a request body.

        ``tools`` are read as vLLM shows them to the model (:func:`function_tools`:
        namespaced functions as ``NAMESPACE__NAME``, custom tools as one-string
        functions). A missing ``tool_choice`` is ``auto`` when tools are given and
        ``none`` otherwise, as vLLM's request validator decides.
        """
        raw_tools = data.get("tools") or ()
        if not isinstance(raw_tools, Sequence) or isinstance(raw_tools, str | bytes):
            msg = "tools must be a list"
            raise ValueError(msg)
        tools = tuple(function_tools(raw_tools))
        if "tool_choice" in data:
            choice = parse_tool_choice(data["tool_choice"])
        else:
            choice = "auto" if tools else "none"
        parallel = data.get("parallel_tool_calls")
        return cls(
            tools=tools,
            tool_choice=choice,
            parallel_tool_calls=parallel is not False,
        )

    def tool(self, name: str) -> Tool | None:
        """The declared tool called ``name``, if any."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None

    def to_openai(self) -> dict[str, Any]:
        body: dict[str, Any] = {"tools": [tool.to_openai() for tool in self.tools]}
        if isinstance(self.tool_choice, NamedChoice):
            body["tool_choice"] = {"type": "function", "function": {"name": self.tool_choice.name}}
        else:
            body["tool_choice"] = self.tool_choice
        body["parallel_tool_calls"] = self.parallel_tool_calls
        return body


def parse_tool_choice(value: object) -> ToolChoice:
    """Read an OpenAI ``tool_choice`` value (Chat Completions or Responses shape)."""
    if value is None:
        return None
    if value in ("auto", "required", "none"):
        return value
    if isinstance(value, Mapping):
        function = value.get("function", value)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return NamedChoice(function["name"])
    msg = f"unsupported tool_choice {value!r}"
    raise ValueError(msg)


@dataclass(frozen=True)
class Vocabulary:
    """What a parser may know about the tokenizer, without holding the tokenizer.

    ``special_tokens`` maps the text of added and special tokens (tool markers,
    end-of-turn tokens) to their ids; ``metadata`` carries extra keys of
    ``tokenizer_config.json`` such as ``response_template``.
    """

    special_tokens: Mapping[str, int] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def id_of(self, text: str) -> int | None:
        return self.special_tokens.get(text)


class ToolCallDelta:
    """One entry of ``Delta.tool_calls``.

    The first entry of call ``index`` carries ``id`` and the complete ``name``;
    later entries carry only argument text. A slotted value rather than a frozen
    dataclass: streams build one per token, and a frozen dataclass costs four
    times as much to build. Treat it as immutable.
    """

    __slots__ = ("arguments", "id", "index", "name")

    def __init__(
        self, index: int, id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> None:
        self.index = index
        self.id = id
        self.name = name
        self.arguments = arguments

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolCallDelta:
            return NotImplemented
        return (self.index, self.id, self.name, self.arguments) == (
            other.index,
            other.id,
            other.name,
            other.arguments,
        )

    def __hash__(self) -> int:
        return hash((self.index, self.id, self.name, self.arguments))

    def __repr__(self) -> str:
        return (
            f"ToolCallDelta(index={self.index!r}, id={self.id!r}, name={self.name!r}, "
            f"arguments={self.arguments!r})"
        )


class Delta:
    """What one step of a stream releases: content text, tool-call pieces, and
    reasoning text (only for formats that mark reasoning themselves, DESIGN §6).

    Slotted, like :class:`ToolCallDelta`, for the same reason; treat it as immutable.
    """

    __slots__ = ("content", "reasoning", "tool_calls")

    def __init__(
        self, content: str = "", tool_calls: tuple[ToolCallDelta, ...] = (), reasoning: str = ""
    ) -> None:
        self.content = content
        self.tool_calls = tool_calls
        self.reasoning = reasoning

    def __bool__(self) -> bool:
        return bool(self.content or self.tool_calls or self.reasoning)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Delta:
            return NotImplemented
        return (self.content, self.tool_calls, self.reasoning) == (
            other.content,
            other.tool_calls,
            other.reasoning,
        )

    def __hash__(self) -> int:
        return hash((self.content, self.tool_calls, self.reasoning))

    def __repr__(self) -> str:
        reasoning = f", reasoning={self.reasoning!r}" if self.reasoning else ""
        return f"Delta(content={self.content!r}, tool_calls={self.tool_calls!r}{reasoning})"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class EventName(enum.StrEnum):
    """The names of the events a parse records (DESIGN §6).

    The recoveries are the named tolerances of the parsing policy, each switched
    off by ``TOOLCALL_STRICT_PARSING=1``; a family adds its own here, by name,
    before it ships them. The others report a defect or a decision. Members are
    strings, so ``Event.name`` compares equal to either spelling.
    """

    # Recoveries.
    PYTHON_LITERAL = "python-literal"
    """Single quotes, ``True``/``False``/``None`` in a JSON call body."""
    PARAMETERS_KEY = "parameters-key"
    """``"parameters"`` read as ``"arguments"``."""
    ARGUMENTS_STRING = "arguments-string"
    """Arguments given as a JSON string that decodes to an object."""
    MISSING_END = "missing-end"
    """No end marker at the end of output, the call's body complete."""
    BARE_JSON = "bare-json"
    """The whole output is one JSON call object naming a declared tool (hermes)."""
    MISSING_VALUE_OPEN = "missing-value-open"
    """A GLM value written after ``</arg_key>`` without its ``<arg_value>``."""
    JSON_LITERAL = "json-literal"
    """``true``, ``false``, ``null`` in a Python call (pythonic)."""
    FUNCTION_ENVELOPE = "function-envelope"
    """A JSON call object inside OpenAI's ``{"type": "function", "function": {...}}``
    envelope (llama3_json, llama4_json)."""
    CALL_LIST = "call-list"
    """JSON call objects written as a JSON list, ``[{...}, {...}]`` (llama3_json,
    llama4_json)."""
    CONTROL_CHARACTER = "control-character"
    """A raw line break or NUL inside a one-line Python string (pythonic)."""
    RESERVED_WORD = "reserved-word"
    """A Python keyword as a keyword argument name: ``from=``, ``class=`` (pythonic)."""
    LEADING_ZERO = "leading-zero"
    """A decimal integer with leading zeros, ``07`` (pythonic)."""
    NESTED_QUOTE = "nested-quote"
    """An unescaped quote inside a Python string of the same quote (pythonic)."""
    DASHED_NAME = "dashed-name"
    """A Python call name with ``-`` in it, ``get-weather(...)`` (pythonic)."""
    BARE_CALL = "bare-call"
    """A Python call written without its list, naming a declared tool (pythonic)."""

    # Defects and decisions.
    MALFORMED_ARGUMENTS = "malformed-arguments"
    """A committed call whose arguments are not a JSON object."""
    TRUNCATED = "truncated"
    """A committed call cut off by the end of output."""
    UNPARSED_MARKUP = "unparsed-markup"
    """Markup that could not be read as a call, returned as content."""
    IGNORED_MEMBER = "ignored-member"
    """A member of a call object that is neither name nor arguments, ignored."""
    DUPLICATE_KEY = "duplicate-key"
    """A key given twice: the first value is kept, the repeat is content or ignored."""
    UNREPRESENTABLE_VALUE = "unrepresentable-value"
    """A raw value whose JSON strict JSON cannot carry (``1e400``, a lone surrogate), kept
    as the model's text (see :mod:`toolcall.schema_types`)."""
    TRAILING_TEXT = "trailing-text"
    """Text after a call's complete value inside the call's region (hf), returned as
    content."""
    IGNORED_TEXT = "ignored-text"
    """Text inside a call's region that its content parser skips (hf: between the tags
    of ``xml-inline``, a ``kv-lines`` line without a separator), kept as framing."""
    INTERNAL_ERROR = "internal-error"
    """A bug of the parser's: the rest of the output is content."""

    @property
    def is_recovery(self) -> bool:
        return self.value in RECOVERIES


#: Named tolerances of the parsing policy (DESIGN §6). Every other event name
#: reports a defect or a decision, not a recovery.
RECOVERIES: frozenset[str] = frozenset(
    {
        EventName.PYTHON_LITERAL.value,
        EventName.PARAMETERS_KEY.value,
        EventName.ARGUMENTS_STRING.value,
        EventName.MISSING_END.value,
        EventName.BARE_JSON.value,
        EventName.MISSING_VALUE_OPEN.value,
        EventName.JSON_LITERAL.value,
        EventName.FUNCTION_ENVELOPE.value,
        EventName.CALL_LIST.value,
        EventName.CONTROL_CHARACTER.value,
        EventName.RESERVED_WORD.value,
        EventName.LEADING_ZERO.value,
        EventName.NESTED_QUOTE.value,
        EventName.DASHED_NAME.value,
        EventName.BARE_CALL.value,
    }
)


@dataclass(frozen=True)
class Event:
    """Something a parse did that a test or a log may want to see.

    ``name`` is one of :class:`EventName` (a third-party parser may record names of
    its own; only those in :data:`RECOVERIES` count as recoveries). ``span`` is the
    range of the output the event is about, where the parser says: for
    ``unparsed-markup``, the text it read as possible markup and returned as
    content (the contract checker lets a stream hold that text until it decides).
    """

    name: str
    call_index: int | None = None
    detail: str = ""
    span: Span | None = None

    @property
    def is_recovery(self) -> bool:
        return self.name in RECOVERIES


@dataclass(frozen=True)
class Span:
    """A half-open range ``[start, end)`` of characters of the output."""

    start: int
    end: int


@dataclass(frozen=True)
class Parsed:
    """The result of parsing a whole output.

    ``framing`` lists the character ranges of the output that the parser read as
    markup (markers, call bodies, whitespace between calls); everything outside
    them is content or reasoning. The delta contract checker uses it to prove that
    nothing was lost. ``reasoning`` is text the format itself marks as reasoning
    (``None`` for formats that do not, and when there is none).
    """

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    events: tuple[Event, ...] = ()
    framing: tuple[Span, ...] = ()
    reasoning: str | None = None

    @property
    def recoveries(self) -> tuple[str, ...]:
        return tuple(event.name for event in self.events if event.is_recovery)

    def to_openai(self) -> dict[str, Any]:
        """The assistant message, as OpenAI's Chat Completions API shapes it."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning is not None:
            message["reasoning"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return message

    def to_json(self) -> str:
        return json.dumps(self.to_openai(), ensure_ascii=False)
