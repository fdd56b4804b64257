"""toolcall-core: the parser protocol, the delta contract, the strictness resolver,
the plugin registry and the vLLM bridge."""

from __future__ import annotations

from toolcall.callstream import CallStream
from toolcall.hookspecs import hookimpl
from toolcall.parser import (
    IdStyle,
    Parser,
    ParserContext,
    Stream,
    assemble,
    new_call_id,
    strict_parsing_from_env,
)
from toolcall.registry import ParserEntry, PluginError, Registry, UnknownParserError
from toolcall.strictness import Obligation, Plan, ToolPlan
from toolcall.types import (
    RECOVERIES,
    WHITESPACE,
    Delta,
    Event,
    EventName,
    NamedChoice,
    Parsed,
    Request,
    Span,
    StrictLevel,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    Vocabulary,
    is_blank,
)

__version__ = "0.1.0"

__all__ = [
    "RECOVERIES",
    "WHITESPACE",
    "CallStream",
    "Delta",
    "Event",
    "EventName",
    "IdStyle",
    "NamedChoice",
    "Obligation",
    "Parsed",
    "Parser",
    "ParserContext",
    "ParserEntry",
    "Plan",
    "PluginError",
    "Registry",
    "Request",
    "Span",
    "Stream",
    "StrictLevel",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolPlan",
    "UnknownParserError",
    "Vocabulary",
    "__version__",
    "assemble",
    "hookimpl",
    "is_blank",
    "new_call_id",
    "strict_parsing_from_env",
]
