"""An outside oracle: transformers' own response parser reads every case one-shot.

``transformers.utils.chat_parsing.parse_response`` (transformers from PyPI, the version vLLM
0.33 pins) parses each output with the template as vLLM serves it (an implicit ``content``
field added where every field has an opener), the case's prompt as ``prefix`` and the
request's tools. Ours must agree wherever our policy does not deliberately differ:
reasoning, content (both trimmed), and each call's name and arguments (by JSON value). The
differences are deliberate, listed here by case and in the README:

* **a region transformers cannot read**: transformers raises (vLLM drops the call); ours
  keeps what can be kept (DESIGN §6: the call with its malformed arguments, or the region as
  content) and records the defect;
* **an unfinished tag** (``xml-inline``): transformers drops it silently and keeps the other
  arguments as complete; ours ends the arguments there (``malformed-arguments``, or
  ``truncated`` at the end of output) and returns the unfinished tag as content;
* **a field without** ``repeats``: transformers keeps only its last region (the blank
  between two calls, an implicit ``content`` region of its own, replaces the text before the
  calls); ours keeps the text of every region, as vLLM streams it;
* ``tool_choice: "none"``: transformers has no tool choice; ours returns calls as content;
* **a closer inside a JSON string**: transformers ends the region there and cannot read it;
  ours reads the string whole (the closer is string text) and the call with it;
* **a region the prompt began**: transformers' value holds the prompt's part of it too;
  ours holds what the output wrote (the prompt is not output): with the prompt's part
  before it, the two agree.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hf_testing import parser, shipped, with_field
from transformers.utils.chat_parsing import parse_response

from toolcall import EventName, Parsed
from toolcall_conformance.cases import Case, load_cases, shipped_case_dirs
from toolcall_conformance.checks import build_parser
from toolcall_hf_response_template import HfParser

CASES, _ = load_cases(shipped_case_dirs("hf"))
DEFECTS = {
    EventName.MALFORMED_ARGUMENTS,
    EventName.TRUNCATED,
    EventName.TRAILING_TEXT,
    EventName.UNPARSED_MARKUP,
}
#: Cases where our policy differs on purpose (see the module), and why.
DIFFERENT = {
    "hf/qwen2.5/hermes-closer-inside-a-string": "a closer inside a JSON string",
    "hf/llama3.1/llama3-json-separator-inside-a-string": "a closer inside a JSON string",
    "hf/mistral-tekken-v11/mistral-v11-opener-inside-a-string": "a closer inside a JSON string",
    "hf/qwen2.5/hermes-string-never-closes": "a region transformers cannot read",
    "hf/qwen2.5/capture-cuts-a-name-short": "a region transformers cannot read",
    "hf/qwen2.5/hermes-prefilled-reasoning-continues": "a region the prompt began",
    "hf/qwen2.5/hermes-malformed-arguments": "a region transformers cannot read",
    "hf/qwen2.5/hermes-region-without-a-name": "a region transformers cannot read",
    "hf/qwen2.5/hermes-trailing-text": "a region transformers cannot read",
    "hf/qwen2.5/hermes-truncated": "a region transformers cannot read",
    "hf/qwen2.5/qwen3-coder-truncated": "an unfinished tag",
    "hf/qwen2.5/qwen3-coder-value-never-ends": "an unfinished tag",
    "hf/qwen2.5/hermes-tool-choice-none": 'tool_choice "none"',
    "hf/qwen2.5/hermes-name-lone-surrogate-escape": "a name UTF-8 cannot write",
    "hf/glm4.5/glm-template-content-and-parallel-calls": "a field without repeats",
    "hf/qwen2.5/qwen3-coder-content-and-parallel-calls": "a field without repeats",
}


def serving(template: dict[str, Any]) -> dict[str, Any]:
    """The template as vLLM serves it (``_streaming_template``)."""
    data = copy.deepcopy(template)
    fields = data["fields"]
    if "content" not in fields and all("open" in f or "open_pattern" in f for f in fields.values()):
        fields["content"] = {}
    return data


def oracle(template: dict[str, Any], text: str, prompt: str | None, tools: list[Any]) -> Any:
    return parse_response(text, serving(template), prefix=prompt or "", tools=tools)


def disagreement(theirs: dict[str, Any], ours: Parsed) -> str | None:
    """The first way the two parses differ (trimmed text, arguments by value)."""
    for key, mine in (("thinking", ours.reasoning), ("content", ours.content)):
        want = (theirs.get(key) or "").strip()
        if want != (mine or "").strip():
            return f"{key}: transformers {want!r}, ours {mine!r}"
    regions = theirs.get("tool_calls", [])
    # With repeats and transform_each, each region's value is itself a list of calls.
    flat = [c for r in regions for c in (r if isinstance(r, list) else [r])]
    their_calls = [(call["function"]["name"], call["function"]["arguments"]) for call in flat]
    our_calls = [(call.name, json.loads(call.arguments)) for call in ours.tool_calls]
    if their_calls != our_calls:
        return f"calls: transformers {their_calls}, ours {our_calls}"
    return None


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_transformers_agrees_on_the_corpus(case: Case) -> None:
    assert case.response_template is not None
    ours = build_parser(HfParser, case).parse(case.text)
    why = DIFFERENT.get(case.id)
    if why == 'tool_choice "none"':
        assert ours.tool_calls == ()
        return
    template, tools = dict(case.response_template), case.request["tools"]
    if why == "a region transformers cannot read":
        with pytest.raises((ValueError, KeyError)):
            oracle(template, case.text, case.prompt, tools)
        assert {event.name for event in ours.events} & DEFECTS
        return
    if why == "a closer inside a JSON string":
        with pytest.raises((ValueError, KeyError)):
            oracle(template, case.text, case.prompt, tools)
        assert ours.tool_calls
        assert not {event.name for event in ours.events} & DEFECTS
        return
    if why == "a region the prompt began":
        assert case.prompt is not None
        began = case.prompt.rsplit(template["fields"]["thinking"]["open"], 1)[1]
        theirs = oracle(template, case.text, case.prompt, tools)
        assert theirs["thinking"].strip() == (began + (ours.reasoning or "")).strip()
        assert theirs["thinking"].strip() != (ours.reasoning or "").strip()
        assert disagreement({**theirs, "thinking": ours.reasoning}, ours) is None
        return
    problem = disagreement(oracle(template, case.text, case.prompt, tools), ours)
    if why is None:
        assert problem is None, problem
    else:
        assert problem is not None, f"listed as different ({why}) but agrees"
        if why != "a field without repeats":
            assert {event.name for event in ours.events} & DEFECTS


# -- templates beyond the corpus (formats of other families, written here) -----------------------

GPT_OSS = {
    "start_anchor": "<|start|>assistant",
    "fields": {
        "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
        "tool_calls": {
            "open_pattern": (
                "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+)[^<]*<\\|message\\|>"
            ),
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}
ACTIONS = with_field(
    shipped("hermes"),
    "tool_calls",
    open="<|START_ACTION|>",
    close="<|END_ACTION|>",
    transform={
        "type": "function",
        "function": {"name": "{tool_name}", "arguments": "{parameters}"},
    },
    transform_each=True,
)
DIALECT = {
    "start_anchor": "<turn>model\n",
    "fields": {
        "thinking": {"open": "<thought>", "close": "</thought>"},
        "tool_calls": {
            "open_pattern": "<call:(?P<name>\\w+)>",
            "close": "</call>",
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [["<q>", "</q>"]]},
            "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}
LINES = {
    "start_anchor": "Assistant:",
    "fields": {
        "thinking": {"open_pattern": "(?:^|<think>\\s*)", "close": "</think>"},
        "tool_calls": {
            "open_pattern": "<call (?P<name>\\w+)>",
            "close": "</call>",
            "repeats": True,
            "content": "kv-lines",
            "content_args": {"value_parser": {"name": "json", "args": {"allow_non_json": True}}},
            "transform": {"function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
OUTPUTS = [
    (
        GPT_OSS,
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "SF"}'
        "<|call|>",
    ),
    (
        GPT_OSS,
        "<|channel|>analysis<|message|>2+2<|end|><|start|>assistant<|channel|>final<|message|>4",
    ),
    (
        ACTIONS,
        '<think>Two.</think><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", '
        '"parameters": {"city": "Oslo"}}, {"tool_call_id": "1", "tool_name": "get_weather", '
        '"parameters": {"city": "Rome", "days": 2}}]<|END_ACTION|>',
    ),
    (DIALECT, "<thought>use it</thought><call:get_weather>{city:<q>Paris, FR</q>,days:3}</call>"),
    (LINES, "Plan it.\n</think>\n<call get_weather>\ncity: Lima\ndays: 4\n</call>"),
    (LINES, "Plain reasoning only."),
]


@pytest.mark.parametrize(("template", "text"), OUTPUTS)
def test_transformers_agrees_on_other_formats(template: dict[str, Any], text: str) -> None:
    theirs = oracle(template, text, None, TOOLS)
    ours = parser(template, tools=TOOLS).parse(text)
    assert disagreement(theirs, ours) is None
