"""Write the conformance corpus of ``qwen3_coder`` (toolcall-qwen: Qwen3-Coder's XML format).

    python conformance/corpus/qwen.py            # (re)write every case file
    python conformance/corpus/qwen.py --check    # fail if a file differs from what it would write
    QWEN3_CODER_JINJA=PATH python conformance/corpus/qwen.py --check
        # also render every ``template`` case with that chat template (jinja2, as
        # transformers renders it) and fail where the rendering differs from ours

``qwen3_xml`` is the same template under a second name: its cases are these (counted once).
Run it in an environment where toolcall-qwen is installed (the ``data`` session's venv):
the ``constrained-*`` cases are generated under the structural tag the registered
``qwen3_coder`` parser builds.

The format, from Qwen3-Coder's chat template (Qwen/Qwen3-Coder-480B-A35B-Instruct and
-30B-A3B-Instruct; vLLM ships a copy as examples/tool_chat_template_qwen3coder.jinja in its
0.33.0 sdist): after the generation prompt ``<|im_start|>assistant\\n`` the assistant turn is
the content trimmed and ``\\n``, if there is content, then per call ``\\n<tool_call>\\n
<function=NAME>\\n``, per argument ``<parameter=KEY>\\n`` + the value + ``\\n</parameter>\\n``,
then ``</function>\\n</tool_call>``; the value is ``tojson`` for a mapping or a list and
``string`` otherwise (Python's ``str``: a boolean is ``True``/``False``, null is ``None``).
The tokenizer is ``qwen3`` (Qwen2.5's vocabulary with Qwen3's four added tokens).

Every ``expected`` is written by hand from the parsing policy (DESIGN §6 and
plugins/hf_response_template/README.md, "What the stream emits") and the format, never
from a parser's output.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall import Registry
from toolcall_conformance.builder import (
    Place,
    at,
    build_case,
    build_case_under_grammar,
    expected_parse,
    request_body,
    write_corpus,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[0] / "src" / "toolcall_conformance" / "cases"
PARSER = "qwen3_coder"
TOKENIZER = "qwen3"
MODEL = "Qwen/Qwen3-Coder-30B-A3B-Instruct"


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(parameters)},
    }


SHELL = tool(
    "run_shell_command",
    "Run a shell command",
    {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "workdir": {"type": "string"},
            "timeout": {"type": "integer"},
        },
        "required": ["command"],
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
WEATHER = tool(
    "get_weather",
    "The weather in a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
CONFIGURE = tool(
    "configure",
    "Set build options",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "jobs": {"type": "integer"},
            "ratio": {"type": "number"},
            "flags": {"type": "array", "items": {"type": "string"}},
            "env": {
                "type": "object",
                "properties": {"CC": {"type": "string"}, "level": {"type": "integer"}},
            },
            "verbose": {"type": "boolean"},
            "cache": {"type": ["string", "null"]},
        },
        "required": ["name"],
    },
)
ALL = [SHELL, WRITE, WEATHER, CONFIGURE]

TEMPLATE_SOURCE = (
    "Qwen3-Coder's chat template (chat_template.jinja of Qwen/Qwen3-Coder-30B-A3B-Instruct; "
    "the copy vLLM 0.33.0's sdist ships as examples/tool_chat_template_qwen3coder.jinja), "
    "assistant turn rendered by its rules after the generation prompt: content|trim + '\\n' "
    "if any, per call '\\n<tool_call>\\n<function=' + name + '>\\n', per argument "
    "'<parameter=' + key + '>\\n' + value + '\\n</parameter>\\n' (value: tojson for a mapping "
    "or list, else |string), then '</function>\\n</tool_call>'"
)
CONSTRUCTED = (
    "constructed in Qwen3-Coder's tool-call format for the hf parsing policy "
    "(plugins/hf_response_template/README.md)"
)

CASES: list[dict[str, Any]] = []


def value_text(value: object) -> str:
    """The template's value: ``tojson`` for a mapping or a list, else Jinja's ``string``."""
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def coder_call(name: str, arguments: Mapping[str, object]) -> str:
    body = "".join(
        f"<parameter={key}>\n{value_text(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def coder_turn(content: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """What the model writes after ``<|im_start|>assistant\\n``: the template's turn."""
    head = "\n" + content.strip() + "\n" if content.strip() else ""
    turn = head + "".join("\n" + coder_call(name, arguments) for name, arguments in calls)
    return turn.removeprefix("\n")


def case(
    slug: str,
    text: str,
    *,
    content: str | None,
    calls: list[tuple[str, Mapping[str, Any] | str]],
    tools: list[dict[str, Any]] | None = None,
    kind: str = "constructed",
    source: str = CONSTRUCTED,
    notes: str = "",
    grammar: str | None = None,
    refusal: tuple[Place, str] | None = None,
    recoveries: tuple[str, ...] = (),
    finish_reason: str = "stop",
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
    rendered: tuple[str, list[tuple[str, dict[str, Any]]]] | None = None,
    constrained: bool = False,
    strict_level: str | None = None,
    model: str = MODEL,
) -> None:
    request = request_body(tools if tools is not None else ALL, tool_choice, parallel_tool_calls)
    if strict_level is not None:
        request["strict_level"] = strict_level
    provenance: dict[str, Any] = {"kind": kind, "source": source, "model": model}
    if notes:
        provenance["notes"] = notes
    place = (refusal[0](text), refusal[1]) if refusal is not None else None
    expected = expected_parse(content, calls, recoveries=recoveries, grammar=grammar, refusal=place)
    CASES.append(
        {
            "slug": slug,
            "text": text,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
            "rendered": rendered,
            "constrained": constrained,
        }
    )


def template_case(
    slug: str, content: str, calls: list[tuple[str, dict[str, Any]]], **kw: Any
) -> None:
    expected_calls = kw.pop("expected_calls", calls)
    case(
        slug,
        coder_turn(content, calls),
        content=content.strip() or None,
        calls=expected_calls,
        kind="template",
        source=TEMPLATE_SOURCE,
        rendered=(content, calls),
        **kw,
    )


# ---- renderings of the chat template ------------------------------------------------------

template_case(
    "template-single-call",
    "",
    [("run_shell_command", {"command": "mkdir testing"})],
    grammar="accept",
)
template_case(
    "template-text-before-and-parallel-calls",
    "I'll check both cities.",
    [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome", "unit": "celsius"})],
    grammar="accept",
    notes="the template writes '\\n\\n' after the content and '\\n' between calls: framing",
)
template_case(
    "template-multiline-string-value",
    "",
    [("write_file", {"path": "src/app.py", "content": "def main():\n    print('hi')\n"})],
    grammar="accept",
    notes=(
        "a string is written verbatim between the tag's newlines: its own trailing newline "
        "stays in the value (one newline after the tag head and one before </parameter> are "
        "framing)"
    ),
)
template_case(
    "template-unicode",
    "Je vérifie la météo à 東京 🗼.",
    [("get_weather", {"city": "東京都 🗼"})],
    grammar="accept",
)
template_case(
    "template-json-types",
    "",
    [
        (
            "configure",
            {
                "name": "release 42",
                "jobs": 8,
                "ratio": 0.75,
                "flags": ["-O2", "-g"],
                "env": {"CC": "clang", "level": 3},
            },
        )
    ],
    grammar="accept",
    notes=(
        "typed by the tool's schema: a string verbatim, integer and number as JSON numbers, an "
        "array and an object as the template's tojson"
    ),
)
template_case(
    "template-python-boolean-and-none",
    "",
    [("configure", {"name": "ci", "verbose": True, "cache": None})],
    expected_calls=[("configure", {"name": "ci", "verbose": True, "cache": None})],
    grammar="reject",
    refusal=(at("True"), "a boolean is JSON true or false: the schema forbids 'True'"),
    notes=(
        "the template writes a Python boolean and None with |string: 'True' and 'None'. The "
        "template JSON says so (python_literals), so they read as the declared types do: "
        "'True' fits boolean, 'None' is null where null is a type (string or null, null "
        "first). The pinned grammar writes JSON's true, which reads the same, and refuses "
        "'True'. vLLM 0.33's coercion reads 'True' as true too"
    ),
)

# ---- defects and truncation ----------------------------------------------------------------

PARIS = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"

case(
    "missing-function-close",
    PARIS + "</tool_call>",
    content=None,
    calls=[("get_weather", {"city": "Paris"})],
    notes="the closer's </function> is optional in the template's close pattern",
)
case(
    "undeclared-function",
    "<tool_call>\n<function=lookup_stock>\n<parameter=symbol>\nACME\n</parameter>\n"
    "<parameter=days>\n30\n</parameter>\n</function>\n</tool_call>",
    content=None,
    calls=[("lookup_stock", {"symbol": "ACME", "days": "30"})],
    grammar="reject",
    refusal=(at("lookup_stock"), "no declared tool's name starts with 'l'"),
    notes=(
        "a name no declared tool has is kept as written; its values have no schema and keep "
        "the text the tag gave (strings)"
    ),
)
case(
    "wrong-separator-is-content",
    "<tool_call>\n<function:get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>",
    content=(
        "<tool_call>\n<function:get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    calls=[],
    notes=(
        "'<function:' instead of '<function=': the opener never matches, so nothing opens "
        "and the text is content, verbatim with its markup"
    ),
)
case(
    "truncated-in-opener",
    "Sure.\n\n<tool_call>\n<function=get_wea",
    content="Sure.\n\n<tool_call>\n<function=get_wea",
    calls=[],
    finish_reason="length",
    notes="the output ends before the name's '>': no call was committed; the text is content",
)
case(
    "truncated-after-name",
    "<tool_call>\n<function=get_weather>\n",
    content=None,
    calls=[("get_weather", {})],
    recoveries=("missing-end",),
    finish_reason="length",
    notes=(
        "the name is complete and no tag is open: the body is complete, the closer missing "
        "(missing-end), so the call closes with no arguments"
    ),
)
case(
    "truncated-in-tag-head",
    PARIS + "<parameter=un",
    content="un",
    calls=[("get_weather", '{"city": "Paris"')],
    finish_reason="length",
    notes=(
        "the output ends inside a tag's head: the arguments are what was emitted "
        "(truncated) and the head's text after its literal start '<parameter=' is content"
    ),
)
case(
    "truncated-in-value",
    PARIS + "<parameter=unit>\ncels",
    content="cels",
    calls=[("get_weather", '{"city": "Paris", "unit": ')],
    finish_reason="length",
    notes=(
        "cut inside a value: the key was emitted with its tag's head, the value (emitted "
        "when it ends) never was, and is content, verbatim"
    ),
)
case(
    "truncated-in-parameter-close",
    PARIS + "<parameter=unit>\ncelsius\n</param",
    content="celsius\n</param",
    calls=[("get_weather", '{"city": "Paris", "unit": ')],
    finish_reason="length",
    notes="cut inside '</parameter>': the value has not ended, so it is content with the cut tag",
)
case(
    "truncated-before-tool-call-close",
    PARIS + "</function>\n",
    content=None,
    calls=[("get_weather", {"city": "Paris"})],
    recoveries=("missing-end",),
    finish_reason="length",
    notes=(
        "cut after '</function>': every tag is closed, only '</tool_call>' is missing "
        "(missing-end): the call is complete"
    ),
)
case(
    "closer-inside-a-value",
    PARIS + "<parameter=unit>\ncelsius\n</tool_call>",
    content="celsius",
    calls=[("get_weather", '{"city": "Paris", "unit": ')],
    notes=(
        "</tool_call> arrives inside a value: the region ends there; the arguments are what "
        "was emitted (malformed-arguments) and the value, never emitted, is content"
    ),
)

# ---- wild: Qwen3-Coder's own outputs quoted in public issues -------------------------------

CREATE_FILE = tool(
    "create_new_file",
    "Create a new file",
    {
        "type": "object",
        "properties": {"filepath": {"type": "string"}, "contents": {"type": "string"}},
        "required": ["filepath", "contents"],
    },
)
SQUARE = tool(
    "square_the_number",
    "output the square of the number.",
    {
        "type": "object",
        "properties": {"input_num": {"type": "number"}},
        "required": ["input_num"],
    },
)
BARE_FUNCTION = (
    'I\'ll create a file called test.txt with the content "hello".\n\n'
    "<function=create_new_file>\n<parameter=filepath> test.txt\n<parameter=contents> hello"
)
case(
    "wild-function-without-tool-call",
    BARE_FUNCTION,
    tools=[CREATE_FILE],
    content=BARE_FUNCTION,
    calls=[],
    kind="wild",
    source="https://github.com/continuedev/continue/issues/13057",
    notes=(
        "qwen3-coder:30b (Ollama) quoted in the issue: a <function=...> block with no "
        "<tool_call> and no closers. The template opens a call only at <tool_call>, so the "
        "text is content, verbatim (vLLM 0.33 opens a call at a bare <function=)"
    ),
)
HERMES_JSON = (
    '<tool_call>\n{"name": "square_the_number", "arguments": {"input_num": 1024}}\n</tool_call>'
)
case(
    "wild-json-call-in-xml-format",
    HERMES_JSON,
    tools=[SQUARE],
    content=HERMES_JSON,
    calls=[],
    kind="wild",
    source="https://github.com/gpustack/gpustack/issues/2660",
    notes=(
        "Qwen3-Coder-30B-A3B through vLLM 0.10.0, quoted in the issue: a Hermes JSON call "
        "inside <tool_call>. The opener needs <function=NAME> after <tool_call>: nothing "
        "opens, and the text is content, verbatim (serve such output with qwen3_json or hermes)"
    ),
)
# More Qwen3-Coder / Qwen3.6 outputs quoted in public threads. Where the thread gives no
# schema, the tool declared is reconstructed from the output (the notes say so).

RECONSTRUCTED = "the thread gives no schema: the tool declared here is reconstructed to match it"
GLOB = tool(
    "Glob",
    "Find files by glob pattern",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern"],
    },
)
NO_OPENER = (
    "I'll use the Glob tool to list all markdown files in the current directory.\n\n"
    "<function=Glob>\n<parameter=pattern>\n*.md\n</parameter>\n</function>\n</tool_call>"
)
case(
    "wild-missing-tool-call-opener",
    NO_OPENER,
    tools=[GLOB],
    content=NO_OPENER,
    calls=[],
    kind="wild",
    source="ollama/ollama#16686 (gtempo, 2026-06-12)",
    model="qwen3-coder:30b (Ollama), client Claude Code",
    notes=(
        f"Claude Code's Glob tool; {RECONSTRUCTED}. The opener <tool_call> is missing, the "
        "closer is there. A call opens only at <tool_call> + <function=NAME> (the template's "
        "open pattern), so nothing opens; the closer with no call open is content too "
        "(unparsed-markup): the whole text is content, verbatim (vLLM 0.33 opens a call at a "
        "bare <function=). Under auto the grammar is free text until <tool_call>, which never "
        "comes"
    ),
    grammar="accept",
)
GREP = tool(
    "GrepTool",
    "Search file contents with a regular expression",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern"],
    },
)
case(
    "wild-text-then-call-regex-value",
    "Let me check if there might be a base.py file that's not showing up. Since we know it's "
    "being imported, let me try to grep for the implementation of BaseService.\n\n"
    "<tool_call>\n<function=GrepTool>\n<parameter=pattern>\nclass BaseService\\(\n"
    "</parameter>\n<parameter=path>\n.\n</parameter>\n</function>\n</tool_call>",
    tools=[GREP],
    content=(
        "Let me check if there might be a base.py file that's not showing up. Since we know "
        "it's being imported, let me try to grep for the implementation of BaseService."
    ),
    calls=[("GrepTool", {"pattern": "class BaseService\\(", "path": "."})],
    kind="wild",
    source="vllm-project/vllm#22975 (Co1lin, 2025-08)",
    model="Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 (vLLM, --tool-call-parser qwen3_coder)",
    notes=(
        "the issue quotes content as a Python repr, un-escaped here (\\n, \\\\); vLLM left "
        f"this call in content at times; {RECONSTRUCTED}. The template's own shape: the text, "
        "'\\n\\n' (framing), one call; the value keeps its backslash"
    ),
    grammar="accept",
)
case(
    "wild-value-holds-parameter-closer",
    "<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.py\n</parameter>\n"
    '<parameter=content>\ndef f():\n    return "</parameter>\n</function>\n</tool_call>',
    tools=[WRITE],
    content=None,
    calls=[("write_file", {"path": "/tmp/a.py", "content": 'def f():\n    return "'})],
    kind="wild",
    source="raullenchai/Rapid-MLX#1536 (raullenchai, 2026-08-06)",
    model="qwen3.6-27b-8bit (MLX, Rapid-MLX)",
    notes=(
        "the engine's output.text quoted as a Python repr, un-escaped here (\\n); asked for "
        "file content holding a literal </parameter>, the model ended the value there. A "
        "value runs to the first </parameter> (the format has no escaping), so content is "
        "'def f():\\n    return \"' and the call closes clean. write_file's declaration "
        f"here: {RECONSTRUCTED}; token ids are the qwen3 tokenizer's (Qwen3.6's own is not "
        "used)"
    ),
    grammar="accept",
)
TERMINAL = tool(
    "terminal",
    "Run a terminal command",
    {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)
FUNCTION_TAG = (
    "Let me check the services...\n<tool_call>\n<function>terminal</function>\n"
    '{"command": "lsof -i :10240"}\n</tool_call>'
)
case(
    "wild-function-tag-without-equals",
    FUNCTION_TAG,
    tools=[TERMINAL],
    content=FUNCTION_TAG,
    calls=[],
    kind="wild",
    source="madroidmaq/mlx-omni-server#126 (ddavisqa, 2026-06-22)",
    model=(
        "mlx-community/Qwen3.6-35B-A3B-4bit-DWQ or mlx-community/gemma-3-12b-it-4bit (the "
        "poster says both write this; the thread does not say which wrote this text)"
    ),
    notes=(
        f"{RECONSTRUCTED}. <function>NAME</function> is not <function=NAME>: the opener's "
        "pattern does not match, nothing opens, and the text is content, verbatim with its "
        "markup (the closer with no call open: unparsed-markup). The grammar's tag, triggered "
        "by <tool_call>, needs '=' after '<function'; token ids are the qwen3 tokenizer's"
    ),
    grammar="reject",
    refusal=(at("<function>", 9), "the call's opener is '<function=NAME>': '=' must come here"),
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
CALL_SYNTAX = (
    '--- CALL --- nc://searxng_search {"query":"2026年5月6日 今日新闻","language":"zh",'
    '"max_results":8}'
)
case(
    "wild-invented-call-syntax",
    CALL_SYNTAX,
    tools=[SEARXNG],
    content=CALL_SYNTAX,
    calls=[],
    kind="wild",
    source="1CatAI/1Cat-vLLM#26 (corywalker66998-hub, 2026)",
    model="Qwen3.6-27B-AWQ (1Cat-vLLM 0.0.3, client Hermes Agent)",
    notes=(
        "one of four pseudo tool-call formats the issue quotes as content; "
        f"{RECONSTRUCTED}. No markup of the format: content, verbatim; token ids are the "
        "qwen3 tokenizer's (Qwen3.6's own is not used)"
    ),
    grammar="accept",
)


# ---- tool_choice, parallel_tool_calls ------------------------------------------------------

# Cut before the closer: a call the model closed is left out here, as the hf engine holds
# '</function>' and '</tool_call' back longer than the kit's bound on a marker prefix
# (10 characters) under tool_choice "none" (reported to the engine's maintainers).
NONE_TEXT = "Here is the call.\n\n" + PARIS.removesuffix("\n")
case(
    "tool-choice-none-is-content",
    NONE_TEXT,
    tool_choice="none",
    content=NONE_TEXT,
    calls=[],
    finish_reason="length",
    notes='tool_choice "none": the whole output is content, markup included',
)
template_case(
    "tool-choice-required",
    "",
    [("run_shell_command", {"command": "ls -la", "timeout": 30})],
    tool_choice="required",
    grammar="accept",
)
template_case(
    "tool-choice-named",
    "",
    [("write_file", {"path": "notes.txt", "content": "done"})],
    tool_choice={"type": "function", "function": {"name": "write_file"}},
    grammar="accept",
)
template_case(
    "tool-choice-named-other-tool-is-refused",
    "",
    [("get_weather", {"city": "Lima"})],
    tool_choice={"type": "function", "function": {"name": "write_file"}},
    grammar="reject",
    refusal=(at("get_weather"), "the named tool is write_file"),
    notes="the parse keeps the call the model wrote; the grammar allows only the named tool",
)
template_case(
    "single-call-second-is-refused",
    "",
    [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
    parallel_tool_calls=False,
    grammar="reject",
    refusal=(
        at("<tool_call>", nth=2),
        "parallel_tool_calls is false: after one call only blanks may follow",
    ),
    notes="the parse keeps both calls the model wrote; the grammar stops after the first",
)

# ---- generated under the grammar (request.constrained) -------------------------------------
#
# The text is the chat template's rendering; the token ids are what the structural tag of
# the installed qwen3_coder parser at the request's own strict level let through, one seeded
# choice per step (toolcall_conformance.constrained). The seed is the slug. The last is at
# the default strict level: its plan leaves the tool unpinned (any tag the template's
# pattern allows, each value any text).

template_case(
    "constrained-required",
    "",
    [("get_weather", {"city": "Zürich", "unit": "celsius"})],
    tool_choice="required",
    strict_level="parameter",
    grammar="accept",
    constrained=True,
)
template_case(
    "constrained-parameter-level-text-and-calls",
    "Running both.",
    [
        ("run_shell_command", {"command": "make -j4", "timeout": 600}),
        ("get_weather", {"city": "Oslo"}),
    ],
    strict_level="parameter",
    grammar="accept",
    constrained=True,
)
template_case(
    "constrained-required-unpinned",
    "",
    [("run_shell_command", {"command": "ls -la", "workdir": "/tmp"})],
    tool_choice="required",
    grammar="accept",
    constrained=True,
)
template_case(
    "constrained-single-call-markup-in-string",
    "",
    [("write_file", {"path": "a.md", "content": "Write <parameter=x> to set x."})],
    parallel_tool_calls=False,
    strict_level="parameter",
    grammar="accept",
    constrained=True,
)


# ---- writing -----------------------------------------------------------------------------


def check_rendering(path: str) -> None:
    """Render every ``template`` case with the chat template at ``path`` (jinja2, as
    transformers renders it: trim_blocks, lstrip_blocks, its tojson) and compare."""
    import jinja2  # noqa: PLC0415

    environment = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    environment.filters["tojson"] = lambda value, **_: json.dumps(value, ensure_ascii=False)
    chat = environment.from_string(Path(path).read_text(encoding="utf-8"))
    prompt = chat.render(messages=[{"role": "user", "content": "hi"}], add_generation_prompt=True)
    for entry in CASES:
        if entry["rendered"] is None:
            continue
        content, calls = entry["rendered"]
        message = {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {"type": "function", "function": {"name": name, "arguments": arguments}}
                for name, arguments in calls
            ],
        }
        whole = chat.render(messages=[{"role": "user", "content": "hi"}, message])
        turn = whole.removeprefix(prompt.removesuffix("<|im_start|>assistant\n"))
        rendered = turn.removeprefix("<|im_start|>assistant\n").removesuffix("<|im_end|>\n")
        if rendered != entry["text"]:
            msg = f"{entry['slug']}: the template renders {rendered!r}, we wrote {entry['text']!r}"
            raise SystemExit(msg)


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    slug = entry["slug"]
    case_id = f"{PARSER}/{TOKENIZER}/{slug}"
    if entry["constrained"]:
        data = build_case_under_grammar(
            Registry.load({}).get(PARSER),
            tokenizer=TOKENIZER,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            case_id=case_id,
            seed=slug,
        )
    else:
        data = build_case(
            tokenizer=TOKENIZER,
            parser=PARSER,
            text=entry["text"],
            request=entry["request"],
            provenance=entry["provenance"],
            expected=entry["expected"],
            finish_reason=entry["finish_reason"],
            case_id=case_id,
        )
    return ROOT / PARSER / TOKENIZER / f"{slug}.json", data


def main(argv: list[str] | None = None) -> int:
    jinja = os.environ.get("QWEN3_CODER_JINJA")
    if jinja:
        check_rendering(jinja)
    return write_corpus((build(entry) for entry in CASES), argv, label="qwen3_coder")


if __name__ == "__main__":
    sys.exit(main())
