"""Write the conformance corpus of the ``hf`` parser (the checkpoint's response_template).

    python conformance/corpus/hf.py            # (re)write every case file
    python conformance/corpus/hf.py --check    # fail if a file differs from what it would write

Every case carries the template it is parsed with (``response_template.template``) and,
where the chat template prefills part of the message, the end of the rendered prompt
(``response_template.prompt``). The templates, from
``toolcall_hf_response_template/templates/``:

* ``hermes``: the Qwen2.5 / Qwen3 / Hermes JSON format, ``<tool_call>{"name", "arguments"}
  </tool_call>``, with ``<think>`` reasoning; on the Qwen2.5 tokenizer (``<tool_call>`` and
  ``</tool_call>`` are added tokens; ``<think>`` is text there, as it is not one of Qwen2.5's
  added tokens); ``template`` cases are the Qwen2.5 chat template's rendering
  (:func:`hermes.qwen25_turn`, from the Hermes corpus script);
* ``qwen3_coder``: the Qwen3-Coder XML format, ``<tool_call>\\n<function=NAME>\\n
  <parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``, values typed by the
  tool's schema; on the Qwen2.5 tokenizer (Qwen3-Coder's own added tokens are not available
  offline); constructed cases in that format;
* ``glm``: GLM-4.5/4.6/4.7 ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>
  </tool_call>``, with ``<think>`` reasoning; on the GLM-4.5 tokenizer; ``template`` cases are
  the GLM-4.6 chat template's rendering (:func:`glm.glm46_turn`, from the GLM corpus script);
* ``llama3_json`` (on the Llama 3.1 tokenizer) and ``mistral_v11`` (on the v11 tekken
  tokenizer): a closer inside a JSON string of the arguments;
* ``mistral`` (before v11: ``[TOOL_CALLS][{...}]``, the opener may repeat) on the Mistral v3
  and tekken tokenizers, and ``mistral_v11`` (``[TOOL_CALLS]NAME[ARGS]{...}``) on the v11
  tekken tokenizer: how a pattern delimiter is matched (a longer match of the opener wins
  however the text is cut; a pattern's literal text alone in content is content);

and ``CALL_COLON``, written here in the style of Gemma 4's ``call:NAME{...}`` (on the Qwen2.5
tokenizer): a name capture that the opener's pattern cuts short.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6,
plugins/hf_response_template/README.md) and the template, never from a parser's output.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from toolcall import Registry
from toolcall_conformance.builder import (
    Place,
    at,
    build_case,
    build_case_under_grammar,
    strict_tool,
    write_corpus,
)
from toolcall_conformance.cases import validate_case_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[0] / "src" / "toolcall_conformance" / "cases"
TEMPLATES = (
    HERE.parents[1] / "plugins" / "hf_response_template" / "src" / "toolcall_hf_response_template"
) / "templates"
PARSER = "hf"
QWEN = "qwen2.5"
GLM = "glm4.5"
MISTRAL_V3 = "mistral-v3"
TEKKEN = "mistral-tekken"
TEKKEN_V11 = "mistral-tekken-v11"


def _script(name: str) -> ModuleType:
    """A sibling corpus script, for its tools and its renderings of the chat templates."""
    spec = importlib.util.spec_from_file_location(f"_corpus_{name}", HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hermes = _script("hermes")
glm = _script("glm")


def template(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TEMPLATES / f"{name}.json").read_text(encoding="utf-8"))
    return data


HERMES = template("hermes")
CODER = template("qwen3_coder")
GLM_TEMPLATE = template("glm")
LLAMA3_JSON = template("llama3_json")
MISTRAL = template("mistral")
MISTRAL_V11 = template("mistral_v11")

CONSTRUCTED = "written by hand for the hf parsing policy (plugins/hf_response_template/README.md)"
CODER_FORMAT = (
    "constructed in the Qwen3-Coder XML tool-call format (<tool_call>\\n<function=NAME>\\n, per "
    "argument <parameter=KEY>\\nVALUE\\n</parameter>\\n with a string verbatim and any other "
    "value as JSON, then </function>\\n</tool_call>)"
)
QWEN_MODEL = "Qwen/Qwen3-8B (Qwen2.5 tokenizer)"
CODER_MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct (Qwen2.5 tokenizer)"
GLM_MODEL = "zai-org/GLM-4.6"

WEATHER, TIME, SEARCH, WRITE, EVENT = (
    hermes.WEATHER,
    hermes.TIME,
    hermes.SEARCH,
    hermes.WRITE,
    hermes.EVENT,
)
ALL = [WEATHER, TIME, SEARCH, WRITE, EVENT]
BOSTON = {"location": "Boston, MA", "unit": "fahrenheit"}
TOKYO: list[tuple[str, dict[str, Any]]] = [
    ("get_current_weather", {"location": "Tokyo"}),
    ("get_time", {"timezone": "Asia/Tokyo"}),
]

CASES: list[dict[str, Any]] = []


def case(
    slug: str,
    text: str,
    *,
    template: Mapping[str, Any],
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    reasoning: str | None = None,
    prompt: str | None = None,
    tokenizer: str = QWEN,
    tools: list[dict[str, Any]] | None = None,
    kind: str = "constructed",
    source: str = CONSTRUCTED,
    model: str = QWEN_MODEL,
    notes: str = "",
    recoveries: tuple[str, ...] = (),
    grammar: str | None = None,
    refusal: tuple[Place, str] | None = None,
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
    constrained: bool = False,
) -> None:
    request: dict[str, Any] = {"tools": tools if tools is not None else ALL}
    request["tool_choice"] = tool_choice
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    provenance: dict[str, Any] = {"kind": kind, "source": source, "model": model}
    if notes:
        provenance["notes"] = notes
    expected: dict[str, Any] = {
        "content": content,
        "reasoning": reasoning,
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
    }
    if recoveries:
        expected["recoveries"] = list(recoveries)
    if grammar is not None:
        expected["grammar"] = grammar
    if refusal is not None:
        place, reason = refusal
        expected["grammar_refusal"] = {"offset": place(text), "reason": reason}
    response_template: dict[str, Any] = {"template": dict(template)}
    if prompt is not None:
        response_template["prompt"] = prompt
    CASES.append(
        {
            "slug": slug,
            "tokenizer": tokenizer,
            "text": text,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
            "response_template": response_template,
            "constrained": constrained,
        }
    )


def call(name: str, arguments: Mapping[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


# ---- hermes: the Qwen2.5 chat template's rendering -----------------------------------------

QWEN25 = {"kind": "template", "source": hermes.QWEN25_TEMPLATE, "template": HERMES}

case(
    "hermes-template-single-call",
    hermes.qwen25_turn("", [("get_current_weather", BOSTON)]),
    content=None,
    calls=[("get_current_weather", BOSTON)],
    grammar="accept",
    **QWEN25,
)
case(
    "hermes-template-content-and-call",
    hermes.qwen25_turn(
        "I'll check the weather in Paris.",
        [("get_current_weather", {"location": "Paris, France", "unit": "celsius"})],
    ),
    content="I'll check the weather in Paris.",
    calls=[("get_current_weather", {"location": "Paris, France", "unit": "celsius"})],
    grammar="accept",
    **QWEN25,
)
case(
    "hermes-template-parallel-calls",
    hermes.qwen25_turn(
        "",
        [("get_current_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    ),
    content=None,
    calls=[
        ("get_current_weather", {"location": "Tokyo"}),
        ("get_time", {"timezone": "Asia/Tokyo"}),
    ],
    grammar="accept",
    **QWEN25,
)
case(
    "hermes-template-unicode-and-escapes",
    hermes.qwen25_turn(
        "", [("write_file", {"path": "東京/メモ.txt", "content": 'tab\there "quoted" 🗼'})]
    ),
    content=None,
    calls=[("write_file", {"path": "東京/メモ.txt", "content": 'tab\there "quoted" 🗼'})],
    grammar="accept",
    **QWEN25,
)

# ---- hermes: reasoning, and the prompt's prefill -------------------------------------------

case(
    "hermes-reasoning-then-call",
    "<think>\nThe user wants the weather in Boston; one call will do.\n</think>\n\n"
    + hermes.qwen25_turn("", [("get_current_weather", BOSTON)]),
    template=HERMES,
    reasoning="The user wants the weather in Boston; one call will do.",
    content=None,
    calls=[("get_current_weather", BOSTON)],
    grammar="accept",
    notes="the thinking field is reasoning; the blank lines after </think> are framing",
)
case(
    "hermes-prefilled-think",
    "No tool is needed for this.\n</think>\n\nThe capital of France is Paris.",
    template=HERMES,
    prompt="<|im_start|>assistant\n<think>\n",
    reasoning="No tool is needed for this.",
    content="The capital of France is Paris.",
    calls=[],
    grammar="accept",
    notes=(
        "the prompt ends inside <think> (a chat template that opens the reasoning): the output "
        "starts as reasoning and </think> closes it; the grammar starts inside the reasoning"
    ),
)
case(
    "hermes-thinking-off-prompt",
    hermes.qwen25_turn("", [("get_time", {"timezone": "Europe/Paris"})]),
    template=HERMES,
    prompt="<|im_start|>assistant\n<think>\n\n</think>\n\n",
    reasoning=None,
    content=None,
    calls=[("get_time", {"timezone": "Europe/Paris"})],
    grammar="accept",
    notes="Qwen3 with enable_thinking false: the prompt writes an empty reasoning block",
)
case(
    "hermes-arguments-first",
    hermes.vllm_hermes_turn([("get_current_weather", BOSTON)]),
    template=HERMES,
    kind="template",
    source=hermes.VLLM_HERMES_TEMPLATE,
    model="NousResearch/Hermes-2-Pro-Llama-3-8B (Qwen2.5 tokenizer)",
    content=None,
    calls=[("get_current_weather", BOSTON)],
    grammar="accept",
    notes="the call is committed when the name string closes, after the arguments",
)

# ---- hermes: defects ---------------------------------------------------------------------

case(
    "hermes-region-without-a-name",
    'Checking. <tool_call>\n{"tool": "get_time"}\n</tool_call>',
    template=HERMES,
    content='Checking. <tool_call>\n{"tool": "get_time"}\n</tool_call>',
    calls=[],
    notes="no name at content.name: the region is content, verbatim with its markup",
)
case(
    "hermes-name-lone-surrogate-escape",
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n'
    '<tool_call>\n{"name": "\\ud800", "arguments": {}}\n</tool_call>',
    template=HERMES,
    content='<tool_call>\n{"name": "\\ud800", "arguments": {}}\n</tool_call>',
    calls=[("get_time", {})],
    notes="a name UTF-8 cannot write (a lone surrogate escape) is no readable name: that "
    "region gives no call and is content, verbatim with its markup; the call before it stands",
)
case(
    "hermes-name-surrogate-pair-escape",
    '<tool_call>\n{"name": "get_time\\ud83d\\udd50", "arguments": {}}\n</tool_call>',
    template=HERMES,
    content=None,
    calls=[("get_time\N{CLOCK FACE ONE OCLOCK}", {})],
    notes="a surrogate pair escape is one character of the name, kept as the model wrote it",
)
case(
    "hermes-truncated",
    '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Bost',
    template=HERMES,
    content=None,
    calls=[("get_current_weather", '{"location": "Bost')],
    finish_reason="length",
    notes="cut off inside the arguments: they are exactly what was emitted",
)
case(
    "hermes-malformed-arguments",
    '<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Paris",}}\n'
    "</tool_call>",
    template=HERMES,
    content=None,
    calls=[("get_current_weather", '{"location": "Paris",}')],
    grammar="reject",
    refusal=(
        at('"Paris",}', 8),
        "after a comma only the one declared property left ('unit') may come, not '}'",
    ),
    notes="a trailing comma: the call stands with the model's text (malformed-arguments)",
)
case(
    "hermes-trailing-text",
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}} (that is all)\n'
    "</tool_call>",
    template=HERMES,
    content="(that is all)",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="reject",
    refusal=(at("(that"), "after the call object only blanks and </tool_call> may come"),
    notes="text after the call's value inside its region is content (trailing-text)",
)
case(
    "hermes-missing-end",
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n',
    template=HERMES,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
    notes="the output ends after a complete call without </tool_call>",
)
case(
    "hermes-closer-inside-a-string",
    '<tool_call>\n{"name": "write_file", "arguments": {"path": "notes.md", "content": '
    '"Wrap it in </tool_call> and stop."}}\n</tool_call>',
    template=HERMES,
    content=None,
    calls=[("write_file", {"path": "notes.md", "content": "Wrap it in </tool_call> and stop."})],
    notes=(
        "inside a JSON string of the call object the closer is string text (as the hermes "
        "family reads it): the region ends at the closer after the object"
    ),
)
case(
    "hermes-string-never-closes",
    '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.md", "content": "Done.'
    "</tool_call>",
    template=HERMES,
    content=None,
    calls=[("write_file", '{"path": "a.md", "content": "Done.</tool_call>')],
    notes=(
        "a closer inside an open JSON string is string text, never the closer, so the string "
        "runs to the end of output: the call keeps the model's argument text so far, not "
        "closed (truncated), as the hermes family reads it"
    ),
)

# ---- hermes: reasoning the prompt began ---------------------------------------------------

case(
    "hermes-prefilled-reasoning-continues",
    " no tool is needed.\n</think>\n\nThe capital of France is Paris.",
    template=HERMES,
    prompt="<|im_start|>assistant\n<think>\nThe user asks for the capital of France;",
    reasoning=" no tool is needed.",
    content="The capital of France is Paris.",
    calls=[],
    notes=(
        "the prompt ends inside <think> after some reasoning: strip trims the region's text as "
        "a whole, so the output's leading space is inside it (only the prompt's newline is at "
        "its start), and the reasoning is what the output wrote"
    ),
)

# ---- hermes: requests --------------------------------------------------------------------

case(
    "hermes-tool-choice-none",
    "<think>\nThe user said not to call tools.\n</think>\n\n"
    + hermes.qwen25_turn("Sure.", [("get_time", {"timezone": "UTC"})]),
    template=HERMES,
    tool_choice="none",
    reasoning="The user said not to call tools.",
    content=(
        'Sure.\n<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>'
    ),
    calls=[],
    notes='tool_choice "none": the call is content with its markup; reasoning stays reasoning',
)
case(
    "hermes-required",
    hermes.qwen25_turn("", [("search", {"query": "vLLM tool calling", "top_k": 3})]),
    template=HERMES,
    tool_choice="required",
    content=None,
    calls=[("search", {"query": "vLLM tool calling", "top_k": 3})],
    grammar="accept",
)
case(
    "hermes-named",
    hermes.qwen25_turn("", [("get_time", {"timezone": "Asia/Tokyo"})]),
    template=HERMES,
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    content=None,
    calls=[("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
)
case(
    "hermes-not-parallel",
    hermes.qwen25_turn("", [("get_current_weather", {"location": "Oslo"})]),
    template=HERMES,
    parallel_tool_calls=False,
    content=None,
    calls=[("get_current_weather", {"location": "Oslo"})],
    grammar="accept",
)
case(
    "hermes-schema-violation",
    hermes.qwen25_turn("", [("search", {"query": "weather", "top_k": "three"})]),
    template=HERMES,
    content=None,
    calls=[("search", {"query": "weather", "top_k": "three"})],
    grammar="reject",
    refusal=(at('"three"'), "top_k is an integer: a string cannot start here"),
    notes="the parse keeps the model's arguments; a pinned schema (top_k integer) refuses them",
)

# ---- qwen3_coder: the XML format -----------------------------------------------------------


def coder_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def coder_call(name: str, arguments: Mapping[str, object]) -> str:
    body = "".join(
        f"<parameter={key}>\n{coder_value(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


CODER_CASE = {"template": CODER, "source": CODER_FORMAT, "model": CODER_MODEL}

case(
    "qwen3-coder-single-call",
    coder_call("get_current_weather", BOSTON),
    content=None,
    calls=[("get_current_weather", BOSTON)],
    grammar="accept",
    **CODER_CASE,
)
case(
    "qwen3-coder-content-and-parallel-calls",
    "Let me look both up.\n\n"
    + coder_call("get_current_weather", {"location": "Lima"})
    + "\n"
    + coder_call("get_time", {"timezone": "America/Lima"}),
    content="Let me look both up.",
    calls=[
        ("get_current_weather", {"location": "Lima"}),
        ("get_time", {"timezone": "America/Lima"}),
    ],
    grammar="accept",
    **CODER_CASE,
)
case(
    "qwen3-coder-typed-values",
    coder_call(
        "create_event",
        {
            "title": "Standup 42",
            "attendees": ["ana", "bo"],
            "when": {"date": "2026-12-03", "hour": 9},
            "reminder": True,
        },
    ),
    content=None,
    calls=[
        (
            "create_event",
            {
                "title": "Standup 42",
                "attendees": ["ana", "bo"],
                "when": {"date": "2026-12-03", "hour": 9},
                "reminder": True,
            },
        )
    ],
    grammar="accept",
    notes="values are typed by the tool's schema: string verbatim, array/object/boolean as JSON",
    **CODER_CASE,
)
case(
    "qwen3-coder-string-that-looks-like-a-number",
    coder_call("search", {"query": "42", "top_k": 5}),
    content=None,
    calls=[("search", {"query": "42", "top_k": 5})],
    grammar="accept",
    notes="query is declared a string: the text 42 stays the string '42'; top_k is an integer",
    **CODER_CASE,
)
case(
    "qwen3-coder-no-arguments",
    coder_call("get_time", {}),
    content=None,
    calls=[("get_time", {})],
    grammar="accept",
    **CODER_CASE,
)
case(
    "qwen3-coder-undeclared-tool",
    coder_call("lookup_stock", {"symbol": "ACME", "days": "30"}),
    content=None,
    calls=[("lookup_stock", {"symbol": "ACME", "days": "30"})],
    grammar="reject",
    refusal=(at("lookup_stock"), "no declared tool's name starts with 'l'"),
    notes=(
        "a name no declared tool has is kept; its values are not typed (strings), and the "
        "grammar, which allows only declared tools, refuses it"
    ),
    **CODER_CASE,
)
case(
    "qwen3-coder-value-never-ends",
    "<tool_call>\n<function=get_current_weather>\n<parameter=location>\nParis\n</parameter>\n"
    "<parameter=unit>\ncelsius\n</tool_call>",
    content="celsius",
    calls=[("get_current_weather", '{"location": "Paris", "unit": ')],
    notes=(
        "the closer arrives inside a parameter: the arguments are what was emitted (the key "
        "is emitted with its tag's head; malformed-arguments) and the value, never emitted, "
        "is content, verbatim"
    ),
    **CODER_CASE,
)
case(
    "qwen3-coder-truncated",
    "<tool_call>\n<function=get_current_weather>\n<parameter=location>\nParis\n</parameter>\n"
    "<parameter=unit>\ncels",
    content="cels",
    calls=[("get_current_weather", '{"location": "Paris", "unit": ')],
    finish_reason="length",
    notes=(
        "cut off inside a value: the arguments are what was emitted (a key with its tag's "
        "head, a value when it ends), and the text not emitted is content, verbatim"
    ),
    **CODER_CASE,
)

case(
    "qwen3-coder-stray-closer",
    "The call ends at </tool_call>, after </function>.",
    content="The call ends at </tool_call>, after </function>.",
    calls=[],
    notes=(
        "the closer pattern's text alone in content (its optional </function> too) is content, "
        "verbatim: nothing opened a region (unparsed-markup)"
    ),
    **CODER_CASE,
)

# ---- glm: the GLM-4.6 chat template's rendering, and GLM-4.7's compact framing -------------

GLM_CASE = {"template": GLM_TEMPLATE, "tokenizer": GLM, "model": GLM_MODEL}
GLM46 = {**GLM_CASE, "kind": "template", "source": glm.GLM46_TEMPLATE}

case(
    "glm-template-single-call",
    glm.glm46_turn("", [("get_weather", {"city": "Beijing", "days": 3})]),
    tools=[glm.WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Beijing", "days": 3})],
    grammar="accept",
    **GLM46,
)
case(
    "glm-template-content-and-parallel-calls",
    glm.glm46_turn(
        "I'll check both cities.",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome", "unit": "celsius"})],
    ),
    tools=[glm.WEATHER],
    content="I'll check both cities.",
    calls=[
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome", "unit": "celsius"}),
    ],
    grammar="accept",
    **GLM46,
)
case(
    "glm47-compact-with-reasoning",
    "<think>Two lookups are needed.</think>"
    + glm.glm47_call("get_weather", {"city": "Oslo", "days": 1})
    + glm.glm47_call("get_current_time", {}),
    tools=[glm.WEATHER, glm.CURRENT_TIME],
    reasoning="Two lookups are needed.",
    content=None,
    calls=[("get_weather", {"city": "Oslo", "days": 1}), ("get_current_time", {})],
    grammar="accept",
    source="constructed in the GLM-4.7 framing (no newlines; vLLM's glm47_moe docstring)",
    notes="GLM-4.7 writes the call without newlines; reasoning first",
    **GLM_CASE,
)
case(
    "glm-no-name-is-not-a-region",
    "See <tool_call>\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    tools=[glm.WEATHER],
    content="See <tool_call>\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    calls=[],
    notes=(
        "the opener requires a name after <tool_call>: without one nothing opens, and the "
        "text is content, verbatim"
    ),
    **GLM_CASE,
)


# ---- other json templates: a closer inside a string -----------------------------------------

case(
    "llama3-json-separator-inside-a-string",
    '{"name": "search", "parameters": {"query": "ls; pwd", "top_k": 2}}; '
    '{"name": "get_time", "parameters": {"timezone": "UTC"}}',
    template=LLAMA3_JSON,
    tokenizer="llama3.1",
    model="meta-llama/Llama-3.1-8B-Instruct",
    content=None,
    calls=[("search", {"query": "ls; pwd", "top_k": 2}), ("get_time", {"timezone": "UTC"})],
    notes=(
        "the llama3_json template: a call ends at ';' and the next opens after it; the ';' "
        "inside the query string is string text, so the first call ends at the one after its "
        "object (the last call ends with the output: the closer may be a look-ahead)"
    ),
)
case(
    "mistral-v11-opener-inside-a-string",
    '[TOOL_CALLS]write_file[ARGS]{"path": "a.md", "content": "then [TOOL_CALLS]get_time"}'
    '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}',
    template=MISTRAL_V11,
    tokenizer="mistral-tekken-v11",
    model="mistralai/Mistral-Small-3.2-24B-Instruct-2506",
    content=None,
    calls=[
        ("write_file", {"path": "a.md", "content": "then [TOOL_CALLS]get_time"}),
        ("get_time", {"timezone": "UTC"}),
    ],
    notes=(
        "the mistral_v11 template: a call ends where the next [TOOL_CALLS] starts (a "
        "look-ahead closer), but not inside a JSON string of its arguments"
    ),
)

# ---- a name capture the opener's pattern cuts short ----------------------------------------

CALL_COLON = {
    "version": 1,
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": "<tool_call>call:(?P<name>\\w+)",
            "close": "</tool_call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        }
    },
}

case(
    "capture-cuts-a-name-short",
    '<tool_call>call:get-time{"timezone": "UTC"}</tool_call>\n'
    '<tool_call>call:get_time{"timezone": "UTC"}</tool_call>',
    template=CALL_COLON,
    content='<tool_call>call:get-time{"timezone": "UTC"}</tool_call>',
    calls=[("get_time", {"timezone": "UTC"})],
    source=(
        "written by hand for the hf parsing policy (plugins/hf_response_template/README.md), "
        "with a template in the style of Gemma 4's (<|tool_call>call:NAME{...}, the name "
        "captured by \\w+), on Qwen2.5's tokens"
    ),
    model="none: a template in the style of Gemma 4's (Qwen2.5 tokenizer)",
    notes=(
        "the capture \\w+ stops at '-', a character a tool name is made of, where the opener's "
        "match ends: the pattern cut the name short, so the first region gives no name and is "
        "content, verbatim (no call named 'get'); the second is a call"
    ),
)


# ---- mistral and mistral_v11: pattern delimiters -------------------------------------------

MISTRAL_FORMAT = (
    "constructed in the Mistral tool-call format before v11 ('[TOOL_CALLS]' and a JSON list of "
    "{name, arguments}; plugins/mistral/README.md)"
)
V11_FORMAT = (
    "constructed in the v11+ Mistral tool-call format ('[TOOL_CALLS]NAME[ARGS]{...}'; "
    "plugins/mistral/README.md)"
)

case(
    "mistral-repeated-opener",
    '[TOOL_CALLS][TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
    template=MISTRAL,
    tokenizer=TEKKEN,
    model="mistralai/Mistral-Nemo-Instruct-2407",
    source=MISTRAL_FORMAT,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes=(
        "the opener pattern repeats ((?:\\[TOOL_CALLS\\])*): both markers are the opener, "
        "however the text is cut (a cut inside the second must not settle the first alone)"
    ),
)
case(
    "mistral-content-then-repeated-opener",
    "Let me check. "
    '[TOOL_CALLS][TOOL_CALLS][{"name": "get_current_weather", "arguments": '
    '{"location": "Oslo"}}]',
    template=MISTRAL,
    tokenizer=MISTRAL_V3,
    model="mistralai/Mistral-7B-Instruct-v0.3",
    source=MISTRAL_FORMAT,
    content="Let me check.",
    calls=[("get_current_weather", {"location": "Oslo"})],
    notes="content, then the repeated opener: framing, the blank before it too",
)
case(
    "mistral-v11-stray-args",
    "Write the name, then [ARGS] and the arguments.",
    template=MISTRAL_V11,
    tokenizer=TEKKEN_V11,
    model="mistralai/Mistral-Small-3.2-24B-Instruct-2506",
    source=V11_FORMAT,
    content="Write the name, then [ARGS] and the arguments.",
    calls=[],
    notes=(
        "[ARGS], literal text of the opener pattern, alone in content: no [TOOL_CALLS] opened "
        "a call, so it is content, verbatim (unparsed-markup)"
    ),
)


# ---- generated under the grammar (request.constrained) -------------------------------------
#
# The text is each template's format (a chat template's rendering where the corpus has one);
# the token ids are what the hf parser's structural tag for that response template and the
# request's plan (at its own strict level) let through, one seeded choice per step
# (toolcall_conformance.constrained). The seed is the case id. A tool marked ``strict: true``
# puts ``auto`` under the grammar with that tool's schema pinned.

STRICT_WEATHER = strict_tool(WEATHER)
case(
    "hermes-constrained-auto-strict-tool",
    hermes.qwen25_turn(
        "Checking.", [("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})]
    ),
    tools=[STRICT_WEATHER, TIME],
    content="Checking.",
    calls=[("get_current_weather", {"location": "東京都 🗼", "unit": "celsius"})],
    grammar="accept",
    constrained=True,
    **QWEN25,
)
case(
    "hermes-constrained-required-two-calls",
    hermes.qwen25_turn("", TOKYO),
    tool_choice="required",
    content=None,
    calls=list(TOKYO),
    grammar="accept",
    constrained=True,
    **QWEN25,
)
case(
    "glm-constrained-named-call",
    glm.glm46_turn("", [("get_weather", {"city": "Beijing", "days": 3})]),
    tools=[glm.WEATHER, glm.CURRENT_TIME],
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
    content=None,
    calls=[("get_weather", {"city": "Beijing", "days": 3})],
    grammar="accept",
    constrained=True,
    **GLM46,
)
case(
    "qwen3-coder-constrained-single-call-not-parallel",
    coder_call("write_file", {"path": "a.md", "content": "<tool_call>\n<function=x>"}),
    tool_choice="required",
    parallel_tool_calls=False,
    content=None,
    calls=[("write_file", {"path": "a.md", "content": "<tool_call>\n<function=x>"})],
    grammar="accept",
    constrained=True,
    notes="the value holds the opener's text: inside </parameter> it is the value's text",
    **CODER_CASE,
)


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    tokenizer, slug = entry["tokenizer"], entry["slug"]
    common: dict[str, Any] = {
        "tokenizer": tokenizer,
        "text": entry["text"],
        "request": entry["request"],
        "provenance": entry["provenance"],
        "expected": entry["expected"],
        "case_id": f"{PARSER}/{tokenizer}/{slug}",
    }
    if entry["constrained"]:
        data = build_case_under_grammar(
            Registry.load().get(PARSER),
            seed=common["case_id"],
            response_template=entry["response_template"]["template"],
            **common,
        )
    else:
        data = build_case(parser=PARSER, finish_reason=entry["finish_reason"], **common)
    ordered = {}
    for key, value in data.items():
        ordered[key] = value
        if key == "special_tokens":
            ordered["response_template"] = entry["response_template"]
    problems = validate_case_data(ordered)
    if problems:
        raise problems[0]
    return ROOT / PARSER / tokenizer / f"{slug}.json", ordered


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="hf")


if __name__ == "__main__":
    raise SystemExit(main())
