"""Write the Mistral conformance corpus (parser ``mistral``).

    python conformance/corpus/mistral.py            # (re)write every case file
    python conformance/corpus/mistral.py --check    # fail if a file is not what it would write

Cases land in ``toolcall_conformance/cases/mistral/<tokenizer>/``, on mistral-common's own
tokenizers, as vLLM uses them for Mistral models (``--tokenizer-mode mistral``):

* ``mistral-v3``: SentencePiece v3 (Mistral-7B-Instruct-v0.3, Mixtral-8x22B-Instruct-v0.1),
  the pre-v11 list ``[TOOL_CALLS] [{...}]``; ``[TOOL_CALLS]`` is control token 5;
* ``mistral-tekken``: tekken v3 (Mistral-NeMo, Ministral-8B-2410, Pixtral), pre-v11 too;
  ``[TOOL_CALLS]`` is 9;
* ``mistral-tekken-v11``: the v11 tekken file built offline (mistral-common's
  ``tekken_240911.json`` with v11's control tokens;
  Mistral-Small-3.2, Devstral, Magistral, Ministral-3 share its vocabulary and control ids):
  ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`` (v11) and ``[TOOL_CALLS]NAME[ARGS]{...}`` (v13).
  vLLM's detokenizer releases no text for ``[CALL_ID]`` (the case's steps show it), so the
  parser reads ``NAMEID[ARGS]`` (DESIGN §6).

Provenance:

* ``template``: the assistant message as mistral-common 1.13.1 itself encodes it
  (``InstructTokenizer.encode_assistant_message``: the model's training format), the final
  ``</s>`` dropped; the ids are mistral-common's, the expected parse the message encoded;
* ``wild``: raw outputs quoted in public issues, cited in ``source`` (tokenized here);
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6 and
plugins/mistral/README.md) and the format, never from a parser's output. ``expected.grammar``
says what the structural tag must do with the case's tokens under the request's plan with the
strict level raised to ``parameter`` (plugins/mistral/README.md, "The grammar"). A
``reject`` says where the grammar must refuse (``expected.grammar_refusal``), derived from
the format and the schema as xgrammar compiles it (strictly: no property beyond those
declared, keys in the schema's order).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolcall import Registry
from toolcall_conformance.builder import (
    Place,
    at,
    at_end,
    build_case,
    build_case_from_ids,
    build_case_under_grammar,
    strict_tool,
    write_corpus,
)
from toolcall_conformance.tokenizers import get_tokenizer

ROOT = Path(__file__).resolve().parents[1] / "src" / "toolcall_conformance" / "cases"
PARSER = "mistral"
V3 = "mistral-v3"
TEKKEN = "mistral-tekken"
V11 = "mistral-tekken-v11"

TEMPLATE = (
    "mistral-common 1.13.1 InstructTokenizer.encode_assistant_message of an assistant "
    "message with these tool calls (the model's training format), final </s> dropped "
    "(see conformance/corpus/mistral.py)"
)
V13_FORMAT = (
    "the v13 tekken format (Mistral-Small-3.2 / Magistral-2507+ / Ministral-3): "
    "'[TOOL_CALLS]' + name + '[ARGS]' + json.dumps(arguments), as mistral-common encodes a "
    "tool call without id (vLLM's parser/mistral.py docstring shows the same form)"
)
CONSTRUCTED = "written by hand for the Mistral parsing policy (plugins/mistral/README.md)"
TOOL_CALLS = "[TOOL_CALLS]"
MARKERS = (TOOL_CALLS, "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]")
MODELS = {
    V3: "mistralai/Mistral-7B-Instruct-v0.3",
    TEKKEN: "mistralai/Mistral-Nemo-Instruct-2407",
    V11: "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
}


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
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
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
ALL = [WEATHER, TIME, SEARCH, WRITE]


# -- rendering (the benchmark writes its outputs with these too) ------------------------------


def v11_turn(content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """What a v11+ model writes: content, then per call [TOOL_CALLS]NAME[ARGS]{json}."""
    return content + "".join(
        f"{TOOL_CALLS}{name}[ARGS]{json.dumps(arguments, ensure_ascii=False)}"
        for name, arguments in calls
    )


def pre_v11_turn(content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """What a pre-v11 model writes: content, then [TOOL_CALLS] and the JSON list of calls."""
    listed = [{"name": name, "arguments": dict(arguments)} for name, arguments in calls]
    return f"{content}{TOOL_CALLS} {json.dumps(listed, ensure_ascii=False)}"


# -- cases ----------------------------------------------------------------------------------

CASES: list[dict[str, Any]] = []


def case(
    slug: str,
    text: str | None,
    *,
    tokenizer: str,
    content: str | None,
    calls: Sequence[tuple[str, dict[str, Any] | str]],
    ids: list[int] | None = None,
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
    constrained: bool = False,
) -> None:
    request: dict[str, Any] = {"tools": tools if tools is not None else ALL}
    request["tool_choice"] = tool_choice
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    provenance: dict[str, Any] = {
        "kind": kind,
        "source": source,
        "model": model or MODELS[tokenizer],
    }
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
        assert text is not None, "a refusal is placed in the case's text"
        place, reason = refusal
        expected["grammar_refusal"] = {"offset": place(text), "reason": reason}
    CASES.append(
        {
            "slug": slug,
            "tokenizer": tokenizer,
            "text": text,
            "ids": ids,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": finish_reason,
            "constrained": constrained,
        }
    )


def template_ids(
    tokenizer: str, calls: Sequence[tuple[str, dict[str, Any], str | None]]
) -> list[int]:
    """mistral-common's own encoding of an assistant message with these calls."""
    from mistral_common.protocol.instruct.messages import AssistantMessage  # noqa: PLC0415
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall  # noqa: PLC0415

    real = get_tokenizer(tokenizer)
    message = AssistantMessage(
        tool_calls=[
            ToolCall(
                **({"id": call_id} if call_id else {}),
                function=FunctionCall(name=name, arguments=json.dumps(arguments)),
            )
            for name, arguments, call_id in calls
        ]
    )
    instruct = real.hf_tokenizer.instruct_tokenizer
    ids: list[int] = instruct.encode_assistant_message(message, is_before_last_user_message=False)
    return ids


def template(
    slug: str,
    tokenizer: str,
    calls: Sequence[tuple[str, dict[str, Any], str | None]],
    **kw: Any,
) -> None:
    """A template case: the expected parse is the message mistral-common encoded."""
    case(
        slug,
        None,
        ids=template_ids(tokenizer, calls),
        tokenizer=tokenizer,
        content=None,
        calls=[(name, arguments) for name, arguments, _ in calls],
        kind="template",
        source=TEMPLATE,
        **kw,
    )


PARIS = {"city": "Paris", "unit": "celsius"}
TOKYO = {"city": "Tokyo"}

# -- v11+ (tekken v11 vocabulary) -----------------------------------------------------------

template(
    "template-call-with-id",
    V11,
    [("get_current_weather", PARIS, "abcDEF123")],
    grammar="accept",
    notes="v11 writes [CALL_ID] and the id; vLLM releases no text for [CALL_ID], so the "
    "parser reads 'get_current_weatherabcDEF123[ARGS]': a declared name and 9 alphanumerics",
)
template(
    "template-parallel-calls-with-ids",
    V11,
    [("get_current_weather", PARIS, "abcDEF123"), ("get_current_weather", TOKYO, "xyz987QWE")],
    grammar="accept",
)
template(
    "template-call-without-id", V11, [("get_time", {"timezone": "UTC"}, None)], grammar="accept"
)
case(
    "v13-single-call",
    '[TOOL_CALLS]get_current_weather[ARGS]{"city": "Paris", "unit": "celsius"}',
    tokenizer=V11,
    content=None,
    calls=[("get_current_weather", PARIS)],
    kind="template",
    source=V13_FORMAT,
    grammar="accept",
)
case(
    "content-then-call",
    'Let me check the time there.[TOOL_CALLS]get_time[ARGS]{"timezone": "Europe/Paris"}',
    tokenizer=V11,
    content="Let me check the time there.",
    calls=[("get_time", {"timezone": "Europe/Paris"})],
    grammar="accept",
)
DEVSTRAL_TOOLS = [
    tool(
        "get_weather",
        "Weather of a city",
        {"type": "object", "properties": {"city": {"type": "string"}}},
    ),
    tool("grep", "Search files", {"type": "object", "properties": {"pattern": {"type": "string"}}}),
]
case(
    "wild-devstral-parallel-calls",
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_weather[ARGS]{"city": "Tokyo"}',
    tokenizer=V11,
    tools=DEVSTRAL_TOOLS,
    content=None,
    calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})],
    kind="wild",
    source="ml-explore/mlx-lm#1448 (Devstral output quoted after the server's first "
    "[TOOL_CALLS]; the marker that starts the output is restored)",
    model="mistralai/Devstral-Small-2507",
    grammar="accept",
)
case(
    "wild-devstral-text-after-call",
    '[TOOL_CALLS]grep[ARGS]{"pattern": "TODO"}\n\nLet me search for that.',
    tokenizer=V11,
    tools=DEVSTRAL_TOOLS,
    content="Let me search for that.",
    calls=[("grep", {"pattern": "TODO"})],
    kind="wild",
    source="ml-explore/mlx-lm#1448 (a single call followed by prose; vLLM drops the prose: "
    "vllm-project/vllm#48975); the leading [TOOL_CALLS] is restored",
    model="mistralai/Devstral-Small-2507",
    grammar="accept",
)
CREATE_FILE_TOOLS = [
    tool(
        "create_file",
        "Create a new file with the given content",
        {
            "type": "object",
            "properties": {"filePath": {"type": "string"}, "content": {"type": "string"}},
            "required": ["filePath", "content"],
        },
    )
]
case(
    "wild-devstral2-call-without-args-marker",
    '[TOOL_CALLS]create_file{"filePath": "/workspaces/overleaf_dev/workspace/git-bridge/'
    'overleaf_with_admin_extension/blabla.txt", "content": "This is a test file created to '
    'verify file creation functionality."}',
    tokenizer=V11,
    tools=CREATE_FILE_TOOLS,
    content=None,
    calls=[
        (
            "create_file",
            {
                "filePath": "/workspaces/overleaf_dev/workspace/git-bridge/"
                "overleaf_with_admin_extension/blabla.txt",
                "content": "This is a test file created to verify file creation functionality.",
            },
        )
    ],
    kind="wild",
    source="vllm-project/vllm#30651 (davrot: the text vLLM returned without "
    "--tool-call-parser mistral; with it, vLLM's parser raised JSONDecodeError)",
    model="mistralai/Devstral-Small-2-24B-Instruct-2512",
    notes="the fallback form: no [ARGS] between the name and the arguments, the name ends at "
    "'{'; the tool declaration is reconstructed from the call (VS Code Copilot's create_file, "
    "the thread gives no schema)",
    grammar="accept",
)
case(
    "fallback-without-args-marker",
    '[TOOL_CALLS]get_time{"timezone": "UTC"}',
    tokenizer=V11,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes="the fallback vLLM's engine also reads: the name ends at '{'",
    grammar="accept",
)
case(
    "no-arguments",
    "[TOOL_CALLS]get_time[ARGS]{}",
    tokenizer=V11,
    content=None,
    calls=[("get_time", {})],
    grammar="accept",
)
case(
    "whitespace-between-calls",
    '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}\n[TOOL_CALLS]get_time[ARGS]{"timezone": "CET"}',
    tokenizer=V11,
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_time", {"timezone": "CET"})],
    grammar="accept",
)
case(
    "truncated-in-arguments",
    '[TOOL_CALLS]write_file[ARGS]{"path": "notes.md", "content": "# Title\\n\\nFirst li',
    tokenizer=V11,
    content=None,
    calls=[("write_file", '{"path": "notes.md", "content": "# Title\\n\\nFirst li')],
    finish_reason="length",
)
case(
    "name-without-args",
    "[TOOL_CALLS]get_time",
    tokenizer=V11,
    content="[TOOL_CALLS]get_time",
    calls=[],
    notes="a name that never completes ([ARGS], [CALL_ID] or '{'): no call, content verbatim",
    grammar="reject",
    refusal=(at_end, "the output ends after the name: [ARGS] and the arguments must follow"),
)
case(
    "tool-calls-with-nothing-after",
    "Sure.[TOOL_CALLS]",
    tokenizer=V11,
    content="Sure.[TOOL_CALLS]",
    calls=[],
    grammar="reject",
    refusal=(at_end, "the output ends after [TOOL_CALLS]: a declared name must follow"),
)
case(
    "tool-calls-then-prose",
    "[TOOL_CALLS] I will look up the weather in Paris for you.",
    tokenizer=V11,
    content="[TOOL_CALLS] I will look up the weather in Paris for you.",
    calls=[],
    kind="wild",
    source="vllm-project/vllm#5649 (comment: Mistral models sometimes write "
    "'[TOOL_CALLS] <Free text description of the call the model wants to make>'); the "
    "sentence is written here after that description",
    grammar="reject",
    refusal=(at(" I will", 1), "after [TOOL_CALLS] comes a declared name: none starts with 'I'"),
)
case(
    "two-json-values-after-args",
    '[TOOL_CALLS]search[ARGS]{"query": "vllm"}{"query": "mistral"}',
    tokenizer=V11,
    content='{"query": "mistral"}',
    calls=[("search", {"query": "vllm"})],
    notes="the call ends with its first JSON value; the second is text after it: content",
    grammar="accept",
)
case(
    "malformed-arguments",
    '[TOOL_CALLS]search[ARGS]{"query": "vllm", "top_k": 3,}',
    tokenizer=V11,
    content=None,
    calls=[("search", '{"query": "vllm", "top_k": 3,}')],
    grammar="reject",
    refusal=(at(",}", 1), "after the comma comes the next key ('exact'), not '}'"),
)
case(
    "python-literal-arguments",
    "[TOOL_CALLS]search[ARGS]{'query': 'vllm plugins', 'exact': True}",
    tokenizer=V11,
    content=None,
    calls=[("search", {"query": "vllm plugins", "exact": True})],
    recoveries=("python-literal",),
    notes="arguments whose first key is single-quoted: a Python literal "
    "(vllm-project/vllm#20028: Mistral-Small-3.2 'can't handle single ticks')",
    grammar="reject",
    refusal=(at("{'", 1), "JSON keys are in double quotes"),
)
case(
    "arguments-string",
    '[TOOL_CALLS]get_time[ARGS]"{\\"timezone\\": \\"UTC\\"}"',
    tokenizer=V11,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("arguments-string",),
    grammar="reject",
    refusal=(at('[ARGS]"', 6), "the arguments must be an object, not a string"),
)
case(
    "unknown-tool-kept",
    '[TOOL_CALLS]get_stock_price[ARGS]{"ticker": "MSFT"}',
    tokenizer=V11,
    content=None,
    calls=[("get_stock_price", {"ticker": "MSFT"})],
    grammar="reject",
    refusal=(at("get_stock_price", 4), "no declared tool's name goes on 'get_s'"),
)
case(
    "id-suffix-on-undeclared-name",
    "[TOOL_CALLS]lookupabcDEF123[ARGS]{}",
    tokenizer=V11,
    content=None,
    calls=[("lookupabcDEF123", {})],
    notes="only a declared tool's name followed by 9 alphanumerics is read as name + id",
)
case(
    "markers-inside-a-string",
    '[TOOL_CALLS]write_file[ARGS]{"path": "a.md", "content": "write [TOOL_CALLS] then [ARGS]"}',
    tokenizer=V11,
    content=None,
    calls=[("write_file", {"path": "a.md", "content": "write [TOOL_CALLS] then [ARGS]"})],
)
case(
    "unicode-arguments",
    '[TOOL_CALLS]write_file[ARGS]{"path": "café.txt", "content": "東京 ü"}',
    tokenizer=V11,
    content=None,
    calls=[("write_file", {"path": "café.txt", "content": "東京 ü"})],
    grammar="accept",
)
case(
    "required-template",
    '[TOOL_CALLS]get_current_weather[ARGS]{"city": "Berlin"}',
    tokenizer=V11,
    content=None,
    calls=[("get_current_weather", {"city": "Berlin"})],
    tool_choice="required",
    kind="template",
    source=V13_FORMAT,
    grammar="accept",
)
case(
    "required-with-text-before",
    'Sure.[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}',
    tokenizer=V11,
    content="Sure.",
    calls=[("get_time", {"timezone": "UTC"})],
    tool_choice="required",
    grammar="reject",
    refusal=(at("Sure."), 'tool_choice "required": the output starts with a call'),
)
case(
    "named-choice-other-tool",
    '[TOOL_CALLS]get_current_weather[ARGS]{"city": "Oslo"}',
    tokenizer=V11,
    content=None,
    calls=[("get_current_weather", {"city": "Oslo"})],
    tool_choice={"type": "function", "function": {"name": "get_time"}},
    grammar="reject",
    refusal=(at("get_current_weather", 4), "the named tool is get_time: 'get_c' cannot be it"),
)
case(
    "parallel-false-two-calls",
    '[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}[TOOL_CALLS]get_time[ARGS]{"timezone": "CET"}',
    tokenizer=V11,
    content=None,
    calls=[("get_time", {"timezone": "UTC"}), ("get_time", {"timezone": "CET"})],
    parallel_tool_calls=False,
    notes="the parser returns both calls (vLLM's chat layer keeps the first); the grammar "
    "allows one",
    grammar="reject",
    refusal=(at(TOOL_CALLS, nth=2), "parallel_tool_calls false: the output ends after one call"),
)
case(
    "tool-choice-none",
    'Calling it anyway.[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}',
    tokenizer=V11,
    content='Calling it anyway.[TOOL_CALLS]get_time[ARGS]{"timezone": "UTC"}',
    calls=[],
    tool_choice="none",
)
case(
    "magistral-reasoning-then-call",
    "[THINK]The user wants the time in Paris, so I call get_time.[/THINK]"
    '[TOOL_CALLS]get_time[ARGS]{"timezone": "Europe/Paris"}',
    tokenizer=V11,
    content=None,
    calls=[("get_time", {"timezone": "Europe/Paris"})],
    model="mistralai/Magistral-Small-2509",
    notes="without --reasoning-parser mistral the parser sees [THINK]...[/THINK]: reasoning, "
    "not content (the case schema has no field for it; plugins/mistral/tests check it)",
    grammar="accept",
)

# -- before v11: SentencePiece v3 -------------------------------------------------------------

template(
    "template-call-with-id",
    V3,
    [("get_current_weather", PARIS, "abcDEF123")],
    grammar="accept",
)
template(
    "template-parallel-calls",
    V3,
    [
        ("get_current_weather", PARIS, "abcDEF123"),
        ("get_time", {"timezone": "Asia/Tokyo"}, "Zz9Yy8Xx7"),
    ],
    grammar="accept",
)
INFERENCE_TOOLS = [
    tool(
        "get_current_weather",
        "Get the current weather",
        {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "format": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location", "format"],
        },
    )
]
case(
    "wild-mistral-inference-162",
    None,
    ids=template_ids(
        V3,
        [("get_current_weather", {"location": "San Francisco, CA", "format": "celsius"}, None)],
    ),
    tokenizer=V3,
    tools=INFERENCE_TOOLS,
    content=None,
    calls=[("get_current_weather", {"location": "San Francisco, CA", "format": "celsius"})],
    kind="wild",
    source="mistralai/mistral-inference#162 (Mistral-7B-Instruct-v0.3: the output ids begin "
    "5, 1501, 7567, 1629, 2032, 1113 and decode to the JSON list quoted there); ids from "
    "mistral-common's encoding of that call, which begins with the same six",
    grammar="accept",
)


def model_ids(text: str) -> list[int]:
    """The mistral-v3 ids of ``text`` with ``[TOOL_CALLS]`` followed directly by the piece
    ``▁[``, as the model writes it (mistral-common's own encoding of the assistant message
    does the same); encoding the text puts a lone ``▁`` piece between the two. vLLM's
    detokenizer reads ``[TOOL_CALLS]`` + ``▁[`` as ``[TOOL_CALLS][``."""
    real = get_tokenizer(V3)
    pieces = real.hf_tokenizer.instruct_tokenizer.tokenizer
    ids = real.encode(text)
    marker = real.special_tokens[TOOL_CALLS]
    at_marker = ids.index(marker)
    assert pieces.id_to_piece(ids[at_marker + 1]) == "\N{LOWER ONE EIGHTH BLOCK}"
    assert pieces.id_to_piece(ids[at_marker + 2]) == "\N{LOWER ONE EIGHTH BLOCK}["
    return ids[: at_marker + 1] + ids[at_marker + 2 :]


TABBY_VIEW = (
    '[TOOL_CALLS]▁[{"name":▁"get_current_weather",▁"arguments":▁{"location":▁'
    '"Moscow",▁"format":▁"celsius"}}]'
)
TABBY_IDS = model_ids(TABBY_VIEW.replace("\N{LOWER ONE EIGHTH BLOCK}", " "))
_sp = get_tokenizer(V3).hf_tokenizer.instruct_tokenizer.tokenizer
assert "".join(_sp.id_to_piece(i) for i in TABBY_IDS) == TABBY_VIEW, "not the quoted pieces"
case(
    "wild-tabby-list-token-view",
    None,
    ids=TABBY_IDS,
    tokenizer=V3,
    tools=INFERENCE_TOOLS,
    content=None,
    calls=[("get_current_weather", {"location": "Moscow", "format": "celsius"})],
    kind="wild",
    source="theroyallab/tabbyAPI#314 (anunknowperson, 2025-03-23: the response of tabby's "
    "completion endpoint, quoted as SentencePiece pieces with '▁' for the blank; tabby's chat "
    "endpoint did not detect the call)",
    model="a Mistral model with a v7 SentencePiece tokenizer ([SYSTEM_PROMPT], the checkpoint "
    "is not named), served by tabbyAPI (exllamav2)",
    notes="the ids are mistral-v3's for the quoted pieces (joined, they give the quoted text "
    "exactly; the SentencePiece v7 vocabulary has the same pieces and [TOOL_CALLS] 5); the "
    "tool is the one in the quoted prompt",
    grammar="accept",
)
KERAS_TOOLS = [
    tool(
        "convert_currency",
        "Convert the currency with the latest exchange rate",
        {
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "currency": {"type": "string"},
                "new_currency": {"type": "string"},
            },
            "required": ["amount", "currency", "new_currency"],
        },
    ),
    tool(
        "find_flights",
        "Query price, time, number of stopovers and duration in hours for flights for a given date",
        {
            "type": "object",
            "properties": {
                "origin": {"type": "string"},
                "destination": {"type": "string"},
                "date": {"type": "string"},
            },
            "required": ["origin", "destination", "date"],
        },
    ),
    tool(
        "book_flight",
        "Book the flight with the given id",
        {"type": "object", "properties": {"id": {"type": "number"}}, "required": ["id"]},
    ),
]
KERAS_GUIDE = (
    "keras-team/keras-io guides/md/keras_hub/function_calling_with_keras_hub.md (2025-07-10, "
    "section Mistral, 'the conversation as received by the model', the model's turn {turn}, "
    "cut after the call by the guide)"
)
KERAS_NOTES = (
    "the guide prints tokenizer.detokenize(...), which drops the control token [TOOL_CALLS]; "
    "the guide finds the call by that token and decodes the JSON right after it (the turn "
    "is cut after that JSON), so it stood right before the list: the ids are the printed "
    "text's with "
    "[TOOL_CALLS] before the piece '▁[' that prints as the list's '{lead}[' (what vLLM's "
    "detokenizer reads as '[TOOL_CALLS]['); tools as the guide declares them"
)
case(
    "wild-keras-find-flights",
    None,
    ids=model_ids(
        '[TOOL_CALLS] [{"name": "find_flights", "arguments": {"origin": "Linz", '
        '"destination": "London", "date": "20250724"}}]'
    ),
    tokenizer=V3,
    tools=KERAS_TOOLS,
    content=None,
    calls=[
        ("find_flights", {"origin": "Linz", "destination": "London", "date": "20250724"}),
    ],
    kind="wild",
    source=KERAS_GUIDE.format(turn=1),
    model="mistralai/Mistral-7B-Instruct-v0.3 (KerasHub preset mistral_0.3_instruct_7b_en)",
    notes=KERAS_NOTES.format(lead=""),
    grammar="accept",
)
case(
    "wild-keras-prose-then-convert",
    None,
    ids=model_ids(
        "Now let's convert the price from USD to EUR using the latest exchange rate:\n\n"
        '[TOOL_CALLS] [{"name": "convert_currency", "arguments": {"amount": 22, "currency": '
        '"USD", "new_currency": "EUR"}}]'
    ),
    tokenizer=V3,
    tools=KERAS_TOOLS,
    content="Now let's convert the price from USD to EUR using the latest exchange rate:",
    calls=[("convert_currency", {"amount": 22, "currency": "USD", "new_currency": "EUR"})],
    kind="wild",
    source=KERAS_GUIDE.format(turn=2),
    model="mistralai/Mistral-7B-Instruct-v0.3 (KerasHub preset mistral_0.3_instruct_7b_en)",
    notes=KERAS_NOTES.format(lead=" ")
    + "; the line breaks between the text and [TOOL_CALLS] are framing",
    grammar="accept",
)
case(
    "wild-keras-prose-then-book",
    None,
    ids=model_ids(
        "The price of the flight with the id 2 in EUR is 18.70. Since it is below the 20€ "
        "limit, let's book this flight:\n\n"
        '[TOOL_CALLS] [{"name": "book_flight", "arguments": {"id": 2}}]'
    ),
    tokenizer=V3,
    tools=KERAS_TOOLS,
    content="The price of the flight with the id 2 in EUR is 18.70. Since it is below the 20€ "
    "limit, let's book this flight:",
    calls=[("book_flight", {"id": 2})],
    kind="wild",
    source=KERAS_GUIDE.format(turn=3),
    model="mistralai/Mistral-7B-Instruct-v0.3 (KerasHub preset mistral_0.3_instruct_7b_en)",
    notes=KERAS_NOTES.format(lead=" ")
    + "; the line breaks between the text and [TOOL_CALLS] are framing",
    grammar="accept",
)
PYTHON_TOOLS = [
    tool(
        "get_current_weather",
        "Get the current weather",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "state": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
        },
    )
]
case(
    "wild-python-literal-list-then-text",
    "[TOOL_CALLS][{'name': 'get_current_weather', 'arguments': {'city': 'Dallas', 'state': 'TX', "
    "'unit': 'fahrenheit'}}, {'name': 'get_current_weather', 'arguments': {'city': 'San "
    "Francisco', 'state': 'CA', 'unit': 'fahrenheit'}}]$$ In order to execute these functions, "
    "I need to provide the current weather API. Let me find the data for you.\n\nIn Dallas, "
    "Texas, the temperature is currently 89°F.\n\nIn San Francisco,",
    tokenizer=V3,
    tools=PYTHON_TOOLS,
    content="$$ In order to execute these functions, I need to provide the current weather API. "
    "Let me find the data for you.\n\nIn Dallas, Texas, the temperature is currently 89°F."
    "\n\nIn San Francisco,",
    calls=[
        ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}),
        ("get_current_weather", {"city": "San Francisco", "state": "CA", "unit": "fahrenheit"}),
    ],
    recoveries=("python-literal",),
    kind="wild",
    source="vllm-project/vllm#5649 (review comment: neuralmagic/Mistral-7B-Instruct-v0.3-"
    "GPTQ-4bit output, quoted up to 'In San Francisco,')",
    model="neuralmagic/Mistral-7B-Instruct-v0.3-GPTQ-4bit",
    finish_reason="length",
)
case(
    "malformed-element-between-good-ones",
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}, {"name": "search", '
    '"arguments": {"query": "x", "top_k": }}, {"name": "get_time", "arguments": {"timezone": '
    '"CET"}}]',
    tokenizer=V3,
    content=None,
    calls=[
        ("get_time", {"timezone": "UTC"}),
        ("search", '{"query": "x", "top_k": }'),
        ("get_time", {"timezone": "CET"}),
    ],
    notes="calls are independent: the middle call keeps its malformed arguments",
    grammar="reject",
    refusal=(at('"top_k": }', 9), "top_k is an integer: a value must come here, not '}'"),
)
case(
    "truncated-in-list",
    '[TOOL_CALLS] [{"name": "search", "arguments": {"query": "mistral tool',
    tokenizer=V3,
    content=None,
    calls=[("search", '{"query": "mistral tool')],
    finish_reason="length",
)
case(
    "truncated-in-member-key",
    '[TOOL_CALLS] [{"name": "search", "I chose Pa',
    tokenizer=V3,
    content='"I chose Pa',
    calls=[("search", "")],
    finish_reason="length",
    notes="the call is committed at its name and has no arguments; the key the output ends "
    "in is text the model wrote, so it is content (DESIGN §4.5)",
)
case(
    "name-lone-surrogate-escape",
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {}}, {"name": "\\ud800", "arguments": {}}]',
    tokenizer=V3,
    content='{"name": "\\ud800", "arguments": {}}',
    calls=[("get_time", {})],
    notes="a name UTF-8 cannot write (a lone surrogate) is no readable name: that element is "
    "no call and is content (DESIGN §6); the call before it stands",
)
case(
    "name-surrogate-pair-escape",
    '[TOOL_CALLS] [{"name": "time_\\ud83d\\udd50", "arguments": {}}]',
    tokenizer=V3,
    content=None,
    calls=[("time_\N{CLOCK FACE ONE OCLOCK}", {})],
    notes="a surrogate pair escape is one character of the name",
)
case(
    "list-without-closing-bracket",
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}',
    tokenizer=V3,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("missing-end",),
)
case(
    "parameters-key",
    '[TOOL_CALLS] [{"name": "get_time", "parameters": {"timezone": "UTC"}}]',
    tokenizer=V3,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    recoveries=("parameters-key",),
    grammar="reject",
    refusal=(at('"parameters"', 1), 'after the name, the key must be "arguments" or "id"'),
)
case(
    "arguments-first-with-id",
    '[TOOL_CALLS] [{"arguments": {"timezone": "UTC"}, "name": "get_time", "id": "Xy12ab9Q0"}]',
    tokenizer=V3,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
case(
    "id-not-mistral-shaped",
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}, "id": "call_1"}]',
    tokenizer=V3,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes="the call gets a fresh id; the written one is an ignored member (an event, not a "
    "recovery)",
    grammar="reject",
    refusal=(at('"call_1"', 5), "a Mistral id is nine letters and digits: '_' cannot be in it"),
)
case(
    "element-not-a-call",
    '[TOOL_CALLS] [{"query": "vllm"}]',
    tokenizer=V3,
    content='[TOOL_CALLS] [{"query": "vllm"}]',
    calls=[],
    grammar="reject",
    refusal=(at('"query"', 1), 'a call object has the keys "name", "arguments" and "id"'),
)
case(
    "tool-choice-none",
    '[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
    tokenizer=V3,
    content='[TOOL_CALLS] [{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
    calls=[],
    tool_choice="none",
)
case(
    "python-literal-not-strict-json",
    "[TOOL_CALLS] [{'name': 'search', 'arguments': {'query': \"it's\", 'top_k': 2, "
    "'exact': False}}]",
    tokenizer=V3,
    content=None,
    calls=[("search", {"query": "it's", "top_k": 2, "exact": False})],
    recoveries=("python-literal",),
    grammar="reject",
    refusal=(at("{'", 1), "JSON keys are in double quotes"),
)

# -- before v11: tekken v3 ------------------------------------------------------------------

template(
    "template-call-with-id",
    TEKKEN,
    [("get_current_weather", PARIS, "abcDEF123")],
    grammar="accept",
)
template(
    "template-required",
    TEKKEN,
    [("search", {"query": "vllm tool parsers", "top_k": 3}, "Q1w2E3r4T")],
    grammar="accept",
    tool_choice="required",
)
case(
    "wild-mlx-1643-read-file",
    '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "/tmp/test.txt"}, '
    '"id": "abcdefghi"}]',
    tokenizer=TEKKEN,
    tools=[
        tool(
            "read_file",
            "Read a file",
            {"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ],
    content=None,
    calls=[("read_file", {"path": "/tmp/test.txt"})],
    kind="wild",
    source="ml-explore/mlx-lm#1643 (the classic Mistral-Nemo / Mistral-Small-2409 form)",
    grammar="accept",
)
case(
    "wild-mlx-1374-ministral",
    '[TOOL_CALLS] [{"name": "calculator", "arguments": {"expression": "2+3"}}]',
    tokenizer=TEKKEN,
    tools=[
        tool(
            "calculator",
            "Evaluate an expression",
            {"type": "object", "properties": {"expression": {"type": "string"}}},
        )
    ],
    content=None,
    calls=[("calculator", {"expression": "2+3"})],
    kind="wild",
    source="ml-explore/mlx-lm#1374 (Ministral-8B-Instruct-2410; mlx-lm dropped the call)",
    model="mistralai/Ministral-8B-Instruct-2410",
    grammar="accept",
)
MAP_TOOLS = [
    tool(
        "add_layer_to_map",
        "Add a layer to a map",
        {
            "type": "object",
            "properties": {
                "map_id": {"type": "string"},
                "parameter": {"type": "string"},
                "source": {"type": "string"},
                "level": {"type": "string"},
            },
        },
    )
]
MAP_LIST = (
    '[{"name": "add_layer_to_map", "arguments": {"map_id": "map_0", "parameter": "WIND", '
    '"source": "AROME0.25", "level": "1000Hpa"}}, {"name": "add_layer_to_map", "arguments": '
    '{"map_id": "map_0", "parameter": "T", "source": "AROME0.25", "level": "1000Hpa"}}]'
)
case(
    "wild-call-list-as-text-without-marker",
    MAP_LIST,
    tokenizer=TEKKEN,
    tools=MAP_TOOLS,
    content=MAP_LIST,
    calls=[],
    kind="wild",
    source="mistralai/mistral-common#73 (mistral-large wrote its next calls as text, without "
    "[TOOL_CALLS]); tokenized here with the tekken v3 tokenizer",
    model="mistral-large-latest",
    notes="no [TOOL_CALLS]: not a call in this family (calls without a start marker are a "
    "llama3_json / pythonic reading, DESIGN §6)",
    grammar="accept",
)
case(
    "single-object-without-list",
    '[TOOL_CALLS]{"name": "get_time", "arguments": {"timezone": "UTC"}}',
    tokenizer=TEKKEN,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    grammar="accept",
)
case(
    "repeated-marker",
    '[TOOL_CALLS][TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}]',
    tokenizer=TEKKEN,
    content=None,
    calls=[("get_time", {"timezone": "UTC"})],
    notes="a [TOOL_CALLS] followed only by another is framing (vLLM reads them as one too)",
    grammar="reject",
    refusal=(
        at(TOOL_CALLS, nth=2),
        "after [TOOL_CALLS] comes a call list or object, not another marker",
    ),
)
case(
    "content-after-list",
    '[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}]\n'
    "I asked for the time in Tokyo.",
    tokenizer=TEKKEN,
    content="I asked for the time in Tokyo.",
    calls=[("get_time", {"timezone": "Asia/Tokyo"})],
    grammar="accept",
)
case(
    "unicode-arguments",
    '[TOOL_CALLS][{"name": "write_file", "arguments": {"path": "café.txt", "content": '
    '"北京欢迎你 ü"}}]',
    tokenizer=TEKKEN,
    content=None,
    calls=[("write_file", {"path": "café.txt", "content": "北京欢迎你 ü"})],
    grammar="accept",
)


# -- generated under the grammar (request.constrained) ----------------------------------------
#
# The text is the turn as each generation writes it (v11_turn: the v13 form without ids;
# pre_v11_turn: the list); the token ids are what the structural tag of the request's plan
# (at its own strict level) let through, one seeded choice per step
# (toolcall_conformance.constrained), so [TOOL_CALLS] and [ARGS] may come as their control
# tokens or as plain text, as the grammar allows. The seed is the case id. A tool marked
# ``strict: true`` puts ``auto`` under the grammar with that tool's schema pinned.


NAMED_TIME = {"type": "function", "function": {"name": "get_time"}}
MARKUP_IN_STRING = '# Calls\n\n[TOOL_CALLS]get_time[ARGS]{} and [{"name": "x"}] are text here.'
# No character outside tekken's merged tokens (an emoji): vLLM hands xgrammar tekken's vocab()
# as raw text, where every byte token reads U+FFFD, so no grammar lets such a character be
# written with a tekken tokenizer.
CONSTRAINED_PLANS: dict[str, tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]] = {
    "auto-strict-tool": (
        [("get_current_weather", {"city": "東京都", "unit": "celsius"})],
        {"tools": [strict_tool(WEATHER), TIME]},
    ),
    "required-two-calls": (
        [
            ("search", {"query": "tool calling", "top_k": 2, "exact": False}),
            ("get_time", {"timezone": "UTC"}),
        ],
        {"tool_choice": "required"},
    ),
    "named-call": ([("get_time", {"timezone": "UTC"})], {"tool_choice": NAMED_TIME}),
    "single-call-not-parallel": (
        [("write_file", {"path": "a.md", "content": MARKUP_IN_STRING})],
        {"tool_choice": "required", "parallel_tool_calls": False},
    ),
}


def compact_pre_v11_turn(content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """:func:`pre_v11_turn` with no blank after [TOOL_CALLS] (SentencePiece's detokenizer
    drops the blank of a word piece that follows a control token, so under a grammar that
    blank is not the text the parser receives)."""
    return pre_v11_turn(content, calls).replace(f"{TOOL_CALLS} [", f"{TOOL_CALLS}[", 1)


for tokenizer, turn, plans in (
    (
        V11,
        v11_turn,
        ("auto-strict-tool", "required-two-calls", "named-call", "single-call-not-parallel"),
    ),
    (V3, compact_pre_v11_turn, ("required-two-calls", "single-call-not-parallel")),
    (TEKKEN, compact_pre_v11_turn, ("auto-strict-tool", "named-call")),
):
    for plan in plans:
        calls, request = CONSTRAINED_PLANS[plan]
        case(
            f"constrained-{plan}",
            turn("", calls),
            tokenizer=tokenizer,
            content=None,
            calls=list(calls),
            kind="template" if tokenizer == V11 else "constructed",
            source=V13_FORMAT if tokenizer == V11 else CONSTRUCTED,
            notes="" if tokenizer == V11 else "the list right after [TOOL_CALLS]",
            grammar="accept",
            constrained=True,
            **request,
        )


# -- writing --------------------------------------------------------------------------------


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    tokenizer, slug = entry["tokenizer"], entry["slug"]
    common: dict[str, Any] = {
        "tokenizer": tokenizer,
        "parser": PARSER,
        "request": entry["request"],
        "provenance": entry["provenance"],
        "expected": entry["expected"],
        "finish_reason": entry["finish_reason"],
        "case_id": f"{PARSER}/{tokenizer}/{slug}",
    }
    if entry["constrained"]:
        del common["finish_reason"], common["parser"]  # ends on a stop token; the class
        data = build_case_under_grammar(
            Registry.load().get(PARSER), text=entry["text"], seed=common["case_id"], **common
        )
    elif entry["ids"] is not None:
        data = build_case_from_ids(token_ids=entry["ids"], **common)
    else:
        data = build_case(text=entry["text"], **common)
    # The tokenizer's tool markers matter to parsing (which generation it is) even where the
    # output does not use them: the parser's vocabulary lists them, as vLLM's does.
    specials = get_tokenizer(tokenizer).special_tokens
    data["special_tokens"] = dict(
        sorted(
            {
                **data["special_tokens"],
                **{t: specials[t] for t in MARKERS if t in specials},
            }.items(),
            key=lambda item: item[1],
        )
    )
    return ROOT / PARSER / tokenizer / f"{slug}.json", data


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="Mistral")


if __name__ == "__main__":
    raise SystemExit(main())
