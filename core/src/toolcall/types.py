"""The values a parser reads and writes: requests, deltas, calls, parses.

All of them are frozen dataclasses with no behaviour beyond small conversions, so
that a parser, the conformance kit and the vLLM bridge can exchange them without
importing one another (and without pydantic or vLLM).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "RECOVERIES",
    "Delta",
    "Event",
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
]


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

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Request:
        """Read ``tools``, ``tool_choice`` and ``parallel_tool_calls`` of a request body.

        A missing ``tool_choice`` is ``auto`` when tools are given and ``none``
        otherwise, as vLLM's request validator decides.
        """
        raw_tools = data.get("tools") or ()
        if not isinstance(raw_tools, Sequence) or isinstance(raw_tools, str | bytes):
            msg = "tools must be a list"
            raise ValueError(msg)
        tools = tuple(
            Tool.from_openai(tool)
            for tool in raw_tools
            if isinstance(tool, Mapping) and tool.get("type", "function") == "function"
        )
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


@dataclass(frozen=True)
class ToolCallDelta:
    """One entry of ``Delta.tool_calls``.

    The first entry of call ``index`` carries ``id`` and the complete ``name``;
    later entries carry only argument text.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class Delta:
    """What one step of a stream releases: content text and tool-call pieces."""

    content: str = ""
    tool_calls: tuple[ToolCallDelta, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.content or self.tool_calls)


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


#: Named tolerances of the parsing policy (DESIGN §6). Every other event name
#: reports a defect or a decision, not a recovery.
RECOVERIES = frozenset(
    {
        "python-literal",
        "parameters-key",
        "arguments-string",
        "missing-end",
        "bare-json",
        "missing-value-open",
    }
)


@dataclass(frozen=True)
class Event:
    """Something a parse did that a test or a log may want to see.

    ``name`` is a recovery from :data:`RECOVERIES`, or one of
    ``malformed-arguments`` (a committed call whose arguments are not a JSON
    object), ``truncated`` (a committed call cut off by the end of output) and
    ``unparsed-markup`` (markup that could not be read as a call, returned as
    content).
    """

    name: str
    call_index: int | None = None
    detail: str = ""

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
    tool-call markup (markers, call bodies, whitespace between calls); everything
    outside them is content. The delta contract checker uses it to prove that
    nothing was lost.
    """

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    events: tuple[Event, ...] = ()
    framing: tuple[Span, ...] = ()

    @property
    def recoveries(self) -> tuple[str, ...]:
        return tuple(event.name for event in self.events if event.is_recovery)

    def to_openai(self) -> dict[str, Any]:
        """The assistant message, as OpenAI's Chat Completions API shapes it."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return message

    def to_json(self) -> str:
        return json.dumps(self.to_openai(), ensure_ascii=False)
