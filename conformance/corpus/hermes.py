"""Write the Hermes conformance corpus (parser ``hermes``; ``qwen3_json`` passes it too).

    python conformance/corpus/hermes.py            # (re)write every case file
    python conformance/corpus/hermes.py --check    # fail if a file differs from what it would write

Cases land in ``toolcall_conformance/cases/hermes/<tokenizer>/``:

* ``qwen2.5``: ``<tool_call>`` and ``</tool_call>`` are single added tokens (151657 and
  151658), as Qwen2.5, QwQ and Qwen3 emit them (Qwen3 shares the vocabulary and the ids);
* ``llama3.1``: the markers are plain text split over several tokens, as Hermes 3 (on the
  Llama-3.1 vocabulary) writes them when they are not added tokens. Hermes-3's own added
  token ids are not available offline (no offline source has them), so these cases use the
  stock Llama-3.1 tokenizer and its stop ids, and say so.

Provenance:

* ``template``: the assistant turn as the model's chat template renders it, cut after the
  generation prompt ``<|im_start|>assistant\\n`` and before ``<|im_end|>`` (what the model
  writes when it reproduces its training format). The rules, from the published chat templates
  and the templates themselves, are written out in :func:`qwen25_turn`, :func:`hermes3_turn`
  and :func:`vllm_hermes_turn`; ``tool_call.arguments | tojson`` is transformers' filter
  (``json.dumps(..., ensure_ascii=False)`` with the default separators).
* ``wild``: raw outputs quoted in public issues, cited in ``source``.
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6 and
plugins/hermes/README.md) and the format, never from a parser's output. ``expected.grammar``
says what the structural tag must do with the case's tokens under the request's plan with the
strict level raised to ``parameter`` (every schema pinned); truncated outputs have none. A
``reject`` says where the grammar must refuse (``expected.grammar_refusal``), derived from
the format and the schema as xgrammar compiles it (strictly: no property beyond those
declared). The ``constrained-*`` cases are generated under the grammar (see below).
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
PARSER = "hermes"
QWEN = "qwen2.5"
LLAMA = "llama3.1"

QWEN25_TEMPLATE = (
    "the Qwen2.5-Instruct chat template (tokenizer_config.json of Qwen/Qwen2.5-7B-Instruct; "
    "reference/tokenizers.md §3), assistant turn rendered by its rules: '\\n' + content, then "
    'per call \'\\n<tool_call>\\n{"name": "\' + name + \'", "arguments": \' + '
    "arguments|tojson + '}\\n</tool_call>'; the output is the turn after the generation "
    "prompt '<|im_start|>assistant\\n' (see conformance/corpus/hermes.py)"
)
HERMES3_TEMPLATE = (
    "the Hermes-3 tool-use chat template (llama.cpp's copy: emansom/llama.cpp "
    "models/templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja @ "
    "d91aaa9e29eb38840078ad7f8c249c203cc4d4cd), assistant turn rendered by its rules: per "
    "call '\\n<tool_call>\\n' + '{\"name\": \"' + name + '\", \"arguments\": ' + "
    "arguments|tojson + '}' + '\\n</tool_call>' (content is not rendered); the output is the "
    "turn after '<|im_start|>assistant\\n' (see conformance/corpus/hermes.py)"
)
VLLM_HERMES_TEMPLATE = (
    "vLLM's examples/tool_chat_template_hermes.jinja @ "
    "66aa580a8fe3c6d73fdecc9abb387f5dcf33a321 (the template vLLM ships for Hermes 2 Pro), "
    "assistant turn rendered by its rules: per call '\\n<tool_call>\\n' + '{ \"arguments\": ' + "
    "arguments|tojson + ', \"name\": \"' + name + '\"}' + '\\n</tool_call> '; the output is "
    "the turn after '<|im_start|>assistant\\n' (see conformance/corpus/hermes.py)"
)
CONSTRUCTED = "written by hand for the Hermes parsing policy (plugins/hermes/README.md)"
LLAMA_NOTE = (
    "Llama-3.1 tokenizer: the markers are plain text over several tokens; Hermes-3's own "
    "added-token ids and its <|im_end|> id are not available offline, so the stop ids are "
    "Llama-3.1's"
)
QWEN25_MODEL = "Qwen/Qwen2.5-7B-Instruct"
HERMES3_MODEL = "NousResearch/Hermes-3-Llama-3.1-8B"


# -- tools --------------------------------------------------------------------------------


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


WEATHER = tool(
    "get_current_weather",
    "Get the current weather in a given location",
    {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and state, e.g. Boston, MA"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
)
TIME = tool(
    "get_time",
    "The current time in a time zone",
    {"type": "object", "properties": {"timezone": {"type": "string"}}},
)
SEARCH = tool(
    "search",
    "Search the web",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "top_k": {"type": "integer"},
            "exact": {"type": "boolean"},
            "filter": {"type": ["string", "null"]},
        },
        "required": ["query"],
    },
)
WRITE = tool(
    "write_file",
    "Write a text file",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
)
EVENT = tool(
    "create_event",
    "Create a calendar event",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "attendees": {"type": "array", "items": {"type": "string"}},
            "when": {
                "type": "object",
                "properties": {"date": {"type": "string"}, "hour": {"type": "integer"}},
                "required": ["date", "hour"],
            },
            "reminder": {"type": "boolean"},
        },
        "required": ["title", "when"],
    },
)
ALL = [WEATHER, TIME, SEARCH, WRITE, EVENT]


# -- rendering ----------------------------------------------------------------------------


def tojson(value: object) -> str:
    """transformers' ``tojson`` filter as chat templates use it."""
    return json.dumps(value, ensure_ascii=False)


def qwen25_turn(content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    turn = ("\n" + content if content else "") + "".join(
        '\n<tool_call>\n{"name": "' + name + '", "arguments": ' + tojson(arguments) + "}"
        "\n</tool_call>"
        for name, arguments in calls
    )
    return turn.removeprefix("\n")


def hermes3_turn(calls: list[tuple[str, dict[str, Any]]]) -> str:
    turn = "".join(
        "\n<tool_call>\n"
        + '{"name": "'
        + name
        + '", "arguments": '
        + tojson(arguments)
        + "}"
        + "\n</tool_call>"
        for name, arguments in calls
    )
    return turn.removeprefix("\n")


def vllm_hermes_turn(calls: list[tuple[str, dict[str, Any]]]) -> str:
    turn = "".join(
        "\n<tool_call>\n"
        + '{ "arguments": '
        + tojson(arguments)
        + ', "name": "'
        + name
        + '"}'
        + "\n</tool_call> "
        for name, arguments in calls
    )
    return turn.removeprefix("\n")


# -- cases ----------------------------------------------------------------------------------

CASES: list[dict[str, Any]] = []


def case(
    slug: str,
    text: str,
    *,
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    tokenizer: str = QWEN,
    tools: list[dict[str, Any]] | None = None,
    kind: str = "constructed",
    source: str = CONSTRUCTED,
    notes: str = "",
    model: str | None = None,
    recoveries: tuple[str, ...] = (),
    grammar: str | None = None,
    refusal: tuple[Place, str] | None = None,
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
    strict_level: str | None = None,
) -> None:
    request: dict[str, Any] = {"tools": tools if tools is not None else ALL}
    request["tool_choice"] = tool_choice
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    if strict_level is not None:
        request["strict_level"] = strict_level
    provenance: dict[str, Any] = {"kind": kind, "source": source}
    provenance["model"] = model or (QWEN25_MODEL if tokenizer == QWEN else HERMES3_MODEL)
    if tokenizer == LLAMA:
        notes = f"{notes}; {LLAMA_NOTE}" if notes else LLAMA_NOTE
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
            "slug": slug,
            "tokenizer": tokenizer,
            "text": text,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
        }
    )


def qwen_template(
    slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any
) -> None:
    """A template case: the expected parse is the message the turn was rendered from."""
    case(
        slug,
        qwen25_turn(content, calls),
        content=content or None,
        calls=list(calls),
        kind="template",
        source=QWEN25_TEMPLATE,
        **kw,
    )


def call(name: str, arguments: Mapping[str, Any], *, newline: bool = True) -> str:
    """A call in the newline framing (the templates') or the compact one."""
    body = '{"name": "' + name + '", "arguments": ' + tojson(dict(arguments)) + "}"
    return f"<tool_call>\n{body}\n</tool_call>" if newline else f"<tool_call>{body}</tool_call>"


BOSTON = {"location": "Boston, MA", "unit": "fahrenheit"}

# ---- Qwen2.5: the chat template's own rendering ------------------------------------------

qwen_template(
    "template-single-call",
    "",
    [("get_current_weather", BOSTON)],
    grammar="accept",
)
qwen_template(
    "template-content-and-call",
    "I'll check the current weather in Paris for you.",
    [("get_current_weather", {"location": "Paris, France", "unit": "celsius"})],
    grammar="accept",
)
qwen_template(
    "template-parallel-calls",
    "",
    [("get_current_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
)
qwen_template(
    "template-no-arguments",
    "",
    [("get_time", {})],
    grammar="accept",
)
qwen_template(
    "template-unicode-arguments",
    "",
    [("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})],
    grammar="accept",
    notes="tojson(ensure_ascii=False) writes the characters themselves, not \\u escapes",
)
qwen_template(
    "template-markers-inside-string",
    "",
    [
        (
            "write_file",
            {
                "path": "notes/hermes.md",
                "content": "Wrap each call in <tool_call> and </tool_call>.\nOne call per tag.",
            },
        )
    ],
    grammar="accept",
    notes=(
        "the argument string holds both markers, tokenized as the added tokens; inside a JSON "
        "string they are string text (vllm-project/vllm#45167)"
    ),
)
qwen_template(
    "template-escapes",
    "",
    [
        (
            "write_file",
            {"path": 'C:\\temp\\a "quoted" name.txt', "content": "tab\there\nnew line \\ done"},
        )
    ],
    grammar="accept",
)
qwen_template(
    "template-nested-arguments",
    "Scheduling it.",
    [
        (
            "create_event",
            {
                "title": "Design review",
                "attendees": ["ana@example.com", "li@example.com"],
                "when": {"date": "2025-03-14", "hour": 15},
                "reminder": True,
            },
        )
    ],
    grammar="accept",
)
qwen_template(
    "template-required-choice",
    "",
    [("get_current_weather", {"location": "Berlin"})],
    tool_choice="required",
    grammar="accept",
)
qwen_template(
    "template-named-choice",
    "",
    [("get_time", {"timezone": "UTC"})],
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    grammar="accept",
)
qwen_template(
    "template-single-call-not-parallel",
    "",
    [("search", {"query": "vllm tool parser plugins", "top_k": 3})],
    parallel_tool_calls=False,
    grammar="accept",
)
qwen_template(
    "template-required-parallel-calls",
    "",
    [
        ("search", {"query": "hermes function calling"}),
        ("search", {"query": "qwen2.5 tool use", "exact": False, "filter": None}),
    ],
    tool_choice="required",
    grammar="accept",
)

# ---- Hermes 3 and Hermes 2 Pro templates: plain-text markers (Llama-3 vocabulary) ---------

case(
    "hermes3-template-single-call",
    hermes3_turn([("get_current_weather", BOSTON)]),
    tokenizer=LLAMA,
    content=None,
    calls=[("get_current_weather", BOSTON)],
    kind="template",
    source=HERMES3_TEMPLATE,
    grammar="accept",
)
case(
    "hermes3-template-parallel-calls",
    hermes3_turn([("search", {"query": "Hermes 3 release notes"}), ("get_time", {})]),
    tokenizer=LLAMA,
    content=None,
    calls=[("search", {"query": "Hermes 3 release notes"}), ("get_time", {})],
    kind="template",
    source=HERMES3_TEMPLATE,
    grammar="accept",
)
case(
    "vllm-hermes-template-arguments-first",
    vllm_hermes_turn(
        [("get_time", {"timezone": "Europe/Paris"}), ("get_current_weather", {"location": "Paris"})]
    ),
    tokenizer=LLAMA,
    content=None,
    calls=[
        ("get_time", {"timezone": "Europe/Paris"}),
        ("get_current_weather", {"location": "Paris"}),
    ],
    kind="template",
    source=VLLM_HERMES_TEMPLATE,
    model="NousResearch/Hermes-2-Pro-Llama-3-8B",
    notes="arguments before name, '{ ' and a space after each </tool_call>",
    grammar="accept",
)
case(
    "hermes3-content-and-call",
    "Let me look that up.\n" + call("search", {"query": "tallest building in Europe"}),
    tokenizer=LLAMA,
    content="Let me look that up.",
    calls=[("search", {"query": "tallest building in Europe"})],
    grammar="accept",
)
case(
    "hermes3-truncated-in-string",
    '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "Line one\\nLi',
    tokenizer=LLAMA,
    content=None,
    calls=[("write_file", '{"path": "a.txt", "content": "Line one\\nLi')],
    finish_reason="length",
    notes="cut off by max_tokens: the arguments are the model's text so far, not closed",
)
case(
    "hermes3-truncated-in-start-marker",
    "Let me search for that.<tool_ca",
    tokenizer=LLAMA,
    content="Let me search for that.<tool_ca",
    calls=[],
    finish_reason="length",
    notes="a start marker cut off by max_tokens is not a marker: content, verbatim",
)

# ---- constructed: framing -----------------------------------------------------------------

case(
    "compact-framing",
    call("get_time", {"timezone": "UTC"}, newline=False),
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
case(
    "whitespace-between-calls",
    call("get_current_weather", {"location": "Lima"})
    + "\n\n  \n"
    + call("get_time", {"timezone": "America/Lima"}, newline=False)
    + "\n",
    content=None,
    calls=[
        ("get_current_weather", {"location": "Lima"}),
        ("get_time", {"timezone": "America/Lima"}),
    ],
    grammar="accept",
)
case(
    "content-around-calls",
    "Checking both cities.\n"
    + call("get_current_weather", {"location": "Oslo"})
    + "\n"
    + call("get_current_weather", {"location": "Bergen"})
    + "\nI'll compare them once the results are in.",
    content="Checking both cities.\nI'll compare them once the results are in.",
    calls=[
        ("get_current_weather", {"location": "Oslo"}),
        ("get_current_weather", {"location": "Bergen"}),
    ],
    grammar="accept",
    notes="whitespace that only separates content from a call is framing (ContentGate)",
)
case(
    "compact-json-spacing",
    '<tool_call>{"name":"search","arguments":{"query":"a b","top_k":2}}</tool_call>',
    content=None,
    calls=[("search", {"query": "a b", "top_k": 2})],
    grammar="accept",
    notes="the arguments are the model's own text, compact as written, not re-serialised",
)
case(
    "plain-answer",
    "The capital of France is Paris.",
    content="The capital of France is Paris.",
    calls=[],
    grammar="accept",
)
case(
    "look-alike-tags",
    "Use <tool_calls> for batches, or a <tool element; neither is a call.",
    content="Use <tool_calls> for batches, or a <tool element; neither is a call.",
    calls=[],
    grammar="accept",
)
case(
    "end-marker-inside-string-compact",
    '<tool_call>{"name": "write_file", "arguments": {"path": "t.txt", "content": '
    '"</tool_call> ends a call"}}</tool_call>',
    content=None,
    calls=[("write_file", {"path": "t.txt", "content": "</tool_call> ends a call"})],
    grammar="accept",
)

# ---- constructed: defects -----------------------------------------------------------------

case(
    "malformed-call-then-good-call",
    call("get_time", {"timezone": "UTC"}).replace('"UTC"}', '"UTC",}')
    + "\n"
    + call("get_current_weather", {"location": "Oslo"}),
    content=None,
    calls=[("get_time", '{"timezone": "UTC",}'), ("get_current_weather", {"location": "Oslo"})],
    grammar="reject",
    refusal=(
        at('"UTC",', 5),
        "a comma after the last declared property: only '}' can follow (xgrammar compiles "
        "schemas strictly: no property beyond those declared)",
    ),
    notes="a trailing comma: the call is committed by its name; its text is kept as written",
)
case(
    "truncated-in-arguments",
    '<tool_call>\n{"name": "search", "arguments": {"query": "streaming tool pars',
    content=None,
    calls=[("search", '{"query": "streaming tool pars')],
    finish_reason="length",
)
case(
    "truncated-before-name",
    'Let me search.\n<tool_call>\n{"name": "sea',
    content='Let me search.\n<tool_call>\n{"name": "sea',
    calls=[],
    finish_reason="length",
    notes="no complete name: the call is not committed, its text is content verbatim",
)
case(
    "truncated-in-end-marker",
    call("get_time", {}).removesuffix("tool_call>"),
    content=None,
    calls=[("get_time", {})],
    recoveries=("missing-end",),
    finish_reason="length",
    notes="the body is complete; the cut-off end marker is the call's framing",
)
case(
    "unknown-tool-name",
    call("get_stock_price", {"ticker": "NVDA"}),
    content=None,
    calls=[("get_stock_price", {"ticker": "NVDA"})],
    grammar="reject",
    refusal=(at("get_stock_price", 4), "no declared tool's name goes on 'get_s'"),
    notes="names are kept as the model wrote them; the grammar allows declared names only",
)
case(
    "unreadable-call",
    "Here it is: <tool_call>get_time()</tool_call> ok",
    content="Here it is: <tool_call>get_time()</tool_call> ok",
    calls=[],
    grammar="reject",
    refusal=(at("get_time()"), "after <tool_call> only whitespace and '{' may come"),
)
case(
    "empty-name",
    '<tool_call>{"name": "", "arguments": {}}</tool_call>',
    content='<tool_call>{"name": "", "arguments": {}}</tool_call>',
    calls=[],
    grammar="reject",
    refusal=(at('""', 1), "the name string closes before any declared name"),
    notes="an empty name is no readable name",
)
case(
    "name-lone-surrogate-escape",
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n'
    '<tool_call>\n{"name": "\\ud800", "arguments": {}}\n</tool_call>',
    content='<tool_call>\n{"name": "\\ud800", "arguments": {}}\n</tool_call>',
    calls=[("get_time", {})],
    notes="a name UTF-8 cannot write (a lone surrogate escape) is no readable name: that tag "
    "is no call and is content, verbatim (DESIGN §6); the call before it stands",
    grammar="reject",
    refusal=(at('"\\ud800"', 1), "no declared tool's name starts with a backslash"),
)
case(
    "name-surrogate-pair-escape",
    '<tool_call>\n{"name": "get_time\\ud83d\\udd50", "arguments": {}}\n</tool_call>',
    content=None,
    calls=[("get_time\N{CLOCK FACE ONE OCLOCK}", {})],
    notes="a surrogate pair escape is one character of the name, kept as the model wrote it",
    grammar="reject",
    refusal=(at("\\ud83d"), "the declared name get_time ends here: its closing quote must come"),
)
case(
    "missing-final-brace",
    '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Paris"}\n</tool_call>',
    content=None,
    calls=[("get_current_weather", {"location": "Paris"})],
    grammar="reject",
    refusal=(at("\n</tool_call>", 1), "the call object is not closed: '}' must come here"),
    notes=(
        "the call object lacks its last '}' (as in vllm-project/vllm#22885); the arguments "
        "are complete, so the call is clean"
    ),
)
case(
    "extra-closing-brace",
    '<tool_call>\n{"name": "get_time", "arguments": {}}}\n</tool_call>',
    content="}",
    calls=[("get_time", {})],
    grammar="reject",
    refusal=(at("}}}", 2), "a third '}': only whitespace and </tool_call> may follow the object"),
    notes="text after the call object inside the tag is content (nothing lost)",
)
case(
    "two-objects-in-one-tag",
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n'
    '{"name": "get_current_weather", "arguments": {"location": "Paris"}}\n</tool_call>',
    content='{"name": "get_current_weather", "arguments": {"location": "Paris"}}',
    calls=[("get_time", {})],
    grammar="reject",
    refusal=(
        at('\n{"name": "get_current_weather"', 1),
        "a second object: only whitespace and </tool_call> may follow the first",
    ),
    notes="one call per tag: a second object in the tag is content, not a call",
)
case(
    "code-fence",
    '```json\n{"name": "get_time", "arguments": {}}\n```',
    content='```json\n{"name": "get_time", "arguments": {}}\n```',
    calls=[],
    grammar="accept",
)
case(
    "json-content-not-a-call",
    '{"answer": 42, "unit": "km"}',
    content='{"answer": 42, "unit": "km"}',
    calls=[],
    grammar="accept",
)
case(
    "bare-json-undeclared-name",
    '{"name": "lookup", "arguments": {"q": "x"}}',
    content='{"name": "lookup", "arguments": {"q": "x"}}',
    calls=[],
    grammar="accept",
    notes="bare-json only reads a call to a declared tool",
)
case(
    "required-with-text-before",
    "Sure.\n" + call("get_time", {}),
    tool_choice="required",
    content="Sure.",
    calls=[("get_time", {})],
    grammar="reject",
    refusal=(at("Sure."), 'tool_choice "required": the output starts with a call'),
    notes="the parser keeps the text; the required grammar allows calls only",
)
case(
    "named-choice-other-tool",
    call("get_current_weather", {"location": "Oslo"}),
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    content=None,
    calls=[("get_current_weather", {"location": "Oslo"})],
    grammar="reject",
    refusal=(at("get_current_weather", 4), "the named tool is get_time: 'get_c' cannot be it"),
)
case(
    "pinned-schema-wrong-type",
    call("search", {"query": "x", "top_k": "three"}),
    content=None,
    calls=[("search", {"query": "x", "top_k": "three"})],
    grammar="reject",
    refusal=(at('"three"'), "top_k is an integer: a string cannot start here"),
    notes="top_k is declared integer; the parser does not validate arguments",
)

# ---- constructed: the named recoveries ----------------------------------------------------

case(
    "python-literal",
    "<tool_call>\n{'name': 'get_current_weather', 'arguments': {'location': 'Boston, MA', "
    "'unit': 'fahrenheit'}}\n</tool_call>",
    content=None,
    calls=[("get_current_weather", BOSTON)],
    recoveries=("python-literal",),
    grammar="reject",
    refusal=(at("{'", 1), "JSON keys are in double quotes"),
)
case(
    "python-literal-constants",
    "<tool_call>{'name': 'search', 'arguments': {'query': \"it's\", 'top_k': 2, "
    "'exact': True, 'filter': None}}</tool_call>",
    content=None,
    calls=[("search", {"query": "it's", "top_k": 2, "exact": True, "filter": None})],
    recoveries=("python-literal",),
    grammar="reject",
    refusal=(at("{'", 1), "JSON keys are in double quotes"),
)
case(
    "parameters-key",
    '<tool_call>\n{"name": "get_time", "parameters": {"timezone": "UTC"}}\n</tool_call>',
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("parameters-key",),
    grammar="reject",
    refusal=(at('"parameters"', 1), 'after the name, the key must be "arguments"'),
)
case(
    "arguments-string",
    '<tool_call>\n{"name": "get_time", "arguments": "{\\"timezone\\": \\"UTC\\"}"}\n</tool_call>',
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("arguments-string",),
    grammar="reject",
    refusal=(at('"arguments": ', 13), "the arguments must be an object, not a string"),
)
case(
    "missing-end",
    "I'll check.\n" + call("get_time", {"timezone": "UTC"}).removesuffix("\n</tool_call>"),
    content="I'll check.",
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
    grammar="reject",
    refusal=(at_end, "the output ends without </tool_call>"),
)
case(
    "missing-end-before-next-call",
    call("get_time", {}).removesuffix("\n</tool_call>")
    + "\n"
    + call("get_current_weather", {"location": "Rome"}),
    content=None,
    calls=[("get_time", {}), ("get_current_weather", {"location": "Rome"})],
    recoveries=("missing-end",),
    grammar="reject",
    refusal=(at("<tool_call>", 1, nth=2), "the first call needs </tool_call> before another"),
)
case(
    "bare-json",
    '{"name": "get_current_weather", "arguments": {"location": "Paris"}}',
    content=None,
    calls=[("get_current_weather", {"location": "Paris"})],
    recoveries=("bare-json",),
    grammar="accept",
    notes="under auto the grammar allows free text, and a bare object is free text",
)

# ---- wild ---------------------------------------------------------------------------------

WILD_403 = (
    "vllm-project/vllm-ascend#403 (comment by e1ijah1, 2025-03-27): the model_output of "
    "Qwen2.5-VL-{size}-Instruct for the same request, quoted in the thread"
)
WILD_NOTE = (
    "the thread quotes the output only; the get_current_weather declaration here is "
    "reconstructed to match it. Qwen2.5-VL shares the Qwen2.5 vocabulary and marker ids"
)
case(
    "wild-qwen2.5-vl-3b-clean",
    '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Boston, MA"}}\n'
    "</tool_call>",
    tools=[WEATHER],
    content=None,
    calls=[("get_current_weather", {"location": "Boston, MA"})],
    kind="wild",
    source=WILD_403.format(size="3B"),
    model="Qwen/Qwen2.5-VL-3B-Instruct",
    notes=WILD_NOTE,
    grammar="accept",
)
case(
    "wild-qwen2.5-vl-32b-spaced-arguments-key",
    '<tool_call>\n{"name": "get_current_weather", " arguments": {"location": "Boston, MA"}}\n'
    "</tool_call>",
    tools=[WEATHER],
    content=None,
    calls=[("get_current_weather", {"location": "Boston, MA"})],
    recoveries=("parameters-key",),
    kind="wild",
    source=WILD_403.format(size="32B"),
    model="Qwen/Qwen2.5-VL-32B-Instruct",
    notes=(
        f"{WILD_NOTE}. The key ' arguments' (leading space) is read as 'arguments' by the "
        "parameters-key recovery (a variant key for the arguments)"
    ),
    grammar="reject",
    refusal=(at('" arguments"', 1), 'the key must be "arguments", without a space'),
)

# Qwen / Hermes outputs quoted in other threads. Where the thread gives no schema, the tool
# declared is reconstructed from the output (the notes say so). Qwen3 and Qwen3-Coder share
# the Qwen2.5 vocabulary and marker ids, so these are Qwen2.5-tokenized.

RECONSTRUCTED = "the thread gives no schema: the tool declared here is reconstructed to match it"
SQUARE = tool(
    "square_the_number",
    "output the square of the number.",
    {
        "type": "object",
        "required": ["input_num"],
        "properties": {
            "input_num": {
                "type": "number",
                "description": "input_num is a number that will be squared",
            }
        },
    },
)
case(
    "wild-qwen3-coder-hermes-json",
    '<tool_call>\n{"name": "square_the_number", "arguments": {"input_num": 1024}}\n</tool_call>',
    tools=[SQUARE],
    content=None,
    calls=[("square_the_number", {"input_num": 1024})],
    kind="wild",
    source="gpustack/gpustack#2660 (jeremytregunna, 2025-08-01)",
    model="Qwen3-Coder 30B-A3B (vLLM v0.10.0, GPUStack)",
    notes=(
        'message.content quoted as a JSON string in the issue, un-escaped here (\\n, \\"); the '
        "tool is the issue's own declaration. Qwen3-Coder wrote the Hermes JSON shape, which "
        "this family reads as a clean call (under qwen3_coder it is content: see that corpus)"
    ),
    grammar="accept",
)
API_FUNCTIONS = tool(
    "getApiFunctions",
    "List the API functions that can be selected",
    {"type": "object", "properties": {}},
)
SELECT_FUNCTIONS = tool(
    "selectFunctions",
    "Select API functions to make available",
    {
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "required": ["names"],
    },
)
case(
    "wild-undeclared-tool-call",
    '<tool_call>\n{"name": "create", "arguments": {"title": "test1", "content": '
    '"hello world!"}}\n</tool_call>',
    tools=[API_FUNCTIONS, SELECT_FUNCTIONS],
    content=None,
    calls=[("create", {"title": "test1", "content": "hello world!"})],
    kind="wild",
    source="ollama/ollama#11381 (rick-github, 2025-07-11)",
    model="qwen3:14b (Ollama)",
    notes=(
        "the request declared only getApiFunctions and selectFunctions (create was described "
        f"through a tool result); {RECONSTRUCTED} (their parameters). A name no declared tool "
        "has is kept as written (DESIGN §6), where Ollama drops the call"
    ),
    grammar="reject",
    refusal=(at("create"), "no declared tool's name starts with 'c'"),
)
RAG = tool(
    "LLM_Tool_RAG",
    "Search the document store",
    {
        "type": "object",
        "properties": {"term": {"type": "string"}, "vector": {"type": "string"}},
        "required": ["term", "vector"],
    },
)
case(
    "wild-qwen3-bare-json",
    '{"name": "LLM_Tool_RAG", "arguments": {"term": "accidents, tribunal de Versailles", '
    '"vector": "accidents tribunal Versailles jugements"}}',
    tools=[RAG],
    content=None,
    calls=[
        (
            "LLM_Tool_RAG",
            {
                "term": "accidents, tribunal de Versailles",
                "vector": "accidents tribunal Versailles jugements",
            },
        )
    ],
    recoveries=("bare-json",),
    kind="wild",
    source="ollama/ollama#11185 (JpEncausse, 2025-06-24)",
    model="qwen3:32b (Ollama 0.9.2)",
    notes=(
        "message.content quoted as a JSON string, un-escaped here; the thread does not show "
        f"whether the model or Ollama left out the tags; {RECONSTRUCTED}. The whole output is "
        "one call object naming a declared tool: bare-json"
    ),
    grammar="accept",
)
CALCULATOR = tool(
    "calculator",
    "Evaluate an arithmetic expression",
    {"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]},
)
case(
    "wild-qwen2.5-coder-bare-json",
    '{"name": "calculator", "arguments": {"expr": "17 * 23"}}',
    tools=[CALCULATOR],
    content=None,
    calls=[("calculator", {"expr": "17 * 23"})],
    recoveries=("bare-json",),
    kind="wild",
    source="ollama/ollama#12174 (ninthhousestudios, 2026-04-15)",
    model="qwen2.5-coder:14b (Ollama 0.20.7)",
    notes=f"the template asks for <tool_call> tags; the model wrote bare JSON; {RECONSTRUCTED}",
    grammar="accept",
)
BASH = tool(
    "Bash",
    "Run a shell command",
    {
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
        "required": ["command"],
    },
)
case(
    "wild-qwen2.5-coder-bare-json-pretty",
    '{\n  "name": "Bash",\n  "arguments": {\n    "command": "ls /tmp",\n'
    '    "description": "List files in /tmp directory"\n  }\n}',
    tools=[BASH],
    content=None,
    calls=[
        (
            "Bash",
            '{\n    "command": "ls /tmp",\n    "description": "List files in /tmp directory"\n  }',
        )
    ],
    recoveries=("bare-json",),
    kind="wild",
    source="nicedreamzapp/claude-code-local#43 (KaoCSC, 2026-08-04)",
    model="mlx-community/Qwen2.5-Coder-14B-Instruct-4bit",
    notes=(
        f"Claude Code's Bash tool; {RECONSTRUCTED}. Bare pretty-printed JSON: bare-json; the "
        "arguments are the model's own text of the value, its line breaks and indents kept"
    ),
    grammar="accept",
)
SEARXNG = tool(
    "searxng_search",
    "Search the web with SearXNG",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "language": {"type": "string"},
            "max_results": {"type": "integer"},
        },
        "required": ["query"],
    },
)
WILD_1CAT = "1CatAI/1Cat-vLLM#26 (corywalker66998-hub, 2026)"
WILD_1CAT_MODEL = "Qwen3.6-27B-AWQ (1Cat-vLLM 0.0.3, client Hermes Agent)"
WILD_1CAT_NOTE = (
    f"one of four pseudo tool-call formats the issue quotes as content; {RECONSTRUCTED}; "
    "Qwen2.5-tokenized (the script's tokenizer; Qwen3.6's own is not used)"
)
JSON_LIST = '[{"name":"searxng_search","arguments":{"query":"2026年5月6日 今日新闻"}}]'
case(
    "wild-json-list-no-tags",
    JSON_LIST,
    tools=[SEARXNG],
    content=JSON_LIST,
    calls=[],
    kind="wild",
    source=WILD_1CAT,
    model=WILD_1CAT_MODEL,
    notes=(
        f"{WILD_1CAT_NOTE}. A JSON list is not a call object: bare-json reads one object, so "
        "the text is content, verbatim"
    ),
    grammar="accept",
)
case(
    "wild-tool-code-stub",
    "<tool_code>\n/tool_code>",
    tools=[SEARXNG],
    content="<tool_code>\n/tool_code>",
    calls=[],
    kind="wild",
    source=WILD_1CAT,
    model=WILD_1CAT_MODEL,
    notes=(
        f"{WILD_1CAT_NOTE}. '<tool_c' could still grow into <tool_call> and is held until "
        "'o'; <tool_code> is no marker: content, verbatim"
    ),
    grammar="accept",
)
TOOL_INPUT = (
    '{\n  "tool_name": "searxng_search",\n  "tool_input": {\n'
    '    "query": "2026年5月6日 今日新闻",\n'
    '    "language": "zh",\n    "max_results": 8\n  }\n}'
)
case(
    "wild-tool-name-tool-input-json",
    TOOL_INPUT,
    tools=[SEARXNG],
    content=TOOL_INPUT,
    calls=[],
    kind="wild",
    source=WILD_1CAT,
    model=WILD_1CAT_MODEL,
    notes=(
        f"{WILD_1CAT_NOTE}. The first key is tool_name, not name, arguments or parameters: "
        "no bare-json candidate, so the text is content, verbatim"
    ),
    grammar="accept",
)


# ---- generated under the grammar (request.constrained) -----------------------------------
#
# The text is the chat template's rendering; the token ids are what the structural tag at
# the request's own strict level let through, one seeded choice per step
# (toolcall_conformance.constrained), so markers and multi-byte characters may come in
# unusual pieces. The seed is the slug.


def constrained(
    slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any
) -> None:
    qwen_template(slug, content, calls, grammar="accept", **kw)
    CASES[-1]["constrained"] = True


constrained(
    "constrained-required-call",
    "",
    [("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})],
    tool_choice="required",
)
constrained(
    "constrained-function-level-content-and-calls",
    "Looking both up.",
    [("search", {"query": "tool calling", "top_k": 2}), ("get_time", {"timezone": "UTC"})],
    strict_level="function",
)
constrained(
    "constrained-single-call-markers-in-string",
    "",
    [("write_file", {"path": "a.md", "content": "# Calls\n\n<tool_call> opens one."})],
    parallel_tool_calls=False,
)


# -- writing --------------------------------------------------------------------------------


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    tokenizer, slug = entry["tokenizer"], entry["slug"]
    if entry.get("constrained"):
        data = build_case_under_grammar(
            Registry.load().get(PARSER),
            tokenizer=tokenizer,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            case_id=f"{PARSER}/{tokenizer}/{slug}",
            seed=slug,
        )
        return ROOT / PARSER / tokenizer / f"{slug}.json", data
    data = build_case(
        tokenizer=tokenizer,
        parser=PARSER,
        text=entry["text"],
        request=entry["request"],
        provenance=entry["provenance"],
        expected=entry["expected"],
        finish_reason=entry["finish_reason"],
        case_id=f"{PARSER}/{tokenizer}/{slug}",
    )
    return ROOT / PARSER / tokenizer / f"{slug}.json", data


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="Hermes")


if __name__ == "__main__":
    raise SystemExit(main())
