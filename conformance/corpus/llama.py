"""Write the Llama conformance corpus: ``llama3_json``, ``llama4_json``, ``llama4_pythonic``.

    python conformance/corpus/llama.py            # (re)write every case file
    python conformance/corpus/llama.py --check    # fail if a file differs from what it would write

Cases land in ``toolcall_conformance/cases/<parser>/<tokenizer>/``:

* ``llama3_json/llama3.1``: Llama 3.1 / 3.2 / 3.3 outputs on the Llama 3.1 vocabulary
  (Llama 3.2 and 3.3 share it), ``<|python_tag|>`` a single special token (128010);
* ``llama4_json/llama4`` and ``llama4_pythonic/llama4``: Llama 4 outputs on the Llama 4
  vocabulary, ``<|python_start|>`` and ``<|python_end|>`` single special tokens
  (200016, 200017).

The stop tokens (``<|eom_id|>``, ``<|eot_id|>``, ``<|eot|>``, ``<|eom|>``) end generation;
vLLM does not pass them to the parser, so no case text holds one (the builder refuses a
text that does).

Provenance:

* ``template``: the assistant turn as the chat template vLLM ships for the model renders
  it (the rules are written out in :func:`llama3_json_turn`, :func:`llama4_json_turn` and
  :func:`llama4_pythonic_turn`); ``tojson`` is transformers' filter
  (``json.dumps(..., ensure_ascii=False)`` with the default separators);
* ``wild``: raw outputs quoted in public issues and in Meta's own format documents,
  cited in ``source``; where a thread quotes the output but not the request, the tool
  declaration is reconstructed to match it (``notes`` says so);
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6 and
plugins/llama/README.md) and the format, never from a parser's output. ``expected.grammar``
says what the structural tag must do with the case's tokens under the request's plan with
the strict level raised to ``parameter`` (every schema pinned); cut-off outputs and
``tool_choice: "none"`` have none. A ``reject`` says where the grammar must refuse
(``expected.grammar_refusal``): the first character that no output the structural tag
allows can have there, derived from the format and the schema (``toolcall_llama.grammar``,
the tools' schemas as xgrammar compiles them: no property beyond those declared), never
from a run.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolcall_conformance.builder import (
    Place,
    at,
    at_end,
    build_corpus_case,
    expected_parse,
    request_body,
    strict_tool,
    write_corpus,
)

ROOT = Path(__file__).resolve().parents[1] / "src" / "toolcall_conformance" / "cases"
L3 = "llama3_json"
L4 = "llama4_json"
PY = "llama4_pythonic"
LLAMA31 = "llama3.1"
LLAMA4 = "llama4"

LLAMA31_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA4_MODEL = "meta-llama/Llama-4-Scout-17B-16E-Instruct"

LLAMA31_JSON_TEMPLATE = (
    "vLLM's examples/tool_chat_template_llama3.1_json.jinja @ "
    "545227602f2569dfe61adb608beb7bb69fc55fa8 (Meta's official Llama 3.1 template renders "
    "custom tool calls the same way), assistant turn rendered by its rules: "
    "'{\"name\": \"' + name + '\", ' + '\"parameters\": ' + arguments|tojson + '}' (one "
    "call only; content is not rendered); the output is the turn after the generation prompt "
    "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' (see conformance/corpus/llama.py)"
)
LLAMA4_JSON_TEMPLATE = (
    "vLLM's examples/tool_chat_template_llama4_json.jinja @ "
    "97ce4234ca0d8ba7c8c8d25ce42fb371fb7e735b, assistant turn rendered by its rules: the "
    "content, then per call '{\"name\": \"' + name + '\", ' + '\"parameters\": ' + "
    "arguments|tojson + '}', with nothing between calls or after the content; the output is "
    "the turn after '<|header_start|>assistant<|header_end|>\\n\\n' (see "
    "conformance/corpus/llama.py)"
)
LLAMA4_PYTHONIC_TEMPLATE = (
    "vLLM's examples/tool_chat_template_llama4_pythonic.jinja @ "
    "0471aed1b67455f39accc28977db0b979e091687, assistant turn rendered by its rules: the "
    "content, then '[' + per call name + '(' + per argument key + '=\"' + '%s'|format(value) "
    "+ '\"' joined by ', ' + ')' joined by ', ' + ']'; the output is the turn after "
    "'<|header_start|>assistant<|header_end|>\n\n' (see conformance/corpus/llama.py)"
)
CONSTRUCTED = "written by hand for the Llama parsing policy (plugins/llama/README.md)"
META_LLAMA31_FORMAT = (
    "meta-llama/llama-models llama_models/llama3_1/prompt_format.md (as shipped in the "
    "llama-models 0.3.0 package on PyPI), section 'JSON based tool calling', the model "
    "response quoted there (also quoted in meta-llama/llama-models#169)"
)
RECONSTRUCTED = (
    "the thread quotes the output, not the request: the tool declaration here is "
    "reconstructed to match it"
)


# -- tools --------------------------------------------------------------------------------


STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}


def obj(required: Sequence[str] = (), **properties: Mapping[str, Any]) -> dict[str, Any]:
    """An object schema with these properties."""
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions function tool."""
    function = {"name": name, "description": description, "parameters": dict(parameters)}
    return {"type": "function", "function": function}


WEATHER = tool(
    "get_current_weather",
    "Get the current weather in a given location",
    obj(["location"], location=STRING, unit={"type": "string", "enum": ["celsius", "fahrenheit"]}),
)
TIME = tool("get_time", "The current time in a time zone", obj(timezone=STRING))
SEARCH = tool(
    "search",
    "Search the web",
    obj(
        ["query"],
        query=STRING,
        top_k=INTEGER,
        exact=BOOLEAN,
        filter={"type": ["string", "null"]},
    ),
)
WRITE = tool(
    "write_file", "Write a text file", obj(["path", "content"], path=STRING, content=STRING)
)
EVENT = tool(
    "create_event",
    "Create a calendar event",
    obj(
        ["title", "when"],
        title=STRING,
        attendees={"type": "array", "items": STRING},
        when=obj(["date", "hour"], date=STRING, hour=INTEGER),
        reminder=BOOLEAN,
    ),
)
ALL = [WEATHER, TIME, SEARCH, WRITE, EVENT]


# -- rendering ----------------------------------------------------------------------------


def tojson(value: object) -> str:
    """transformers' ``tojson`` filter as chat templates use it."""
    return json.dumps(value, ensure_ascii=False)


def json_call(name: str, arguments: Mapping[str, Any]) -> str:
    """One call as the Llama JSON templates write it."""
    return '{"name": "' + name + '", "parameters": ' + tojson(dict(arguments)) + "}"


def llama3_json_turn(name: str, arguments: Mapping[str, Any]) -> str:
    return json_call(name, arguments)


def llama4_json_turn(content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    return content + "".join(json_call(name, arguments) for name, arguments in calls)


def llama4_pythonic_turn(content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The turn as vLLM's Llama 4 pythonic template writes it: the content, then
    ``[name(key="value", ...), ...]`` where every value is ``"%s" | format(value)`` (Python's
    ``str``) between double quotes."""
    rendered = (
        name + "(" + ", ".join(f'{key}="{value}"' for key, value in arguments.items()) + ")"
        for name, arguments in calls
    )
    return content + "[" + ", ".join(rendered) + "]"


# -- cases ----------------------------------------------------------------------------------

#: The calls that build each case (and give its file).
CASES: list[Callable[[], tuple[Path, dict[str, Any]]]] = []


def case(
    parser: str,
    slug: str,
    text: str,
    *,
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    tokenizer: str,
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
    constrained: bool = False,
) -> None:
    placed = None if refusal is None else (refusal[0](text), refusal[1])
    provenance: dict[str, Any] = {"kind": kind, "source": source}
    provenance["model"] = model or (LLAMA31_MODEL if tokenizer == LLAMA31 else LLAMA4_MODEL)
    if notes:
        provenance["notes"] = notes
    # Built (tokenized) only when the corpus is written or checked.
    build = functools.partial(
        build_corpus_case,
        ROOT,
        tokenizer=tokenizer,
        parser=parser,
        slug=slug,
        constrained=constrained,
        text=text,
        request=request_body(
            tools if tools is not None else ALL, tool_choice, parallel_tool_calls, strict_level
        ),
        provenance=provenance,
        expected=expected_parse(
            content, calls, recoveries=recoveries, grammar=grammar, refusal=placed
        ),
        finish_reason=finish_reason,
    )
    CASES.append(build)


def l3(slug: str, text: str, **kw: Any) -> None:
    kw.setdefault("tokenizer", LLAMA31)
    case(L3, slug, text, **kw)


def l4(slug: str, text: str, **kw: Any) -> None:
    case(L4, slug, text, tokenizer=LLAMA4, **kw)


def l3_template(slug: str, name: str, arguments: dict[str, Any], **kw: Any) -> None:
    """A template case: the expected parse is the message the turn was rendered from."""
    l3(
        slug,
        llama3_json_turn(name, arguments),
        content=None,
        calls=[(name, arguments)],
        kind="template",
        source=LLAMA31_JSON_TEMPLATE,
        **kw,
    )


def l4_template(
    slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any
) -> None:
    l4(
        slug,
        llama4_json_turn(content, calls),
        content=content or None,
        calls=list(calls),
        kind="template",
        source=LLAMA4_JSON_TEMPLATE,
        **kw,
    )


BOSTON = {"location": "Boston, MA", "unit": "fahrenheit"}
NEXT_WEEK = {
    "title": "Design review",
    "attendees": ["ana@example.com", "li@example.com"],
    "when": {"date": "2025-03-14", "hour": 15},
    "reminder": True,
}

# ---- llama3_json: the template's own rendering --------------------------------------------

l3_template("template-single-call", "get_current_weather", BOSTON, grammar="accept")
l3_template("template-no-arguments", "get_time", {}, grammar="accept")
l3_template(
    "template-unicode-arguments",
    "get_current_weather",
    {"location": "東京都 🗼", "unit": "celsius"},
    grammar="accept",
    notes="tojson(ensure_ascii=False) writes the characters themselves, not \\u escapes",
)
l3_template("template-nested-arguments", "create_event", NEXT_WEEK, grammar="accept")
l3_template(
    "template-escapes",
    "write_file",
    {"path": 'C:\\temp\\a "quoted" name.txt', "content": "tab\there\nnew line; \\ done"},
    grammar="accept",
)
l3_template(
    "template-required-choice",
    "get_current_weather",
    {"location": "Berlin"},
    tool_choice="required",
    grammar="accept",
)
l3_template(
    "template-named-choice",
    "get_time",
    {"timezone": "UTC"},
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    grammar="accept",
)
l3_template(
    "template-single-call-not-parallel",
    "search",
    {"query": "vllm tool parser plugins", "top_k": 3},
    parallel_tool_calls=False,
    grammar="accept",
)

# ---- llama3_json: runs of calls -------------------------------------------------------------

PARIS = {"location": "Paris, France", "unit": "celsius"}
l3(
    "python-tag-call",
    "<|python_tag|>" + json_call("search", {"query": "tallest building in Europe", "top_k": 3}),
    content=None,
    calls=[("search", {"query": "tallest building in Europe", "top_k": 3})],
    grammar="accept",
    notes="<|python_tag|> as Llama 3.1 writes it with 'Environment: ipython' in the system prompt",
)
l3(
    "python-tag-two-calls",
    "<|python_tag|>"
    + json_call("get_current_weather", PARIS)
    + "; "
    + json_call("get_time", {"timezone": "Europe/Paris"}),
    content=None,
    calls=[("get_current_weather", PARIS), ("get_time", {"timezone": "Europe/Paris"})],
    grammar="accept",
    notes="'; ' between calls, as vLLM's llama3_json parser documents the format",
)
l3(
    "calls-on-separate-lines",
    json_call("get_current_weather", {"location": "Lima"})
    + "\n"
    + json_call("get_time", {"timezone": "America/Lima"}),
    content=None,
    calls=[
        ("get_current_weather", {"location": "Lima"}),
        ("get_time", {"timezone": "America/Lima"}),
    ],
    grammar="accept",
)
l3(
    "calls-without-separator",
    json_call("get_time", {"timezone": "UTC"}) + json_call("get_time", {"timezone": "CET"}),
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_time", {"timezone": "CET"})],
    grammar="accept",
    notes="two objects with no ';' between them: a run of two calls (the Llama 4 template "
    "writes calls this way)",
)
l3(
    "semicolon-inside-string",
    json_call("search", {"query": "a; b; c"}) + "; " + json_call("get_time", {}),
    content=None,
    calls=[("search", {"query": "a; b; c"}), ("get_time", {})],
    grammar="accept",
    notes="a ';' inside a JSON string is string text, not a separator",
)
l3(
    "compact-json-spacing",
    '{"name":"search","parameters":{"query":"a b","top_k":2}}',
    content=None,
    calls=[("search", '{"query":"a b","top_k":2}')],
    grammar="accept",
    notes="the arguments are the model's own text, compact as written, not re-serialised",
)
l3(
    "arguments-key",
    '{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}',
    content=None,
    calls=[("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
    notes="'arguments' is as native as 'parameters' for this family",
)
l3(
    "arguments-before-name",
    '{"parameters": {"timezone": "Asia/Tokyo"}, "name": "get_time"}',
    content=None,
    calls=[("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
)
l3(
    "type-function-member",
    '{"type": "function", "name": "get_current_weather", "parameters": {"location": "Oslo"}}',
    content=None,
    calls=[("get_current_weather", {"location": "Oslo"})],
    grammar="accept",
    notes="the extra 'type' member is ignored (an ignored-member event, not a recovery)",
)

# ---- llama3_json: content around calls -------------------------------------------------------

l3(
    "content-then-call-on-its-own-line",
    "I'll check the weather in Paris for you.\n" + json_call("get_current_weather", PARIS),
    content="I'll check the weather in Paris for you.",
    calls=[("get_current_weather", PARIS)],
    grammar="accept",
    notes="after content, a call that begins a line and names a declared tool is a call",
)
l3(
    "content-then-python-tag",
    "I'll look that up.<|python_tag|>" + json_call("search", {"query": "vLLM releases"}),
    content="I'll look that up.",
    calls=[("search", {"query": "vLLM releases"})],
    grammar="accept",
)
l3(
    "json-inside-a-sentence",
    "The call would be " + json_call("get_time", {}) + " but I have the answer already.",
    content="The call would be " + json_call("get_time", {}) + " but I have the answer already.",
    calls=[],
    grammar="accept",
    notes="llama3_json: after content, only a call that begins a line is read as a call",
)
l3(
    "json-record-after-content",
    'Here is the record you asked for:\n{"name": "Alice", "age": 30}',
    content='Here is the record you asked for:\n{"name": "Alice", "age": 30}',
    calls=[],
    grammar="accept",
    notes="it begins a line, but 'Alice' is not a declared tool: content",
)
l3(
    "json-content-at-start",
    '{"answer": 42, "unit": "km"}',
    content='{"answer": 42, "unit": "km"}',
    calls=[],
    grammar="accept",
    notes="its first member is not a call member: content, released as soon as that is known",
)
l3(
    "plain-answer",
    "The capital of France is Paris.",
    content="The capital of France is Paris.",
    calls=[],
    grammar="accept",
)
l3(
    "separator-then-text",
    json_call("get_time", {"timezone": "UTC"}) + "; that is all I need.",
    content="; that is all I need.",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes="a ';' not followed by another call is content",
)
l3(
    "tool-choice-none",
    json_call("get_time", {"timezone": "UTC"}),
    tool_choice="none",
    content=json_call("get_time", {"timezone": "UTC"}),
    calls=[],
    notes='tool_choice "none": the whole output is content, the call included',
)

# ---- llama3_json: defects ---------------------------------------------------------------------

l3(
    "truncated-in-string",
    '{"name": "search", "parameters": {"query": "streaming tool pars',
    content=None,
    calls=[("search", '{"query": "streaming tool pars')],
    finish_reason="length",
    notes="cut off by max_tokens: the arguments are the model's text so far, not closed",
)
l3(
    "truncated-before-name",
    'Let me search.\n{"name": "sea',
    content='Let me search.\n{"name": "sea',
    calls=[],
    finish_reason="length",
    notes="no complete name: not committed, its text is content verbatim",
)
l3(
    "name-lone-surrogate-escape",
    '<|python_tag|>{"name": "get_time", "parameters": {}}; {"name": "\\ud800", "parameters": {}}',
    content='; {"name": "\\ud800", "parameters": {}}',
    calls=[("get_time", {})],
    notes="a name UTF-8 cannot write (a lone surrogate escape) is no readable name: that "
    "object is no call (DESIGN §6), so the run ends before it and the ';' and the object are "
    "content, verbatim (unparsed-markup); the call before it stands",
)
l3(
    "name-surrogate-pair-escape",
    '{"name": "get_time\\ud83d\\udd50", "parameters": {}}',
    content=None,
    calls=[("get_time\N{CLOCK FACE ONE OCLOCK}", {})],
    notes="a surrogate pair escape is one character of the name, kept as the model wrote it",
)
l4(
    "name-lone-surrogate-escape",
    '<|python_start|>{"name": "\\udc00", "parameters": {}}',
    content='<|python_start|>{"name": "\\udc00", "parameters": {}}',
    calls=[],
    notes="a name UTF-8 cannot write (a lone surrogate escape) is no readable name: the "
    "marker and the object are content, verbatim (unparsed-markup)",
)
l3(
    "truncated-after-python-tag",
    "<|python_tag|>",
    content="<|python_tag|>",
    calls=[],
    finish_reason="length",
    notes="a marker and nothing after it: content, verbatim (unparsed-markup)",
)
l3(
    "trailing-comma",
    '{"name": "get_time", "parameters": {"timezone": "UTC",}}',
    content=None,
    calls=[("get_time", '{"timezone": "UTC",}')],
    grammar="reject",
    refusal=(at('"UTC",', 5), "timezone is get_time's only property: '}' must follow its value"),
    notes="committed by its name: the call stands, its arguments as written (malformed-arguments)",
)
l3(
    "unknown-tool-after-python-tag",
    "<|python_tag|>" + json_call("get_stock_price", {"ticker": "NVDA"}),
    content=None,
    calls=[("get_stock_price", {"ticker": "NVDA"})],
    grammar="reject",
    refusal=(at("get_stock_price", 4), "no declared tool's name goes on 'get_s'"),
    notes="names are kept as the model wrote them; the grammar allows declared names only",
)
STOCK = {"ticker": "NVDA"}
UNDECLARED_AT_START = (
    "a call object at the start of the output is a call whatever its name (DESIGN §6), so "
    "the grammar refuses it where no declared tool's name goes on: 'get_s'"
)
l3(
    "unknown-tool-at-start",
    json_call("get_stock_price", STOCK),
    content=None,
    calls=[("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(at("get_stock_price", 4), UNDECLARED_AT_START),
    notes="no marker, at the start: read as a call, name as written",
)
l3(
    "unknown-tool-arguments-first-at-start",
    '{"parameters": {"timezone": "UTC"}, "name": "get_stock_price"}',
    content=None,
    calls=[("get_stock_price", {"timezone": "UTC"})],
    grammar="reject",
    refusal=(at("get_stock_price", 4), UNDECLARED_AT_START),
    notes="the arguments come first and fit get_time's schema; the name makes it a call",
)
l3(
    "unknown-tool-later-in-the-run",
    json_call("get_time", {"timezone": "UTC"}) + "; " + json_call("get_stock_price", STOCK),
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(
        at("get_stock_price", 4),
        "every call object of a run that begins at the start is a call, whatever its "
        "name: no declared tool's name goes on 'get_s'",
    ),
    notes="a run without a marker at the start of the output: its second call names an "
    "undeclared tool",
)
l3(
    "builtin-tool-call",
    '<|python_tag|>brave_search.call(query="latest price of 1oz gold")',
    content='<|python_tag|>brave_search.call(query="latest price of 1oz gold")',
    calls=[],
    grammar="reject",
    refusal=(at("brave_search"), "after <|python_tag|> a call object opens with '{'"),
    kind="wild",
    source=META_LLAMA31_FORMAT.replace("'JSON based tool calling'", "'Builtin Tool Calling'"),
    notes="a built-in tool call (Environment: ipython, Tools: brave_search): not a JSON call, "
    "so content verbatim with its marker (unparsed-markup); the grammar wants JSON after "
    "<|python_tag|>",
)

# ---- llama3_json: the named recoveries ----------------------------------------------------------

l3(
    "python-literal-call",
    "{'name': 'search', 'parameters': {'query': \"it's\", 'top_k': 2, 'exact': True, "
    "'filter': None}}",
    content=None,
    calls=[("search", {"query": "it's", "top_k": 2, "exact": True, "filter": None})],
    recoveries=("python-literal",),
    grammar="accept",
    notes="a call written as a Python dict; under auto the grammar leaves it free text",
)
l3(
    "python-constants-in-arguments",
    '{"name": "search", "parameters": {"query": "weather", "exact": False, "filter": None}}',
    content=None,
    calls=[("search", '{"query": "weather", "exact": false, "filter": null}')],
    recoveries=("python-literal",),
    grammar="reject",
    refusal=(at("False"), "exact is a JSON boolean: true or false"),
    notes="False and None become false and null as they stream; the rest is the model's text",
)
l3(
    "parameters-as-a-string",
    '{"name": "get_time", "parameters": "{\\"timezone\\": \\"UTC\\"}"}',
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("arguments-string",),
    grammar="reject",
    refusal=(at('"parameters": ', 14), "the parameters must be an object, not a string"),
    notes="the parameters given as a JSON string holding the object (vLLM's Llama templates "
    "render 'arguments | tojson', and models imitate the string)",
)
l3(
    "calls-as-a-json-list",
    "["
    + json_call("get_current_weather", {"location": "Lima"})
    + ", "
    + json_call("get_time", {"timezone": "America/Lima"})
    + "]",
    content=None,
    calls=[
        ("get_current_weather", {"location": "Lima"}),
        ("get_time", {"timezone": "America/Lima"}),
    ],
    recoveries=("call-list",),
    grammar="accept",
    notes="the calls written as a JSON list (what OpenAI-style prompts ask for); under auto "
    "the grammar constrains each call from its opening and leaves the brackets free",
)
l3(
    "missing-final-brace",
    '{"name": "get_time", "parameters": {"timezone": "UTC"}',
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
    grammar="reject",
    refusal=(at_end, "the call object is not closed: '}' must come before the end"),
    notes="the call object's closing brace never comes; its arguments are complete",
)

# ---- llama3_json: wild --------------------------------------------------------------------------

TRAFFIC = tool("get_current_traffic", "The traffic in a city", obj(["location"], location=STRING))
l3(
    "wild-llama3.2-vision-function-envelope",
    '{"type": "function", "function": {"name": "get_current_traffic", "parameters": '
    '{"location": "Sydney"}}',
    tools=[WEATHER, TRAFFIC],
    content=None,
    calls=[("get_current_traffic", {"location": "Sydney"})],
    recoveries=("function-envelope", "missing-end"),
    grammar="accept",
    kind="wild",
    source="vllm-project/vllm#11786 (comment by hustxiayang, 2025-01-08): the message "
    "content of llama-3.2-11b-vision-instruct (stop_reason 128008, <|eom_id|>), quoted in "
    "the thread",
    model="meta-llama/Llama-3.2-11B-Vision-Instruct",
    notes=f"{RECONSTRUCTED}. OpenAI's function envelope around the call, and the outer "
    "object's last brace missing; the grammar's opening for get_current_traffic sees the "
    "inner call, which is sound",
)
INCIDENTS = tool("getOpenIncidentsTool", "The open incidents", {"type": "object", "properties": {}})
l3(
    "wild-call-then-question",
    '{"type": "function", "name": "getOpenIncidentsTool", "parameters": {}} \n\n'
    "Would you like to know more about a specific open incident?",
    tools=[INCIDENTS],
    content="Would you like to know more about a specific open incident?",
    calls=[("getOpenIncidentsTool", {})],
    grammar="accept",
    kind="wild",
    source="vllm-project/vllm#19024 (pull request description by key4ng, 2025-06-02): the "
    "model output quoted as the issue to resolve",
    model="Llama (served with vLLM's llama3_json parser; the model is not named)",
    notes=f"{RECONSTRUCTED}. The text after the call is content (vLLM 0.33 drops it)",
)
WEB_SEARCH = tool("web_search", "Search the web", obj(["query"], query=STRING))
l3(
    "wild-llama3.1-cjk-query",
    '{"name": "web_search", "parameters": {"query": "你好"}}',
    tools=[WEB_SEARCH],
    content=None,
    calls=[("web_search", {"query": "你好"})],
    grammar="accept",
    kind="wild",
    source="raullenchai/Rapid-MLX#700 (description, 2026-06-19): the content "
    "mlx-community/Meta-Llama-3.1-8B-Instruct-4bit returned for the user message '你好' "
    "with a web_search tool (the request is in the issue)",
    model="mlx-community/Meta-Llama-3.1-8B-Instruct-4bit",
)
SONGS = tool(
    "trending_songs",
    "Returns the trending songs on a Music site",
    obj(["n"], n=STRING, genre=STRING),
)
l3(
    "wild-meta-doc-pretty-printed",
    '<|python_tag|>{\n    "type": "function",\n    "name": "trending_songs",\n'
    '    "parameters": {\n        "n": "10",\n        "genre": "all"\n    }\n}',
    tools=[SONGS],
    content=None,
    calls=[("trending_songs", {"n": "10", "genre": "all"})],
    grammar="accept",
    kind="wild",
    source=META_LLAMA31_FORMAT,
    notes="the tool as Meta's prompt declares it, with its 'properties' list made an object "
    "(n and genre declared as strings, as the model answers them)",
)
FUNCTION_TAG = (
    "Llama 3.1's user-defined <function=NAME>{...}</function> format is not this format "
    "(plugins/llama/README.md: not read, as in vLLM): content, verbatim"
)
QUERY_WEB_SEARCH = tool("query_web_search", "Perform a web search", obj(query=STRING))
l3(
    "wild-llama3.2-json-code-fence",
    '```json\n{"name": "query_web_search", "parameters": {"query": "install ollama models"}}\n```',
    tools=[QUERY_WEB_SEARCH],
    content="```json\n```",
    calls=[("query_web_search", {"query": "install ollama models"})],
    grammar="accept",
    kind="wild",
    source="ollama/ollama#13519 (description by sacenox, 2025-12-18): the tool call "
    "llama3.2:3b wrote as text content, wrapped in a code block, with the request's tool",
    model="llama3.2:3b (Ollama)",
    notes="the fence is content (DESIGN §6: a code fence is no markup); the call object "
    "begins a line after content and names a declared tool, so it is a call. The line break "
    "before the call only separates content from it (framing); the one after it comes "
    "before more content and is kept (the core's content gate: 'A\\n<call/>\\nB' is 'A\\nB')",
)
l3(
    "wild-llama3.1-function-tag",
    '<function=get_current_weather>{"location": "Tokyo, JP"}</function>',
    tools=[
        tool(
            "get_current_weather",
            "Get the current weather in a given location",
            obj(["location"], location=STRING),
        )
    ],
    content='<function=get_current_weather>{"location": "Tokyo, JP"}</function>',
    calls=[],
    grammar="accept",
    kind="wild",
    source="braintrustdata/braintrust-cookbook examples/LLaMa-3_1-Tools/LLaMa-3_1-Tools.ipynb "
    "(cell 6 output; the notebook is dated 2024-07-26): the completion of "
    "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo (Together, temperature 0) asked for Meta's "
    "<function=...> format in the prompt",
    model="meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo (Together)",
    notes="the notebook gives the tool in its prompt, not as a function tool: declared here "
    f"to match. {FUNCTION_TAG}; no trigger of the grammar occurs, so it is free text",
)
BUILTIN = (
    "Meta's built-in tools are named in the system prompt ('Environment: iPython', 'Tools: "
    "brave_search, wolfram_alpha'), not declared as function tools: declared here as function "
    "tools of those names to match. A built-in call is Python after <|python_tag|>, not a "
    "JSON call: content, verbatim with its marker (unparsed-markup). The notebook prints "
    "<|python_tag|> as text; served by vLLM with tools, special tokens are kept, so the parser "
    "sees the single token 128010"
)
BUILTIN_TOOLS = [
    tool("brave_search", "Search the web with Brave", obj(["query"], query=STRING)),
    tool("wolfram_alpha", "Ask Wolfram Alpha", obj(["query"], query=STRING)),
]
COOKBOOK_101 = (
    "meta-llama/llama-cookbook end-to-end-use-cases/agents/Agents_Tutorial/"
    "Tool_Calling_101.ipynb (cell {cell} output, its 'Assistant: ' print label left out): "
    "llama-3.3-70b-versatile on Groq, asked '{question}'"
)
l3(
    "wild-llama3.3-builtin-brave-search",
    '<|python_tag|>brave_search.call(query="Elden Ring sequel release date")',
    tools=BUILTIN_TOOLS,
    content='<|python_tag|>brave_search.call(query="Elden Ring sequel release date")',
    calls=[],
    grammar="reject",
    refusal=(at("brave_search"), "after <|python_tag|> a call object opens with '{'"),
    kind="wild",
    source=COOKBOOK_101.format(cell=24, question="When is the next Elden Ring game coming out?"),
    model="llama-3.3-70b-versatile (Groq)",
    notes=BUILTIN,
)
l3(
    "wild-llama3.3-builtin-wolfram-alpha",
    '<|python_tag|>wolfram_alpha.call(query="square root of 23131231")',
    tools=BUILTIN_TOOLS,
    content='<|python_tag|>wolfram_alpha.call(query="square root of 23131231")',
    calls=[],
    grammar="reject",
    refusal=(at("wolfram_alpha"), "after <|python_tag|> a call object opens with '{'"),
    kind="wild",
    source=COOKBOOK_101.format(cell=25, question="What is the square root of 23131231?")
    + "; cells 28 and 29 print the same text",
    model="llama-3.3-70b-versatile (Groq)",
    notes=BUILTIN,
)
COOKBOOK_201 = (
    "meta-llama/llama-cookbook end-to-end-use-cases/agents/Agents_Tutorial/"
    "Tool_Calling_201.ipynb (cell {cell} output): the tool given in the notebook's system "
    "prompt in the <function=...> style"
)
l3(
    "wild-llama3.3-function-tag-two-papers",
    '<function=query_for_two_papers>{"paper_1": "Llama", "paper_2": "BERT"}</function>',
    tools=[
        tool(
            "query_for_two_papers",
            "Query two papers",
            obj(["paper_1", "paper_2"], paper_1=STRING, paper_2=STRING),
        )
    ],
    content='<function=query_for_two_papers>{"paper_1": "Llama", "paper_2": "BERT"}</function>',
    calls=[],
    grammar="accept",
    kind="wild",
    source=COOKBOOK_201.format(cell=13),
    model="llama-3.3-70b-versatile (Groq)",
    notes="the tool is in the system prompt, not a function tool: declared here to match. "
    f"{FUNCTION_TAG}; no trigger of the grammar occurs, so it is free text",
)
ARXIV_CALL = (
    "<function=get_arxiv_id>{\"web_results\": \"{'query': 'arxiv id of llama 3.1', "
    "'follow_up_questions': None, 'answer': None, 'images': [], 'results': [{'title': "
    "'TheLlama3HerdofModels - arXiv.org', 'url': 'https://arxiv.org/pdf/2407.21783', "
    "'content': 'arXiv:2407.21783v2 [cs.AI] 15 Aug 2024. Finetuned Multilingual Longcontext "
    "Tooluse Release ... The model architecture of Llama 3 is illustrated in Figure1. The "
    "development of our Llama 3 language modelscomprisestwomainstages:', 'score': 0.9955835, "
    "'raw_content': None}, {'title': 'NousResearch/Meta-Llama-3.1-8B - Hugging Face', 'url': "
    "'https://huggingface.co/NousResearch/Meta-Llama-3.1-8B', 'content': 'The Meta Llama 3.1 "
    "collection of multilingual large language models (LLMs) is a collection of pretrained and "
    "instruction tuned generative models in 8B, 70B and 405B sizes (text in/text out). The "
    "Llama 3.1 instruction tuned text only models (8B, 70B, 405B) are optimized for "
    "multilingual dialogue use cases and outperform many of the available ...', 'score': "
    "0.95379424, 'raw_content': None}, {'title': 'Introducing Llama 3.1: Our most capable "
    "models to date - Meta AI', 'url': 'https://ai.meta.com/blog/meta-llama-3-1/', 'content': "
    "'Bringing open intelligence to all, our latest models expand context length to 128K, add "
    "support across eight languages, and include Llama 3.1 405B—the first frontier-level open "
    "source AI model. Llama 3.1 405B is in a class of its own, with unmatched flexibility, "
    "control, and state-of-the-art capabilities that rival the best closed source models.', "
    "'score': 0.9003547, 'raw_content': None}, {'title': 'The Llama 3 Herd of Models | "
    "Research - AI at Meta', 'url': "
    "'https://ai.meta.com/research/publications/the-llama-3-herd-of-models/', 'content': 'This "
    "paper presents an extensive empirical evaluation of Llama 3. We find that Llama 3 "
    "delivers comparable quality to leading language models such as GPT-4 on a plethora of "
    "tasks. We publicly release Llama 3, including pre-trained and post-trained versions of "
    "the 405B parameter language model and our Llama Guard 3 model for input and output "
    "safety.', 'score': 0.89460546, 'raw_content': None}, {'title': '[2407.21783] The Llama 3 "
    "Herd of Models - arXiv.org', 'url': 'https://arxiv.org/abs/2407.21783', 'content': "
    "'Modern artificial intelligence (AI) systems are powered by foundation models. This paper "
    "presents a new set of foundation models, called Llama 3. It is a herd of language models "
    "that natively support multilinguality, coding, reasoning, and tool usage. Our largest "
    "model is a dense Transformer with 405B parameters and a context window of up to 128K "
    "tokens. This paper presents an extensive ...', 'score': 0.6841585, 'raw_content': None}], "
    "'response_time': 2.09}\"}</function>"
)
l3(
    "wild-llama3.1-function-tag-python-repr",
    ARXIV_CALL,
    tools=[tool("get_arxiv_id", "Get the arXiv id", obj(["web_results"], web_results=STRING))],
    content=ARXIV_CALL,
    calls=[],
    grammar="accept",
    kind="wild",
    source=COOKBOOK_201.format(cell=19) + ", llama-3.1-8b-instant on Groq; copied whole",
    model="llama-3.1-8b-instant (Groq)",
    notes="the tool is in the system prompt, not a function tool: declared here to match. "
    f"{FUNCTION_TAG}, its JSON string holding a Python repr of a search result (single "
    "quotes, None) included; no '{' begins a line and no trigger of the grammar occurs",
)
l3(
    "wild-ollama-two-pretty-calls",
    '{\n  "name": "weather",\n  "arguments": {\n    "location": "San Francisco"\n  }\n} '
    '{\n  "name": "cityAttractions",\n  "arguments": {\n    "city": "San Francisco"\n  }\n}',
    tools=[
        tool("weather", "The weather in a location", obj(["location"], location=STRING)),
        tool("cityAttractions", "The attractions of a city", obj(["city"], city=STRING)),
    ],
    content=None,
    calls=[
        ("weather", '{\n    "location": "San Francisco"\n  }'),
        ("cityAttractions", '{\n    "city": "San Francisco"\n  }'),
    ],
    grammar="accept",
    kind="wild",
    source="sgomez/ollama-ai-provider#11 (comment by sgomez, 2024-07-28): the text Ollama "
    "returned for the Vercel AI SDK's weather and cityAttractions example, a single text part",
    model="a Llama model on Ollama (the comment does not name it; the repository's tests "
    "later use llama3.1)",
    notes="the tools are the AI SDK example's (name and parameter from the output); the "
    "JSON form came from the provider's own injected tool prompt, not Meta's template. "
    "A run at the start of the output: 'arguments' is native, the ' ' between the objects "
    "is a separator, and the arguments are the model's text as written, line breaks and all",
)
# ---- llama4_json ---------------------------------------------------------------------------------

l4_template("template-single-call", "", [("get_current_weather", BOSTON)], grammar="accept")
l4_template(
    "template-content-then-call",
    "Let me check the weather in Paris.",
    [("get_current_weather", PARIS)],
    grammar="accept",
    notes="the template writes the call directly after the content",
)
l4_template(
    "template-two-calls",
    "",
    [("get_current_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
    notes="the template writes '}{' between calls",
)
l4_template(
    "template-unicode-arguments",
    "",
    [("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})],
    grammar="accept",
)
l4_template(
    "template-required-choice",
    "",
    [("search", {"query": "llama 4 context length", "top_k": 5})],
    tool_choice="required",
    grammar="accept",
)
l4_template(
    "template-named-choice",
    "",
    [("get_time", {"timezone": "UTC"})],
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    grammar="accept",
)
l4(
    "wild-python-start-wrapper",
    '<|python_start|>{"name": "brave_web_search", "parameters": {"query": "latest news"}}'
    "<|python_end|>",
    tools=[tool("brave_web_search", "Search the web with Brave", obj(query=STRING))],
    content=None,
    calls=[("brave_web_search", {"query": "latest news"})],
    grammar="accept",
    kind="wild",
    source="vllm-project/vllm#16214 (comment by jhuntbach-bc, 2025-04-09): what a Llama 4 "
    "model returned as text content when served with a JSON tool parser",
    model="meta-llama/Llama-4 (Scout or Maverick; the thread does not say)",
    notes=f"{RECONSTRUCTED}. <|python_start|> and <|python_end|> are framing",
)
l4(
    "wild-scout-bare-json",
    '{"name": "get_weather", "parameters": {"location": "Paris"}}',
    tools=[tool("get_weather", "Get the weather", obj(location=STRING))],
    content=None,
    calls=[("get_weather", {"location": "Paris"})],
    grammar="accept",
    kind="wild",
    source="jundot/omlx#1153 (pull request description, 2026-05-09): the content "
    "mlx-community/Llama-4-Scout-17B-16E-Instruct-4bit returned, quoted as the symptom",
    model="mlx-community/Llama-4-Scout-17B-16E-Instruct-4bit",
    notes=RECONSTRUCTED,
)
LLAMA4_FORMAT = (
    "meta-llama/llama-models models/llama4/prompt_format.md ({section}; {version}), the "
    "model response quoted there"
)
LLAMA4_DOC_MODEL = "Llama 4 Scout / Maverick (Meta's prompt-format document)"
LLAMA4_DOC_END = "the document's <|eot|> (a stop token: vLLM does not pass it) is left out"
SONGS_INT = tool(
    "trending_songs",
    "Returns the trending songs on a Music site",
    obj(["n"], n=INTEGER, genre=STRING),
)
l4(
    "wild-llama4-doc-function-tag",
    '<function=trending_songs>{"n": 10}</function>',
    tools=[SONGS_INT],
    content='<function=trending_songs>{"n": 10}</function>',
    calls=[],
    grammar="accept",
    kind="wild",
    source=LLAMA4_FORMAT.format(
        section="'Tool calling with custom formats'", version="current version, f3d16d7"
    ),
    model=LLAMA4_DOC_MODEL,
    notes="the tool's parameters as the document declares them (n an int, genre an optional str); "
    "<function=NAME>{...}</function> is not this format: content, verbatim (the '{' after "
    "content opens with 'n', no call member); no trigger of the grammar occurs; " + LLAMA4_DOC_END,
)
l4(
    "wild-llama4-doc-function-tag-quoted-int",
    '<function=trending_songs>{"n": "10"}</function>',
    tools=[SONGS_INT],
    content='<function=trending_songs>{"n": "10"}</function>',
    calls=[],
    grammar="accept",
    kind="wild",
    source=LLAMA4_FORMAT.format(
        section="'Tool calling with custom formats'", version="first version, ebe3527"
    ),
    model=LLAMA4_DOC_MODEL,
    notes="the same prompt as wild-llama4-doc-function-tag, another generation (the int "
    "quoted); content, verbatim, as there; the grammar leaves it free text, so the quoted "
    "int is not refused; " + LLAMA4_DOC_END,
)
l4(
    "python-start-without-end",
    "<|python_start|>" + json_call("get_time", {"timezone": "UTC"}),
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes="<|python_end|> is optional: Meta's Llama 4 decoder drops it where it stands",
)
l4(
    "unknown-tool-at-start",
    json_call("get_stock_price", STOCK),
    content=None,
    calls=[("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(at("get_stock_price", 4), UNDECLARED_AT_START),
    notes="no marker, at the start: read as a call, name as written",
)
l4(
    "unknown-tool-later-in-the-run",
    json_call("get_time", {"timezone": "UTC"}) + json_call("get_stock_price", STOCK),
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(
        at("get_stock_price", 4),
        "every call object of a run that begins at the start is a call, whatever its "
        "name: no declared tool's name goes on 'get_s'",
    ),
    notes="the calls as the template writes them, '}{', the second naming an undeclared tool",
)
l4(
    "json-record-in-a-sentence",
    'The record is {"name": "Alice", "age": 30}, as stored.',
    content='The record is {"name": "Alice", "age": 30}, as stored.',
    calls=[],
    grammar="accept",
    notes="directly after text, but 'Alice' is not a declared tool: content",
)
l4(
    "call-then-text",
    json_call("get_time", {"timezone": "UTC"}) + "\n\nI'll tell you the time once I have it.",
    content="I'll tell you the time once I have it.",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
l4(
    "truncated-in-arguments",
    "Checking." + '{"name": "search", "parameters": {"query": "llama',
    content="Checking.",
    calls=[("search", '{"query": "llama')],
    finish_reason="length",
)
l4(
    "end-marker-inside-string",
    "<|python_start|>"
    + json_call("write_file", {"path": "notes.md", "content": "Runs end at <|python_end|>."})
    + "<|python_end|>",
    content=None,
    calls=[("write_file", {"path": "notes.md", "content": "Runs end at <|python_end|>."})],
    notes="inside a JSON string, <|python_end|> is string text",
)


# ---- llama4_pythonic ---------------------------------------------------------------------------


def py(slug: str, text: str, **kw: Any) -> None:
    case(PY, slug, text, tokenizer=LLAMA4, **kw)


def py_template(
    slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any
) -> None:
    """A template case: the turn renders every value as a string (``"%s" | format``), so the
    expected arguments are the rendered strings."""
    rendered = [(name, {key: str(value) for key, value in args.items()}) for name, args in calls]
    py(
        slug,
        llama4_pythonic_turn(content, calls),
        content=content or None,
        calls=list(rendered),
        kind="template",
        source=LLAMA4_PYTHONIC_TEMPLATE,
        **kw,
    )


py_template("template-single-call", "", [("get_current_weather", BOSTON)], grammar="accept")
py_template(
    "template-content-then-list",
    "I'll check the weather in Paris for you.",
    [("get_current_weather", PARIS)],
    grammar="accept",
    notes="the template writes the list right after the content",
)
py_template(
    "template-two-calls",
    "",
    [("get_current_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
)
py_template(
    "template-number-quoted",
    "",
    [("search", {"query": "llama 4 release", "top_k": 3})],
    grammar="reject",
    refusal=(at('top_k="', 6), "top_k is an integer: a quote cannot start it"),
    notes="the template quotes every value, so top_k is the string '3': the arguments are "
    "what the model wrote; the grammar, pinning top_k to an integer, refuses the quote",
)
py_template(
    "template-unicode-arguments",
    "",
    [("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})],
    grammar="accept",
)
py_template(
    "template-required-choice",
    "",
    [("get_time", {"timezone": "UTC"})],
    tool_choice="required",
    grammar="accept",
)
py_template(
    "template-named-choice",
    "",
    [("get_current_weather", {"location": "Rome"})],
    tool_choice={"type": "function", "function": {"name": "get_current_weather"}},
    grammar="accept",
)
py_template(
    "template-single-call-not-parallel",
    "",
    [("get_time", {"timezone": "Europe/Oslo"})],
    parallel_tool_calls=False,
    grammar="accept",
)
py(
    "python-start-wrapper",
    '<|python_start|>[get_current_weather(location="Paris, France", unit="celsius")]<|python_end|>',
    content=None,
    calls=[("get_current_weather", PARIS)],
    grammar="accept",
    notes="Llama 4's python tokens around the list are framing (Meta's decoder strips them)",
)
py(
    "python-start-calls-per-line",
    '<|python_start|>get_time(timezone="UTC")\nget_time(timezone="Asia/Tokyo")<|python_end|>',
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
    notes="after <|python_start|>, calls without a list, one per line",
)
py(
    "typed-literals",
    "[search(query='vllm tool parsers', top_k=3, exact=True, filter=None)]",
    content=None,
    calls=[("search", '{"query": "vllm tool parsers", "top_k": 3, "exact": true, "filter": null}')],
    grammar="accept",
    notes="the arguments are the canonical json.dumps of the keyword arguments",
)
py(
    "nested-literals",
    "[create_event(title='Design review', attendees=['ana@example.com', "
    "\"li@example.com\"], when={'date': '2025-03-14', 'hour': 15}, reminder=False)]",
    content=None,
    calls=[("create_event", {**NEXT_WEEK, "reminder": False})],
    grammar="accept",
)
py(
    "no-arguments",
    "[get_time()]",
    content=None,
    calls=[("get_time", {})],
    grammar="accept",
)
py(
    "escapes-in-strings",
    "[write_file(path='C:\\\\temp\\\\notes.txt', content='it\\'s \"quoted\"\\nline two')]",
    content=None,
    calls=[("write_file", {"path": "C:\\temp\\notes.txt", "content": 'it\'s "quoted"\nline two'})],
    grammar="accept",
)
py(
    "content-after-the-list",
    '[get_time(timezone="UTC")]\n\nI will tell you the time as soon as I have it.',
    content="I will tell you the time as soon as I have it.",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
py(
    "markdown-link-is-content",
    "The docs are at [the vLLM site](https://docs.vllm.ai) and [here](x).",
    content="The docs are at [the vLLM site](https://docs.vllm.ai) and [here](x).",
    calls=[],
    grammar="accept",
    notes="a '[' after content starts calls only when its first call names a declared tool",
)
py(
    "undeclared-call-after-text",
    "You could run [lookup(term='llama')] yourself.",
    content="You could run [lookup(term='llama')] yourself.",
    calls=[],
    grammar="accept",
)
py(
    "unknown-tool-at-start",
    '[get_stock_price(ticker="NVDA")]',
    content=None,
    calls=[("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(
        at("("),
        "a list at the start of the output is calls whatever its first name (DESIGN §6): "
        "'(' makes it a call of an undeclared tool ('[get_stock_price]' would be content)",
    ),
    notes="no marker, at the start: read as a call, name as written",
)
py(
    "unknown-tool-in-a-second-list",
    '[get_time(timezone="UTC")] [get_stock_price(ticker="NVDA")]',
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_stock_price", STOCK)],
    grammar="reject",
    refusal=(
        at("(", nth=2),
        "after a list at the start, whitespace and another list continue the calls, "
        "whatever their names: '(' makes it a call of an undeclared tool",
    ),
)
py(
    "tool-choice-none",
    '[get_time(timezone="UTC")]',
    tool_choice="none",
    content='[get_time(timezone="UTC")]',
    calls=[],
)

# ---- llama4_pythonic: bad input (the policy decides each: DESIGN §6, toolcall.pycall) ----

FLIGHTS = tool(
    "book_flight",
    "Book a flight",
    obj(["from", "to"], **{"from": STRING, "to": STRING, "class": STRING}),
)
py(
    "keyword-from-and-class",
    '[book_flight(from="NYC", to="SFO", class="economy")]',
    tools=[FLIGHTS, TIME],
    content=None,
    calls=[("book_flight", {"from": "NYC", "to": "SFO", "class": "economy"})],
    recoveries=("reserved-word",),
    grammar="accept",
    notes="'from' and 'class' are Python keywords (ast.parse refuses the call); the tool "
    "declares them, and the grammar allows every declared name",
)
py(
    "positional-argument",
    '[get_current_weather("Paris")]',
    content='"Paris"',
    calls=[("get_current_weather", "")],
    grammar="reject",
    refusal=(at('"Paris"'), "the arguments are keywords: a value cannot come first"),
    notes="committed at 'get_current_weather(': nothing was emitted when the positional "
    "argument (a defect) came, so the arguments are empty (malformed-arguments) and the rest "
    "of the call up to its ')' is content",
)
py(
    "raw-newline-in-string",
    '[write_file(path="a.py", content="def f():\n    return 1\n")]',
    content=None,
    calls=[("write_file", {"path": "a.py", "content": "def f():\n    return 1\n"})],
    recoveries=("control-character",),
    grammar="reject",
    refusal=(at("\n"), "a one-line Python string holds no raw line break"),
    notes="raw line breaks inside a one-line Python string",
)
py(
    "list-with-a-non-call",
    '[get_time(timezone="UTC"), 42, get_time(timezone="CET")]',
    content="42",
    calls=[("get_time", {"timezone": "UTC"}), ("get_time", {"timezone": "CET"})],
    grammar="reject",
    refusal=(at("42"), "after ',' in the list only another call may come"),
    notes="a later element that is not a call is content, up to the next ','",
)
py(
    "call-inside-a-call",
    '[get_current_weather(location=get_city(name="home"))]',
    content='get_city(name="home")',
    calls=[("get_current_weather", '{"location": ')],
    grammar="reject",
    refusal=(at("get_city"), "location is a string: a call cannot be its value"),
    notes="a call is no Python literal: the arguments keep what was emitted, the value up "
    "to the call's ')' is content",
)
py(
    "json-literals",
    '[search(query="weather", exact=true, filter=null)]',
    content=None,
    calls=[("search", {"query": "weather", "exact": True, "filter": None})],
    recoveries=("json-literal",),
    grammar="reject",
    refusal=(at("true"), "exact is a Python boolean: True or False"),
)
py(
    "missing-closing-bracket",
    '[get_time(timezone="UTC")',
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
    grammar="reject",
    refusal=(at_end, "the list is not closed: ']' must come before the end"),
)
py(
    "truncated-in-string",
    '[get_current_weather(location="San Fran',
    content=None,
    calls=[("get_current_weather", '{"location": "San Fran')],
    finish_reason="length",
)
py(
    "truncated-before-the-call",
    "Let me look.[get_current_wea",
    content="Let me look.[get_current_wea",
    calls=[],
    finish_reason="length",
    notes="no call committed: content, verbatim",
)
py(
    "wild-llama4-two-calls",
    '[get_todays_date(), get_weather(location="Dublin, Ireland", date="2025-04-14")]',
    tools=[
        tool("get_todays_date", "Today's date", obj()),
        tool("get_weather", "The weather on a date", obj(location=STRING, date=STRING)),
    ],
    content=None,
    calls=[
        ("get_todays_date", {}),
        ("get_weather", {"location": "Dublin, Ireland", "date": "2025-04-14"}),
    ],
    grammar="accept",
    kind="wild",
    source="vllm-project/vllm#22917 (description by erkintelnyx, 2025-08-14): the deltas "
    "of a Llama 4 output that llama4_pythonic parsed, logged one per line (DELTA TEXT)",
    model="meta-llama/Llama-4 (served with llama4_pythonic; the issue does not say which)",
    notes=f"{RECONSTRUCTED}. The text is the concatenation of the logged deltas",
)
DOC_WEATHER = tool(
    "get_weather",
    "Get weather info for places",
    obj(["city"], city=STRING, metric=STRING),
)
py(
    "wild-llama4-doc-two-calls",
    '[get_weather(city="San Francisco"), get_weather(city="Seattle")]',
    tools=[DOC_WEATHER],
    content=None,
    calls=[("get_weather", {"city": "San Francisco"}), ("get_weather", {"city": "Seattle"})],
    grammar="accept",
    kind="wild",
    source=LLAMA4_FORMAT.format(
        section="'Zero shot function calling - system message'", version="current version, f3d16d7"
    ),
    model=LLAMA4_DOC_MODEL,
    notes="the tool's parameters as the document declares them (city required, metric a "
    "string defaulting to 'celsius'); " + LLAMA4_DOC_END,
)
py(
    "wild-llama4-doc-single-quoted-calls",
    "[get_weather(city='SF'), get_weather(city='Seattle')]",
    tools=[DOC_WEATHER],
    content=None,
    calls=[("get_weather", {"city": "SF"}), ("get_weather", {"city": "Seattle"})],
    grammar="accept",
    kind="wild",
    source=LLAMA4_FORMAT.format(
        section="'Zero shot function calling - system message'", version="first version, ebe3527"
    ),
    model=LLAMA4_DOC_MODEL,
    notes="the same prompt as wild-llama4-doc-two-calls, another generation: single-quoted "
    "Python strings; " + LLAMA4_DOC_END,
)
py(
    "wild-llama4-doc-int-argument",
    "[get_user_info(user_id=7890, special='black')]",
    tools=[
        tool(
            "get_user_info",
            "Retrieve details for a specific user by their unique identifier",
            obj(["user_id"], user_id=INTEGER, special=STRING),
        )
    ],
    content=None,
    calls=[("get_user_info", {"user_id": 7890, "special": "black"})],
    grammar="accept",
    kind="wild",
    source=LLAMA4_FORMAT.format(
        section="'Zero shot function calling - user message'", version="the same in every version"
    ),
    model=LLAMA4_DOC_MODEL,
    notes="the tool's parameters as the document declares them (user_id an integer, "
    "special a string defaulting to 'none'); " + LLAMA4_DOC_END,
)


# ---- generated under the grammar (request.constrained) ----------------------------------------
#
# The text is the template's rendering; the token ids are what the structural tag of the
# request's plan (at its own strict level, else the parser's default) let through, one seeded
# choice per step (toolcall_conformance.constrained). The seed is the case id. A tool marked
# ``strict: true`` puts ``auto`` under the grammar with that tool's schema pinned.


def get_time_named() -> dict[str, Any]:
    return {"type": "function", "function": {"name": "get_time"}}


TOKYO = {"location": "東京都 🗼", "unit": "celsius"}
Render = Callable[..., None]


def constrained_cases(render: Render, markup_in_string: str) -> None:
    """The plans under a grammar, each rendered by ``render(slug, name, arguments, **kw)``;
    every value a string, as the pythonic template can write it. ``markup_in_string`` is
    text that reads like the format's call markup, inside the one call's string argument."""
    render(
        "constrained-auto-strict-tool",
        "get_current_weather",
        TOKYO,
        tools=[strict_tool(WEATHER), TIME],
    )
    render(
        "constrained-required-call",
        "search",
        {"query": "tool calling", "filter": "news"},
        tool_choice="required",
    )
    render("constrained-named-call", "get_time", {"timezone": "UTC"}, tool_choice=get_time_named())
    render(
        "constrained-single-call-not-parallel",
        "write_file",
        {"path": "a.md", "content": markup_in_string},
        tool_choice="required",
        parallel_tool_calls=False,
    )


def one_call(template: Callable[..., None]) -> Render:
    """``render`` for a template that takes content and a list of calls."""

    def render(slug: str, name: str, arguments: dict[str, Any], **kw: Any) -> None:
        template(slug, "", [(name, arguments)], grammar="accept", constrained=True, **kw)

    return render


JSON_MARKUP = '# Calls\n\n{"name": "get_time", "parameters": {}} is text here.'
constrained_cases(
    lambda slug, name, arguments, **kw: l3_template(
        slug, name, arguments, grammar="accept", constrained=True, **kw
    ),
    JSON_MARKUP,
)
constrained_cases(one_call(l4_template), JSON_MARKUP)
# The pythonic template writes each value between double quotes unescaped: no quote or
# line break in a value (the rendering would not be a Python call).
constrained_cases(one_call(py_template), "[get_time(timezone='UTC')] is text here.")


# -- writing --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build() for build in CASES), argv, label="Llama")


if __name__ == "__main__":
    raise SystemExit(main())
