"""Write the conformance corpus of the ``xlam`` parser name (Salesforce xLAM, toolcall-xlam).

    python conformance/corpus/xlam.py            # (re)write every case file
    python conformance/corpus/xlam.py --check    # fail if a file differs from what it would write

``xlam`` is a family made of data: the response template in plugins/xlam (the message is a
JSON list of ``{"name", "arguments"}``, one call per element), served by the hf engine. The
xLAM-2 models come in two bases, so the cases are on both tokenizers: ``llama3.1`` (xLAM-2-8b
and 70b, Llama 3.1) and ``qwen2.5`` (xLAM-2-1b, 3b and 32b, Qwen2.5).

``template`` cases are the assistant turn of vLLM's examples/tool_chat_template_xlam_llama.jinja
and tool_chat_template_xlam_qwen.jinja (vLLM 0.33.0 sdist), written here by their rules (see
:func:`llama_turn`, :func:`qwen_turn`); the rules were checked against a jinja2 rendering of
those files, with transformers' ``tojson`` (``json.dumps(ensure_ascii=False)``). The output is
the text after the generation prompt, up to the stop token (``<|eot_id|>``, ``<|im_end|>``)
that ends it and is not part of it.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6, the hf engine's
README) and plugins/xlam/README.md, never from a parser's output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall_conformance.builder import build_case, write_corpus
from toolcall_conformance.cases import validate_case_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[0] / "src" / "toolcall_conformance" / "cases"
PARSER = "xlam"
LLAMA = "llama3.1"
QWEN = "qwen2.5"
MODELS = {
    LLAMA: "Salesforce/Llama-xLAM-2-8b-fc-r",
    QWEN: "Salesforce/xLAM-2-3b-fc-r",
}


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


# The tools of the hermes corpus (conformance/corpus/hermes.py), written out: that script
# imports the hermes plugin, which the data session does not install.
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
        "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
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
ALL = [WEATHER, TIME, SEARCH, WRITE]
BOSTON = {"location": "Boston, MA", "unit": "fahrenheit"}

LLAMA_TEMPLATE = (
    "vLLM's examples/tool_chat_template_xlam_llama.jinja (vLLM 0.33.0 sdist), assistant turn "
    "with tool_calls rendered by its rules: '[' + per call '{\"name\": \"' + name + '\", ' + "
    "'\"arguments\": ' + arguments|tojson + '}' joined by ', ' + ']' (content is not rendered), "
    "then <|eot_id|>, the stop token"
)
QWEN_TEMPLATE = (
    "vLLM's examples/tool_chat_template_xlam_qwen.jinja (vLLM 0.33.0 sdist), assistant turn "
    "with tool_calls rendered by its rules: '[' + per call tool_call.function|tojson joined by "
    "', ' + ']' (content is not rendered), then <|im_end|>, the stop token"
)
EMPTY_TEMPLATE = (
    "vLLM's examples/tool_chat_template_xlam_{}.jinja (vLLM 0.33.0 sdist): an assistant turn "
    "with empty tool_calls and no content is rendered '[]\\n' (then the stop token)"
)
CONSTRUCTED = "written by hand for the xlam parsing policy (plugins/xlam/README.md)"

CASES: list[dict[str, Any]] = []


def tojson(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def llama_turn(calls: list[tuple[str, dict[str, Any]]]) -> str:
    return (
        "["
        + ", ".join(
            '{"name": "' + name + '", "arguments": ' + tojson(args) + "}" for name, args in calls
        )
        + "]"
    )


def qwen_turn(calls: list[tuple[str, dict[str, Any]]]) -> str:
    return "[" + ", ".join(tojson({"name": name, "arguments": args}) for name, args in calls) + "]"


def case(
    slug: str,
    text: str,
    *,
    tokenizer: str,
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    kind: str = "constructed",
    source: str = CONSTRUCTED,
    notes: str = "",
    recoveries: tuple[str, ...] = (),
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    tools: list[dict[str, Any]] | None = None,
) -> None:
    provenance: dict[str, Any] = {"kind": kind, "source": source, "model": MODELS[tokenizer]}
    if notes:
        provenance["notes"] = notes
    expected: dict[str, Any] = {
        "content": content,
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
    }
    if recoveries:
        expected["recoveries"] = list(recoveries)
    CASES.append(
        {
            "slug": slug,
            "tokenizer": tokenizer,
            "text": text,
            "request": {"tools": tools if tools is not None else ALL, "tool_choice": tool_choice},
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
        }
    )


# ---- the chat templates' renderings ----------------------------------------------------------

LLAMA_CASE: dict[str, Any] = {"tokenizer": LLAMA, "kind": "template", "source": LLAMA_TEMPLATE}
QWEN_CASE: dict[str, Any] = {"tokenizer": QWEN, "kind": "template", "source": QWEN_TEMPLATE}
TOKYO: list[tuple[str, dict[str, Any]]] = [
    ("get_current_weather", {"location": "Tokyo"}),
    ("get_time", {"timezone": "Asia/Tokyo"}),
]
UNICODE = {"path": "東京/メモ.txt", "content": 'tab\there "quoted" ```json\n[1]``` 🗼'}

case(
    "llama-template-single-call",
    llama_turn([("get_current_weather", BOSTON)]),
    content=None,
    calls=[("get_current_weather", BOSTON)],
    **LLAMA_CASE,
)
case(
    "llama-template-parallel-calls",
    llama_turn(TOKYO),
    content=None,
    calls=list(TOKYO),
    **LLAMA_CASE,
)
case(
    "llama-template-empty-arguments",
    llama_turn([("get_time", {})]),
    content=None,
    calls=[("get_time", {})],
    **LLAMA_CASE,
)
case(
    "qwen-template-single-call",
    qwen_turn([("get_current_weather", BOSTON)]),
    content=None,
    calls=[("get_current_weather", BOSTON)],
    **QWEN_CASE,
)
case(
    "qwen-template-parallel-calls",
    qwen_turn([*TOKYO, ("search", {"query": "xLAM", "top_k": 3})]),
    content=None,
    calls=[*TOKYO, ("search", {"query": "xLAM", "top_k": 3})],
    **QWEN_CASE,
)
case(
    "qwen-template-unicode-and-markup-in-strings",
    qwen_turn([("write_file", UNICODE)]),
    content=None,
    calls=[("write_file", UNICODE)],
    notes="a code fence and brackets inside a string are the string's: the list has no closer",
    **QWEN_CASE,
)
case(
    "qwen-template-empty-list",
    "[]\n",
    tokenizer=QWEN,
    kind="template",
    source=EMPTY_TEMPLATE.format("qwen"),
    content="[]",
    calls=[],
    notes=(
        "a list that gives no name commits no call, so its text is content, verbatim "
        "(DESIGN §6; vLLM's xlam returns no content here)"
    ),
)
case(
    "llama-plain-answer",
    "The capital of France is Paris.",
    tokenizer=LLAMA,
    kind="template",
    source=(
        "vLLM's examples/tool_chat_template_xlam_llama.jinja (vLLM 0.33.0 sdist): an assistant "
        "turn without tool_calls is its content, trimmed"
    ),
    content="The capital of France is Paris.",
    calls=[],
)

# ---- wild: outputs quoted in public issues --------------------------------------------------

SEATTLE = {"city": "Seattle", "state": "WA", "unit": "celsius"}
case(
    "wild-vllm-51697-single-call",
    '[{"name": "get_current_weather", "arguments": '
    '{"city": "Seattle", "state": "WA", "unit": "celsius"}}]',
    tokenizer=LLAMA,
    kind="wild",
    source="https://github.com/vllm-project/vllm/issues/51697",
    content=None,
    calls=[("get_current_weather", SEATTLE)],
    notes=(
        "the model output quoted in the issue (vLLM's xlam streamed these arguments twice); "
        "the issue does not name the model or its tokenizer, so it is tokenized as Llama-xLAM"
    ),
)

# ---- constructed: defects, truncation, requests ---------------------------------------------

case(
    "leading-whitespace",
    "\n " + llama_turn([("get_time", {"timezone": "UTC"})]),
    tokenizer=LLAMA,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes="blanks before the list are framing: the list still stands at the message's start",
)
case(
    "text-after-the-list",
    llama_turn([("get_time", {"timezone": "UTC"})]) + "\nI asked for the time in UTC.",
    tokenizer=LLAMA,
    content="I asked for the time in UTC.",
    calls=[("get_time", {"timezone": "UTC"})],
    notes="text after the list is content (trailing-text)",
)
case(
    "list-after-content-is-content",
    "Sure, here you go: " + qwen_turn([("get_time", {"timezone": "UTC"})]),
    tokenizer=QWEN,
    content='Sure, here you go: [{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
    calls=[],
    notes="the format's calls stand at the message's start; a list after text is content",
)
case(
    "undeclared-name",
    qwen_turn([("delete_everything", {"confirm": True})]),
    tokenizer=QWEN,
    content=None,
    calls=[("delete_everything", {"confirm": True})],
    notes="names are kept as the model wrote them, declared or not (DESIGN §6)",
)
case(
    "wrong-separator-between-calls",
    '[{"name": "get_time", "arguments": {"timezone": "UTC"}}; '
    '{"name": "get_time", "arguments": {"timezone": "CET"}}]',
    tokenizer=LLAMA,
    content='; {"name": "get_time", "arguments": {"timezone": "CET"}}]',
    calls=[("get_time", {"timezone": "UTC"})],
    notes=(
        "';' is no JSON list separator: the list breaks off after the first call, which "
        "stays a call; the rest of the region is content, verbatim (trailing-text)"
    ),
)
case(
    "malformed-arguments",
    '[{"name": "search", "arguments": {"query": "x", "top_k": }}, '
    '{"name": "get_time", "arguments": {"timezone": "CET"}}]',
    tokenizer=QWEN,
    content=None,
    calls=[("search", '{"query": "x", "top_k": }'), ("get_time", {"timezone": "CET"})],
    notes="calls are independent: the first keeps its malformed arguments as written",
)
case(
    "empty-arguments-then-call",
    llama_turn([("get_time", {}), ("get_current_weather", BOSTON)]),
    tokenizer=LLAMA,
    content=None,
    calls=[("get_time", {}), ("get_current_weather", BOSTON)],
    notes=(
        "a call with empty arguments before another: the second keeps its own arguments "
        "(vLLM's xlam streamed {} for it: https://github.com/vllm-project/vllm/issues/47901)"
    ),
)
case(
    "truncated-after-opening-bracket",
    "[",
    tokenizer=LLAMA,
    content="[",
    calls=[],
    finish_reason="length",
    notes="no name yet: the region is content, verbatim",
)
case(
    "truncated-in-name",
    '[{"name": "get_cur',
    tokenizer=QWEN,
    content='[{"name": "get_cur',
    calls=[],
    finish_reason="length",
    notes="the name never closes: no call, the text is content, verbatim",
)
case(
    "truncated-after-name",
    '[{"name": "get_current_weather", "argu',
    tokenizer=LLAMA,
    content='"argu',
    calls=[("get_current_weather", "")],
    finish_reason="length",
    notes=(
        "the call is committed when its name closes; no arguments had been emitted when the "
        "output ended (truncated), and the member the end cut is content from its key on "
        "(the hf engine's README, trailing-text)"
    ),
)
case(
    "truncated-in-arguments",
    '[{"name": "write_file", "arguments": {"path": "notes.md", "content": "# Title\\n\\nFirst li',
    tokenizer=QWEN,
    content=None,
    calls=[("write_file", '{"path": "notes.md", "content": "# Title\\n\\nFirst li')],
    finish_reason="length",
    notes="the arguments the stream had emitted, not healed (DESIGN §6)",
)
case(
    "truncated-between-calls",
    '[{"name": "get_time", "arguments": {"timezone": "UTC"}}, {"na',
    tokenizer=LLAMA,
    content='{"na',
    calls=[("get_time", {"timezone": "UTC"})],
    finish_reason="length",
    notes=(
        "the first call is complete; the second never gives a name, so its text is content, "
        "verbatim (calls are independent)"
    ),
)
case(
    "list-without-closing-bracket",
    '[{"name": "get_time", "arguments": {"timezone": "UTC"}}',
    tokenizer=QWEN,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes="the call's body is complete and the list never closes: the call stands",
)
case(
    "tool-choice-none",
    qwen_turn([("get_current_weather", BOSTON)]),
    tokenizer=QWEN,
    tool_choice="none",
    content='[{"name": "get_current_weather", "arguments": '
    '{"location": "Boston, MA", "unit": "fahrenheit"}}]',
    calls=[],
    notes="tool_choice none: the whole output is content, markup included (DESIGN §6)",
)


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    tokenizer, slug = entry["tokenizer"], entry["slug"]
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
    problems = validate_case_data(data)
    if problems:
        raise problems[0]
    return ROOT / PARSER / tokenizer / f"{slug}.json", data


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label=PARSER)


if __name__ == "__main__":
    raise SystemExit(main())
