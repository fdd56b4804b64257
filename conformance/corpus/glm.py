"""Write the GLM conformance corpus (parsers ``glm45`` and ``glm47``).

    python conformance/corpus/glm.py            # (re)write every case file
    python conformance/corpus/glm.py --check    # fail if a file differs from what it would write

Cases land in ``toolcall_conformance/cases/glm45/glm4.5/`` (the GLM-4.5/4.6 framing, with
newlines) and ``.../glm47/glm4.5/`` (the GLM-4.7 framing, without). Both use the GLM-4.5
tokenizer: GLM-4.5, 4.6 and the 355B GLM-4.7 share its base vocabulary and added tokens;
GLM-4.7-Flash and GLM-5 have a different one that is not available here, so outputs of those
models are tokenized with the GLM-4.5 tokenizer and say so.

Provenance:

* ``template``: the assistant turn as the GLM-4.6 chat template renders it (the text after
  ``</think>``, which is what vLLM's tool parser sees once ``--reasoning-parser glm45`` has
  taken the reasoning): ``\\n`` + content, then per call ``\\n<tool_call>NAME``, per argument
  ``\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>``, then ``\\n</tool_call>``; a string
  value verbatim, any other value as ``tojson(ensure_ascii=False)`` (transformers' filter:
  ``json.dumps`` with ``", "`` and ``": "``). :func:`glm46_turn` writes those rules; they were
  checked byte for byte against the template rendered by transformers'
  ``render_jinja_template``.
* ``wild``: raw outputs quoted in public issues, cited in ``source``.
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6, plugins/glm/README.md)
and the format, never from a parser's output. A ``reject`` says where the grammar must refuse
(``expected.grammar_refusal``), derived from the format and the tool schema. The
``constrained-*`` cases are generated under the grammar (see below).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall import Registry
from toolcall_conformance.builder import (
    Place,
    at,
    at_end,
    build_case,
    build_case_under_grammar,
    write_corpus,
)

ROOT = Path(__file__).resolve().parents[1] / "src" / "toolcall_conformance" / "cases"
TOKENIZER = "glm4.5"

GLM46_TEMPLATE = (
    "the GLM-4.6 chat template (llama.cpp's copy: ggml-org/llama.cpp "
    "models/templates/GLM-4.6.jinja @ afefa651447358ae477f31a0ea1b97adff04c64f), assistant "
    "turn after </think>, rendered by its rules (see conformance/corpus/glm.py)"
)
GLM45_MODEL = "zai-org/GLM-4.6 (GLM-4.5 tokenizer)"
GLM47_MODEL = "zai-org/GLM-4.7 (GLM-4.5 tokenizer)"


# -- tools --------------------------------------------------------------------------------


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


WEATHER = tool(
    "get_weather",
    "Current weather and forecast for a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
TIME = tool("get_time", "The current time", {"type": "object", "properties": {}})
CONFIG = tool(
    "set_config",
    "Change a cache setting",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "limits": {"type": "array", "items": {"type": "integer"}},
            "options": {"type": "object"},
            "enabled": {"type": "boolean"},
            "ratio": {"type": "number"},
        },
        "required": ["name"],
    },
)
ZIP = tool(
    "lookup_zip",
    "Look up places by postal code",
    {
        "type": "object",
        "properties": {
            "zip": {"type": "string"},
            "count": {"type": "integer"},
            "code": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "label": {"type": ["string", "integer"]},
        },
        "required": ["zip"],
    },
)
CODE = tool(
    "run_code",
    "Run a program",
    {
        "type": "object",
        "properties": {
            "language": {"type": "string"},
            "code": {"type": "string"},
            "timeout": {"type": "number"},
        },
        "required": ["language", "code"],
    },
)
SEARCH = tool(
    "search",
    "Search the company handbook",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
SHELL = tool(
    "send_command_to_shell",
    "Run a shell command",
    {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)
CURRENT_TIME = tool("get_current_time", "The current time", {"type": "object", "properties": {}})
LIST_FILES = tool("list_filenames", "List the files", {"type": "object", "properties": {}})
EXEC = tool(
    "exec",
    "Run a shell command",
    {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
)
FILE_INFO = tool(
    "get_file_info",
    "Details of a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
KAGI_SEARCH = tool(
    "kagi_search_fetch",
    "Search the web with Kagi",
    {
        "type": "object",
        "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
        "required": ["queries"],
    },
)
ALL_FUNC = tool("get_all_func", "List the functions", {"type": "object", "properties": {}})
CURRENT_WEATHER = tool(
    "get_current_weather",
    "Current weather for a location",
    {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)


# -- rendering ----------------------------------------------------------------------------


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def glm46_call(name: str, arguments: Mapping[str, object]) -> str:
    """One call as the GLM-4.5/4.6 template writes it (starting with its ``\\n``)."""
    body = "".join(
        f"\n<arg_key>{key}</arg_key>\n<arg_value>{_value(value)}</arg_value>"
        for key, value in arguments.items()
    )
    return f"\n<tool_call>{name}{body}\n</tool_call>"


def glm46_turn(content: str, calls: list[tuple[str, dict[str, object]]]) -> str:
    """The assistant turn after ``</think>``: ``\\n`` + content (if any), then the calls."""
    head = "\n" + content.strip() if content.strip() else ""
    return head + "".join(glm46_call(name, arguments) for name, arguments in calls)


def glm47_call(name: str, arguments: Mapping[str, object]) -> str:
    """One call in the GLM-4.7 framing (no newlines; vLLM's glm47_moe docstring, xgrammar)."""
    body = "".join(
        f"<arg_key>{key}</arg_key><arg_value>{_value(value)}</arg_value>"
        for key, value in arguments.items()
    )
    return f"<tool_call>{name}{body}</tool_call>"


# -- cases ----------------------------------------------------------------------------------

CASES: list[dict[str, Any]] = []


def case(
    parser: str,
    slug: str,
    text: str,
    *,
    tools: list[dict[str, Any]],
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    kind: str = "constructed",
    source: str = "written by hand for the GLM parsing policy (plugins/glm/README.md)",
    notes: str = "",
    model: str | None = None,
    recoveries: tuple[str, ...] = (),
    grammar: str | None = None,
    refusal: tuple[Place, str] | None = None,
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
) -> None:
    request: dict[str, Any] = {"tools": tools, "tool_choice": tool_choice}
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    provenance: dict[str, Any] = {"kind": kind, "source": source}
    provenance["model"] = model or (GLM45_MODEL if parser == "glm45" else GLM47_MODEL)
    if notes:
        provenance["notes"] = notes
    expected: dict[str, Any] = {
        "content": content,
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
    }
    if recoveries:
        expected["recoveries"] = list(recoveries)
    if grammar is not None:
        expected["grammar"] = grammar
    if refusal is not None:
        place, reason = refusal
        expected["grammar_refusal"] = {"offset": place(text), "reason": reason}
    CASES.append(
        {
            "parser": parser,
            "slug": slug,
            "text": text,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
        }
    )


def template(slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any) -> None:
    """A template case: the expected parse is the message the turn was rendered from."""
    case(
        "glm45",
        slug,
        glm46_turn(content, calls),
        content=content or None,
        calls=list(calls),
        kind="template",
        source=GLM46_TEMPLATE,
        **kw,
    )


# GLM-4.5 / 4.6 framing: the chat template's own rendering.

template(
    "template-single-call",
    "",
    [("get_weather", {"city": "Beijing", "days": 3})],
    tools=[WEATHER],
    grammar="accept",
)
template(
    "template-content-and-call",
    "I'll look up the weather in Paris for the next two days.",
    [("get_weather", {"city": "Paris", "days": 2, "unit": "celsius"})],
    tools=[WEATHER],
    grammar="accept",
)
template(
    "template-parallel-calls",
    "",
    [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "London", "days": 1})],
    tools=[WEATHER, TIME],
    grammar="accept",
)
template(
    "template-no-arguments",
    "",
    [("get_time", {})],
    tools=[WEATHER, TIME],
    grammar="accept",
)
template(
    "template-typed-values",
    "",
    [
        (
            "set_config",
            {
                "name": "cache",
                "limits": [10, 20],
                "options": {"mode": "fast", "retries": 2},
                "enabled": True,
                "ratio": 0.75,
            },
        )
    ],
    tools=[CONFIG],
    grammar="accept",
    notes="non-string values are written as JSON (tojson); the schema types them back",
)
template(
    "template-numeric-looking-string",
    "",
    [("lookup_zip", {"zip": "02139", "count": 5})],
    tools=[ZIP],
    grammar="accept",
    notes="zip is declared string: 02139 stays the string '02139'; count is an integer",
)
template(
    "template-multiline-code",
    "Running it now.",
    [
        (
            "run_code",
            {
                "language": "python",
                "code": 'def f(x):\n    return x < 10 and "ok"\n\nprint(f(3))',
                "timeout": 2.5,
            },
        )
    ],
    tools=[CODE],
    grammar="accept",
    notes="a string value verbatim: newlines, quotes and '<' inside",
)
template(
    "template-unicode",
    "東京の天気を調べます 🗼",
    [("get_weather", {"city": "東京", "unit": "celsius"})],
    tools=[WEATHER],
    grammar="accept",
)

# GLM-4.5 / 4.6 framing: the policy's edges.

case(
    "glm45",
    "unknown-tool-kept",
    glm46_turn("", [("get_stock_price", {"symbol": "AAPL", "days": 7})]),
    tools=[WEATHER],
    content=None,
    calls=[("get_stock_price", {"symbol": "AAPL", "days": 7})],
    grammar="reject",
    refusal=(at("get_stock_price", 4), "get_weather is the only tool: 'get_s' cannot be it"),
    notes="a name no tool declares is kept; its values are read as JSON when they parse",
)
case(
    "glm45",
    "undeclared-keys",
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>"
    "\n<arg_key>verbose</arg_key>\n<arg_value>true</arg_value>"
    "\n<arg_key>note</arg_key>\n<arg_value>hello world</arg_value>"
    "\n<arg_key>ids</arg_key>\n<arg_value>[1, 2]</arg_value>\n</tool_call>",
    tools=[WEATHER],
    content=None,
    calls=[
        ("get_weather", {"city": "Oslo", "verbose": True, "note": "hello world", "ids": [1, 2]})
    ],
    grammar="reject",
    refusal=(at("verbose"), "after city only the keys days and unit (in that order) may come"),
    notes="undeclared keys are kept: read as JSON when they parse, else strings",
)
case(
    "glm45",
    "union-types",
    glm46_call("lookup_zip", {"zip": "12345", "count": "7", "code": "42", "label": "42"})
    + glm46_call("lookup_zip", {"zip": "54321", "code": "A-7", "label": "x"}),
    tools=[ZIP],
    content=None,
    calls=[
        ("lookup_zip", {"zip": "12345", "count": 7, "code": 42, "label": "42"}),
        ("lookup_zip", {"zip": "54321", "code": "A-7", "label": "x"}),
    ],
    grammar="accept",
    notes="anyOf [integer, string] reads 42 as a number and A-7 as a string; "
    "type [string, integer] reads 42 as the string '42' (first type that fits)",
)
case(
    "glm45",
    "empty-values",
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value></arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value></arg_value>\n</tool_call>",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "", "days": ""})],
    grammar="reject",
    refusal=(
        at("<arg_value></arg_value>", len("<arg_value>"), nth=2),
        "days is an integer: the value cannot be empty (an empty string for city is allowed)",
    ),
    notes="an empty string value is ''; an empty integer value does not parse, so it is kept "
    "as the string ''",
)
case(
    "glm45",
    "duplicate-key-first-wins",
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    "\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
    tools=[WEATHER],
    content="<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>",
    calls=[("get_weather", {"city": "Paris", "days": 2})],
    grammar="reject",
    refusal=(
        at("<arg_key>city", len("<arg_key>"), nth=2),
        "city again: only days or unit may follow",
    ),
    notes="a repeated key: the first value was already streamed and wins; the repeated pair "
    "is content, verbatim",
)
case(
    "glm45",
    "truncated-in-string-value",
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>San Fran",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", '{"city": "San Fran')],
    finish_reason="length",
    notes="cut off inside a string value: the arguments are what was streamed, not closed",
)
case(
    "glm45",
    "truncated-in-number",
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value>1",
    tools=[WEATHER],
    content="<arg_value>1",
    calls=[("get_weather", '{"city": "Paris", "days": ')],
    finish_reason="length",
    notes="a number is emitted whole at </arg_value>: cut off before it, the call keeps "
    '{"city": "Paris", "days": and the unread value is content',
)
case(
    "glm45",
    "truncated-in-name",
    "Let me check.\n<tool_call>get_wea",
    tools=[WEATHER],
    content="Let me check.\n<tool_call>get_wea",
    calls=[],
    finish_reason="length",
    notes="a name is complete only at a newline, <arg_key> or </tool_call>: no call, the "
    "markup is content",
)
case(
    "glm45",
    "closing-tag-lookalikes",
    glm46_call(
        "run_code",
        {
            "language": "python",
            "code": 'print("</arg_val>", "&lt;/arg_value&gt;", "< /arg_value>", "</ arg_value>")',
        },
    ),
    tools=[CODE],
    content=None,
    calls=[
        (
            "run_code",
            {
                "language": "python",
                "code": 'print("</arg_val>", "&lt;/arg_value&gt;", "< /arg_value>", '
                '"</ arg_value>")',
            },
        )
    ],
    grammar="accept",
    notes="text that only looks like </arg_value> is value text",
)
case(
    "glm45",
    "text-after-closing-tag",
    "\n<tool_call>run_code\n<arg_key>language</arg_key>\n<arg_value>python</arg_value>"
    '\n<arg_key>code</arg_key>\n<arg_value>s = "</arg_value>"\nprint(s)</arg_value>'
    "\n</tool_call>",
    tools=[CODE],
    content='"\nprint(s)</arg_value>',
    calls=[("run_code", '{"language": "python", "code": "s = \\""')],
    grammar="reject",
    refusal=(
        at('s = "</arg_value>', len('s = "</arg_value>')),
        "after the code value only timeout, whitespace or </tool_call> may come",
    ),
    notes="the first </arg_value> ends the value; text after it inside the call is a defect: "
    "the call keeps what was streamed and the rest up to </tool_call> is content",
)
case(
    "glm45",
    "defect-between-good-calls",
    glm46_call("get_weather", {"city": "Paris"})
    + "\n<tool_call>get_weather\n<arg_key>city\n<arg_value>Rome</arg_value>\n</tool_call>"
    + glm46_call("get_weather", {"city": "Madrid"}),
    tools=[WEATHER],
    content="<arg_key>city\n<arg_value>Rome</arg_value>",
    calls=[
        ("get_weather", {"city": "Paris"}),
        ("get_weather", ""),
        ("get_weather", {"city": "Madrid"}),
    ],
    grammar="reject",
    refusal=(
        at("<arg_key>city\n<arg_value>Rome", len("<arg_key>city")),
        "</arg_key> must close the key",
    ),
    notes="the second call lacks </arg_key>: its name was complete, so it stays a call with the "
    "arguments streamed before the defect (none), the rest is content; the calls around it "
    "parse as if it were not there",
)
case(
    "glm45",
    "unreadable-call-is-content",
    glm46_call("get_weather", {"city": "Paris"})
    + '\n<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    + glm46_call("get_weather", {"city": "Madrid"}),
    tools=[WEATHER],
    content='<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
    calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Madrid"})],
    grammar="reject",
    refusal=(
        at("<tool_call>{", len("<tool_call>")),
        "a declared tool's name must follow <tool_call>",
    ),
    notes="JSON where the name belongs: no readable name, so the markup is content",
)
case(
    "glm45",
    "content-around-calls",
    "Checking the weather."
    + glm46_call("get_weather", {"city": "Paris"})
    + "\nOne moment while I fetch it.",
    tools=[WEATHER],
    content="Checking the weather.\nOne moment while I fetch it.",
    calls=[("get_weather", {"city": "Paris"})],
    grammar="accept",
)
case(
    "glm45",
    "stray-end-marker",
    "The answer is 42.</tool_call>",
    tools=[WEATHER],
    content="The answer is 42.</tool_call>",
    calls=[],
    grammar="reject",
    refusal=(
        at("</tool_call>", len("</tool_call>") - 1),
        "free text may not hold </tool_call>: its last character completes it",
    ),
    notes="an end marker without a start marker is content",
)
case(
    "glm45",
    "tool-choice-none",
    glm46_turn("Here is the call I would make:", [("get_weather", {"city": "Paris"})]),
    tools=[WEATHER],
    tool_choice="none",
    content="Here is the call I would make:\n<tool_call>get_weather\n<arg_key>city</arg_key>"
    "\n<arg_value>Paris</arg_value>\n</tool_call>",
    calls=[],
    notes='tool_choice "none": the whole output is content, markup included',
)
case(
    "glm45",
    "required-two-calls",
    glm46_turn("", [("get_weather", {"city": "Paris"}), ("get_time", {})]),
    tools=[WEATHER, TIME],
    tool_choice="required",
    content=None,
    calls=[("get_weather", {"city": "Paris"}), ("get_time", {})],
    grammar="accept",
)
case(
    "glm45",
    "named-choice",
    glm46_turn("", [("get_weather", {"city": "Paris", "days": 1})]),
    tools=[WEATHER, TIME],
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
    content=None,
    calls=[("get_weather", {"city": "Paris", "days": 1})],
    grammar="accept",
)
case(
    "glm45",
    "schema-violation-type",
    glm46_call("get_weather", {"city": "Paris", "days": "three"}),
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Paris", "days": "three"})],
    grammar="reject",
    refusal=(at("three"), "days is an integer"),
    notes="days is an integer: 'three' does not parse, so it is kept as a string; the "
    "grammar refuses it",
)
case(
    "glm45",
    "schema-violation-enum",
    glm46_call("get_weather", {"city": "Paris", "unit": "kelvin"}),
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Paris", "unit": "kelvin"})],
    grammar="reject",
    refusal=(at("kelvin"), "unit is celsius or fahrenheit"),
)
case(
    "glm45",
    "missing-required-key",
    glm46_call("get_weather", {"days": 3}),
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"days": 3})],
    grammar="reject",
    refusal=(at("days"), "city is required and comes first (the schema's order)"),
)

case(
    "glm45",
    "wild-array-value",
    '<tool_call>kagi_search_fetch\n<arg_key>queries</arg_key>\n<arg_value>["keyword"]</arg_value>'
    "\n</tool_call>",
    tools=[KAGI_SEARCH],
    content=None,
    calls=[("kagi_search_fetch", {"queries": ["keyword"]})],
    grammar="accept",
    kind="wild",
    source="lmstudio-ai/lmstudio-bug-tracker#829 (serialx, 2025-08-02), given as GLM 4.5's tool "
    "call pattern in a request for GLM tool-call support",
    model="GLM 4.5, per the issue (GLM-4.5 tokenizer)",
    notes="possibly an illustration of the format (the value looks like a placeholder); the kagi "
    "MCP schema is not in the issue: a kagi_search_fetch tool with an array of strings queries "
    "stands in. The array value is JSON text typed by the schema",
)
case(
    "glm45",
    "wild-cjk-value",
    "<tool_call>get_current_weather\n<arg_key>location</arg_key>\n<arg_value>杭州</arg_value>"
    "\n</tool_call>",
    tools=[CURRENT_WEATHER],
    content=None,
    calls=[("get_current_weather", {"location": "杭州"})],
    grammar="accept",
    kind="wild",
    source="alibaba/rtp-llm#525 (soaringk, 2026-01-05), the GLM-4.6 tool-call shape the old "
    "detector expected",
    model="GLM-4.6, per the pull request (GLM-4.5 tokenizer)",
    notes="possibly an illustration of the format; the tool schema is not in the pull request: a "
    "get_current_weather tool with a string location stands in",
)

# GLM-4.7 framing.

case(
    "glm47",
    "single-call",
    glm47_call("get_weather", {"city": "Beijing", "days": 3}),
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Beijing", "days": 3})],
    grammar="accept",
)
case(
    "glm47",
    "content-then-parallel-calls",
    "Let me check both."
    + glm47_call("get_weather", {"city": "Paris", "unit": "fahrenheit"})
    + glm47_call("get_weather", {"city": "London", "days": 2}),
    tools=[WEATHER],
    content="Let me check both.",
    calls=[
        ("get_weather", {"city": "Paris", "unit": "fahrenheit"}),
        ("get_weather", {"city": "London", "days": 2}),
    ],
    grammar="accept",
)
case(
    "glm47",
    "multiline-value",
    glm47_call(
        "run_code",
        {"language": "bash", "code": 'for f in *.txt; do\n  echo "<$f>"\ndone', "timeout": 10},
    ),
    tools=[CODE],
    content=None,
    calls=[
        (
            "run_code",
            {"language": "bash", "code": 'for f in *.txt; do\n  echo "<$f>"\ndone', "timeout": 10},
        )
    ],
    grammar="accept",
)
case(
    "glm47",
    "wild-missing-value-open",
    "<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value></tool_call>",
    tools=[SEARCH],
    content=None,
    calls=[("search", {"query": "how many vacation days left"})],
    recoveries=("missing-value-open",),
    grammar="reject",
    refusal=(at("how many"), "<arg_value> must open the value"),
    kind="wild",
    source="https://github.com/vllm-project/vllm/issues/49248 (raw sampled tokens captured "
    "with logprobs; vLLM nightly, --tool-call-parser glm47 --reasoning-parser glm45)",
    model="GLM-5.2 NVFP4, per the issue (tokenized here with the GLM-4.5 tokenizer)",
    notes="the tool schema is not in the issue: a one-string-parameter search tool stands in",
)
case(
    "glm47",
    "missing-value-open-mixed",
    "<tool_call>get_weather<arg_key>city</arg_key>Paris</arg_value>"
    "<arg_key>days</arg_key>2</arg_value>"
    "<arg_key>unit</arg_key><arg_value>celsius</arg_value></tool_call>",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Paris", "days": 2, "unit": "celsius"})],
    recoveries=("missing-value-open",),
    grammar="reject",
    refusal=(at("Paris"), "<arg_value> must open the value"),
    notes="the missing <arg_value> failure on a string and on an integer, beside a well-formed "
    "pair",
)
case(
    "glm47",
    "wild-missing-arg-key-open",
    "<tool_call>send_command_to_shellcommand</arg_key><arg_value>echo test</arg_value></tool_call>",
    tools=[SHELL],
    content="<tool_call>send_command_to_shellcommand</arg_key><arg_value>echo test</arg_value>"
    "</tool_call>",
    calls=[],
    grammar="reject",
    refusal=(
        at("command</arg_key>"),
        "after the name send_command_to_shell only whitespace, <arg_key> or </tool_call> may come",
    ),
    kind="wild",
    source="https://github.com/vllm-project/vllm/pull/47190 (observed malformed output from "
    "a GLM-4.7-compatible serving setup)",
    model="a GLM-4.7-compatible model, per the pull request (GLM-4.5 tokenizer)",
    notes="<arg_key> is missing, so no newline, <arg_key> or </tool_call> ends the name: no "
    "readable name, the markup is content (recovering it by tool-name prefix is not a named "
    "recovery)",
)
case(
    "glm47",
    "wild-no-arguments",
    "<tool_call>get_current_time</tool_call>",
    tools=[CURRENT_TIME],
    content=None,
    calls=[("get_current_time", {})],
    grammar="accept",
    kind="wild",
    source="https://github.com/vllm-project/vllm/pull/32097 (the description's example of a "
    "GLM-4.7 output for a tool without arguments, which vLLM's glm47 parser failed on)",
)
case(
    "glm47",
    "wild-no-arguments-newline",
    "<tool_call>list_filenames\n</tool_call>",
    tools=[LIST_FILES],
    content=None,
    calls=[("list_filenames", {})],
    grammar="accept",
    kind="wild",
    source="https://github.com/sgl-project/sglang/pull/15333 (comment of 2025-12-18 giving this "
    "GLM-4.7 call to a tool without parameters as an example the new parser failed on)",
)
case(
    "glm47",
    "wild-shadow-exec-two-arguments",
    "<tool_call>exec<arg_key>command</arg_key><arg_value>cd /home/hiiy/.openclaw && gh pr list "
    "--repo openclaw/openclaw --limit 10 --state open</arg_value><arg_key>timeout</arg_key>"
    "<arg_value>30</arg_value></tool_call>",
    tools=[EXEC],
    content=None,
    calls=[
        (
            "exec",
            {
                "command": "cd /home/hiiy/.openclaw && gh pr list --repo openclaw/openclaw "
                "--limit 10 --state open",
                "timeout": 30,
            },
        )
    ],
    grammar="accept",
    kind="wild",
    source="openclaw/openclaw#138198 (ericcaiwx-star, 2026-09-04), quoting the GLM-style "
    "tool-call text of openclaw/openclaw#61645 that leaked into the chat",
    model="a GLM-style model, not named in the issue (GLM-4.5 tokenizer)",
    notes="the exec tool's schema is not in the issue: a string command and a number timeout "
    "stand in",
)
case(
    "glm47",
    "wild-parallel-calls-newline",
    "<tool_call>get_file_info<arg_key>path</arg_key><arg_value>file1.jpg</arg_value></tool_call>\n"
    "<tool_call>get_file_info<arg_key>path</arg_key><arg_value>file2.jpg</arg_value></tool_call>",
    tools=[FILE_INFO],
    content=None,
    calls=[("get_file_info", {"path": "file1.jpg"}), ("get_file_info", {"path": "file2.jpg"})],
    grammar="accept",
    kind="wild",
    source="lmstudio-ai/lmstudio-bug-tracker#1528 (shashwata2020, 2026-02-17), the parallel "
    "calls LM Studio 0.4.2 failed on with 'Extra content after end of tool call'",
    model="zai-org/GLM-4.7-Flash, per the issue (its tokenizer is not available: GLM-4.5 "
    "tokenizer)",
    notes="possibly an illustration (the file names look generic); desktop-commander's schema is "
    "not in the issue: a get_file_info tool with a string path stands in. The newline between "
    "the calls is whitespace-only content: null",
)
case(
    "glm47",
    "wild-no-arguments-rtp-llm",
    "<tool_call>get_all_func</tool_call>",
    tools=[ALL_FUNC],
    content=None,
    calls=[("get_all_func", {})],
    grammar="accept",
    kind="wild",
    source="alibaba/rtp-llm#525 (soaringk, 2026-01-05), an example of a GLM-4.7 call without "
    "arguments that the GLM-4.6 detector failed on",
    model="GLM-4.7, per the pull request (GLM-4.5 tokenizer)",
    notes="possibly an illustration; the tool is not in the pull request: a get_all_func tool "
    "without parameters stands in",
)
case(
    "glm47",
    "parallel-false-one-call",
    glm47_call("get_weather", {"city": "Oslo"}),
    tools=[WEATHER, TIME],
    parallel_tool_calls=False,
    content=None,
    calls=[("get_weather", {"city": "Oslo"})],
    grammar="accept",
)
case(
    "glm47",
    "parallel-false-two-calls",
    glm47_call("get_weather", {"city": "Oslo"}) + glm47_call("get_time", {}),
    tools=[WEATHER, TIME],
    parallel_tool_calls=False,
    content=None,
    calls=[("get_weather", {"city": "Oslo"}), ("get_time", {})],
    grammar="reject",
    refusal=(at("<tool_call>get_time"), "parallel_tool_calls false: nothing after the first call"),
    notes="parallel_tool_calls false: the grammar stops after the first call; the parser still "
    "returns both (nothing the model wrote is lost)",
)
case(
    "glm47",
    "missing-end",
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value>",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Oslo"})],
    recoveries=("missing-end",),
    grammar="reject",
    refusal=(at_end, "the output ends without </tool_call>"),
    notes="the output stopped after a complete argument without </tool_call>",
)
case(
    "glm47",
    "truncated-in-key",
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value><arg_key>da",
    tools=[WEATHER],
    content="<arg_key>da",
    calls=[("get_weather", '{"city": "Oslo"')],
    finish_reason="length",
    notes="a key is emitted at </arg_key>: cut off before it, the call keeps what was "
    "streamed and the unread key is content",
)
case(
    "glm47",
    "named-choice",
    glm47_call("get_time", {}),
    tools=[WEATHER, TIME],
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    content=None,
    calls=[("get_time", {})],
    grammar="accept",
)
case(
    "glm47",
    "required-wrong-tool",
    glm47_call("get_weather", {"city": "Oslo"}),
    tools=[WEATHER, TIME],
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    content=None,
    calls=[("get_weather", {"city": "Oslo"})],
    grammar="reject",
    refusal=(at("get_weather", 4), "the named tool is get_time: 'get_w' cannot be it"),
    notes="the named tool is get_time: the grammar refuses another; the parser keeps the call",
)


# Generated under the grammar (request.constrained): the text is the template's (or the 4.7
# framing's), the token ids what the structural tag at the request's own strict level (the
# parsers' default is function, so "auto" is constrained too) let through, one seeded
# choice per step (toolcall_conformance.constrained). The seed is the slug.

template(
    "constrained-auto-typed-values",
    "Setting it.",
    [("set_config", {"name": "cache", "limits": [1, 2], "enabled": False, "ratio": 0.5})],
    tools=[CONFIG],
    grammar="accept",
)
CASES[-1]["constrained"] = True
case(
    "glm47",
    "constrained-required-two-calls",
    glm47_call("get_weather", {"city": "Zürich", "days": 2}) + glm47_call("get_time", {}),
    tools=[WEATHER, TIME],
    tool_choice="required",
    content=None,
    calls=[("get_weather", {"city": "Zürich", "days": 2}), ("get_time", {})],
    grammar="accept",
)
CASES[-1]["constrained"] = True


# -- writing --------------------------------------------------------------------------------


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    parser, slug = entry["parser"], entry["slug"]
    if entry.get("constrained"):
        data = build_case_under_grammar(
            Registry.load().get(parser),
            tokenizer=TOKENIZER,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            case_id=f"{parser}/{TOKENIZER}/{slug}",
            seed=slug,
        )
        return ROOT / parser / TOKENIZER / f"{slug}.json", data
    data = build_case(
        tokenizer=TOKENIZER,
        parser=parser,
        text=entry["text"],
        request=entry["request"],
        provenance=entry["provenance"],
        expected=entry["expected"],
        finish_reason=entry["finish_reason"],
        case_id=f"{parser}/{TOKENIZER}/{slug}",
    )
    return ROOT / parser / TOKENIZER / f"{slug}.json", data


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="GLM")


if __name__ == "__main__":
    raise SystemExit(main())
