"""Write the Python-call conformance corpus (parsers ``pythonic`` and ``olmo3``).

    python conformance/corpus/pythonic.py            # (re)write every case file
    python conformance/corpus/pythonic.py --check    # fail if a file is not what it would write

``pythonic`` cases land in ``toolcall_conformance/cases/pythonic/llama3.1/`` and are
tokenized with the real Llama 3.1 tokenizer (Llama 3.2, the family's main model, shares it);
outputs of other models that write the same format (LiquidAI LFM2, whose own tokenizer is not
available here) are tokenized with it too, and say so. ``olmo3`` cases land in
``.../olmo3/olmo3/``, tokenized with the kit's ``olmo3`` tokenizer: Olmo 3's base vocabulary
is cl100k_base (rebuilt byte for byte from Llama 3's first 100,256 ranks, sha256 checked), with
the added tokens of the post-trained Olmo 3 tokenizer (``<function_calls>`` 100268,
``</function_calls>`` 100269) at the ids a public Olmo 3 post-training module pins; the real
tokenizer file is on the model hub only, so each case says so.

Provenance:

* ``wild``: raw outputs quoted in public issues and pull requests (or Meta's own prompt-format
  document), cited in ``source``;
* ``constructed``: written here to probe an edge of the policy.

Every ``expected`` is written by hand from the parsing policy (DESIGN §6,
plugins/pythonic/README.md) and the format, never from a parser's output. ``expected.grammar``
says what the structural tag must do with the case's tokens under the request's plan with the
strict level raised to ``parameter`` (every schema pinned: declared keywords only, in the
schema's order, required ones present); a ``reject`` says where the grammar must refuse
(``expected.grammar_refusal``): the first character that no output the tag allows can have
there, derived from the format and the schema (``toolcall_pythonic.grammar``), never from a run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall_conformance.builder import (
    Place,
    at,
    build_corpus_case,
    expected_parse,
    request_body,
    strict_tool,
    write_corpus,
)

ROOT = Path(__file__).resolve().parents[1] / "src" / "toolcall_conformance" / "cases"
TOKENIZERS = {"pythonic": "llama3.1", "olmo3": "olmo3"}
LLAMA32 = "meta-llama/Llama-3.2-3B-Instruct (Llama 3.1 tokenizer)"
LFM2 = "LiquidAI/LFM2 / LFM2.5 (tokenized with the Llama 3.1 tokenizer: LFM2's is not available)"
OLMO3 = (
    "allenai/Olmo-3-7B-Instruct (the kit's olmo3 tokenizer: cl100k_base + Olmo 3's added tokens "
    "at the ids a public post-training module pins; the real tokenizer file is not available)"
)
POLICY = "written by hand for the Python-call parsing policy (plugins/pythonic/README.md)"
OLMO_FORMAT = (
    "the olmo3 format as vllm-project/vllm#26143 states it: "
    "<function_calls>function1(arg1=value1)\\nfunction2(arg2=value2)</function_calls>"
)


def tool(
    name: str, properties: Mapping[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        parameters["required"] = list(required)
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
WEATHER = tool(
    "get_weather",
    {"city": STRING, "metric": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    ("city",),
)
USER_INFO = tool("get_user_info", {"user_id": INTEGER, "special": STRING}, ("user_id",))
TIME = tool("get_time", {"tz": STRING})
SEARCH = tool(
    "search",
    {
        "query": STRING,
        "limit": INTEGER,
        "exact": {"type": "boolean"},
        "filters": {"type": "object"},
    },
    ("query",),
)
WEB_SEARCH = tool("web_search_exa", {"query": STRING, "numResults": INTEGER}, ("query",))
TEMPERATURE = tool("get_current_temperature", {"location": STRING}, ("location",))
MOVE = tool("move", {"x": NUMBER, "y": NUMBER, "z": NUMBER}, ("x", "y", "z"))
COORDINATES = tool(
    "get_weather_at", {"latitude": NUMBER, "longitude": NUMBER}, ("latitude", "longitude")
)
RESIZE = tool("resize_image", {"size": {"type": "array", "items": INTEGER}}, ("size",))
TAGS = tool("tag_items", {"tags": {"type": "array", "items": STRING}}, ("tags",))
MEMORY = tool("memory_get", {"from": INTEGER}, ("from",))
SHELL = tool("run_command", {"command": STRING}, ("command",))
WRITE = tool("write", {"filePath": STRING, "content": STRING}, ("filePath", "content"))
GROCERY = tool(
    "grocery.orderIngredients", {"items": {"type": "array", "items": STRING}}, ("items",)
)
LOOKUP = tool("lookup", {"limit": INTEGER}, ("limit",))
CALENDAR = tool("get_events", {"month": INTEGER, "year": INTEGER}, ("month",))
DATABASE = tool(
    "db.query",
    {"sql": STRING, "params": {"type": "array"}, "opts": {"type": "object"}},
    ("sql",),
)
RUN = tool("run_python", {"code": STRING}, ("code",))

# -- rendering (the benchmark writes its outputs with these) ---------------------------------


def pythonic_turn(content: str, calls: list[tuple[str, Mapping[str, Any]]]) -> str:
    """An assistant turn in the ``pythonic`` format: the list first (as Llama 3.2 writes it,
    at the start of its answer), then any text on a line of its own; every value as Python
    source (``repr``). The text goes after the list because vLLM's built-in reads nothing
    before it, and the benchmark renders its turns with this function."""
    body = ", ".join(
        f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"
        for name, arguments in calls
    )
    return f"[{body}]" + ("\n" + content if content else "")


def olmo3_turn(content: str, calls: list[tuple[str, Mapping[str, Any]]]) -> str:
    """An assistant turn in the ``olmo3`` format: one call per line inside
    ``<function_calls>``, values as JSON text (a JSON string is a Python string literal),
    then any text (after the block, for the reason :func:`pythonic_turn` gives)."""
    lines = "\n".join(
        f"{name}("
        + ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items()
        )
        + ")"
        for name, arguments in calls
    )
    return f"<function_calls>{lines}</function_calls>" + ("\n" + content if content else "")


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
    source: str = POLICY,
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
    placed = None if refusal is None else (refusal[0](text), refusal[1])
    provenance: dict[str, Any] = {
        "kind": kind,
        "source": source,
        "model": model or (OLMO3 if parser == "olmo3" else LLAMA32),
    }
    if notes:
        provenance["notes"] = notes
    CASES.append(
        {
            "parser": parser,
            "slug": slug,
            "text": text,
            "request": request_body(tools, tool_choice, parallel_tool_calls, strict_level),
            "provenance": provenance,
            "expected": expected_parse(
                content, calls, recoveries=recoveries, grammar=grammar, refusal=placed
            ),
            "finish_reason": finish_reason,
            "constrained": constrained,
        }
    )


# -- pythonic: outputs quoted in public issues ----------------------------------------------

META_DOC = (
    "Meta's Llama 3.2 prompt-format document (llama-models 0.3.0, llama3_2/text_prompt_format.md)"
)
VLLM_48171 = "vllm-project/vllm#48171 (model outputs the lfm2 parser dropped)"
SGLANG_34237 = "sgl-project/sglang#34237 (LFM2 agent traces the pythonic detector dropped)"

case(
    "pythonic",
    "wild-meta-two-calls",
    "[get_weather(city='San Francisco', metric='celsius'), "
    "get_weather(city='Seattle', metric='celsius')]",
    tools=[WEATHER],
    content=None,
    calls=[
        ("get_weather", {"city": "San Francisco", "metric": "celsius"}),
        ("get_weather", {"city": "Seattle", "metric": "celsius"}),
    ],
    kind="wild",
    source=META_DOC + ", model response of the system-prompt example",
    grammar="accept",
)
case(
    "pythonic",
    "wild-meta-user-info",
    "[get_user_info(user_id=7890, special='black')]",
    tools=[USER_INFO],
    content=None,
    calls=[("get_user_info", {"user_id": 7890, "special": "black"})],
    kind="wild",
    source=META_DOC + ", model response of the user-message example",
    grammar="accept",
)
case(
    "pythonic",
    "wild-meta-python-tag",
    '<|python_tag|>[get_weather(city="San Francisco", metric="celsius")]',
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "San Francisco", "metric": "celsius"})],
    kind="wild",
    source=META_DOC + ", the tool-call turn of the multi-turn example",
    notes="<|python_tag|> before the list is framing (it reaches the parser only when the "
    "request keeps special tokens)",
)
case(
    "pythonic",
    "wild-lfm2-temperature",
    '[get_current_temperature(location="Tokyo")] ',
    tools=[TEMPERATURE],
    content=None,
    calls=[("get_current_temperature", {"location": "Tokyo"})],
    kind="wild",
    source="vllm-project/vllm#39243 (the call between LFM2's markers)",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-web-search",
    "[web_search_exa(query='current temperature in Mexico City', numResults=5)]",
    tools=[WEB_SEARCH],
    content=None,
    calls=[("web_search_exa", {"query": "current temperature in Mexico City", "numResults": 5})],
    kind="wild",
    source="ggml-org/llama.cpp#23838 (LiquidAI/LFM2.5-8B-A1B, the call between its markers)",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-negative-numbers",
    "[move(x=-10, y=5, z=-3.14)]",
    tools=[MOVE],
    content=None,
    calls=[("move", {"x": -10, "y": 5, "z": -3.14})],
    kind="wild",
    source="vllm-project/vllm#44777 (the table of calls the pythonic parser dropped)",
    grammar="accept",
)
case(
    "pythonic",
    "wild-negative-longitude",
    "[get_weather_at(latitude=40.7127753, longitude=-74.0046539)]",
    tools=[COORDINATES],
    content=None,
    calls=[("get_weather_at", {"latitude": 40.7127753, "longitude": -74.0046539})],
    kind="wild",
    source=VLLM_48171 + ": longitude=-74.0046539",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-tuple-argument",
    "[resize_image(size=(800, 600))]",
    tools=[RESIZE],
    content=None,
    calls=[("resize_image", {"size": [800, 600]})],
    kind="wild",
    source=VLLM_48171 + ": size=(800, 600)",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-set-fstring-plus",
    "[tag_items(tags={'a', 'b'}), search(query=f'hello', limit=+7)]",
    tools=[TAGS, SEARCH],
    content=None,
    calls=[("tag_items", {"tags": ["a", "b"]}), ("search", {"query": "hello", "limit": 7})],
    kind="wild",
    source=SGLANG_34237 + ": tags={'a', 'b'}, query=f'hello', limit=+7",
    model=LFM2,
    notes="a set is a list in the order written; an f-string without placeholders is a string",
    grammar="accept",
)
case(
    "pythonic",
    "wild-reserved-word",
    "[memory_get(from=1)]",
    tools=[MEMORY],
    content=None,
    calls=[("memory_get", {"from": 1})],
    kind="wild",
    source=VLLM_48171 + ": memory_get(from=1)",
    model=LFM2,
    recoveries=("reserved-word",),
)
case(
    "pythonic",
    "wild-raw-newlines",
    "[run_command(command='cat > f.py << EOF\nprint(\"hi\")\nEOF')]",
    tools=[SHELL],
    content=None,
    calls=[("run_command", {"command": 'cat > f.py << EOF\nprint("hi")\nEOF'})],
    kind="wild",
    source=VLLM_48171 + ": command='cat > f.py << EOF\\n...' with raw line breaks",
    model=LFM2,
    recoveries=("control-character",),
)
case(
    "pythonic",
    "wild-bracket-in-string",
    "[run_command(command='grep -F \"]\" log.txt')]",
    tools=[SHELL],
    content=None,
    calls=[("run_command", {"command": 'grep -F "]" log.txt'})],
    kind="wild",
    source=VLLM_48171 + ": command='grep -F \"]\" log.txt'",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-trailing-backslash",
    "[write(filePath='notes.txt', content='pattern \\\\')]",
    tools=[WRITE],
    content=None,
    calls=[("write", {"filePath": "notes.txt", "content": "pattern \\"})],
    kind="wild",
    source=VLLM_48171 + ": content='pattern \\\\' (a string ending in a backslash)",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-escaped-newline",
    "[write(filePath='/tmp/hello.py', "
    "content='# Hello World in Python\\nprint(\"Hello, World!\")')]",
    tools=[WRITE],
    content=None,
    calls=[
        (
            "write",
            {
                "filePath": "/tmp/hello.py",
                "content": '# Hello World in Python\nprint("Hello, World!")',
            },
        )
    ],
    kind="wild",
    source="ml-explore/mlx-lm#1785 (LiquidAI/LFM2.5-2.6B, the call between its markers)",
    model=LFM2,
    grammar="accept",
)
case(
    "pythonic",
    "wild-positional-argument",
    "[get_weather('Paris', metric='celsius')]",
    tools=[WEATHER],
    content="'Paris', metric='celsius'",
    calls=[("get_weather", "")],
    kind="wild",
    source=SGLANG_34237
    + ": get_weather('Paris', unit='celsius') (parameter renamed to the tool's)",
    model=LFM2,
    notes="a positional argument is a defect: the call keeps what was emitted (nothing), the "
    "rest of the call is content",
)
case(
    "pythonic",
    "wild-kwargs-unpacking",
    "[search(**{'query': 'cats'})]",
    tools=[SEARCH],
    content="**{'query': 'cats'}",
    calls=[("search", "")],
    kind="wild",
    source=SGLANG_34237 + ": search(**{'query': 'cats'})",
    model=LFM2,
)
case(
    "pythonic",
    "wild-infinite-number",
    "[lookup(limit=1e999)]",
    tools=[LOOKUP],
    content="1e999",
    calls=[("lookup", '{"limit": ')],
    kind="wild",
    source=SGLANG_34237 + ": limit=1e999",
    model=LFM2,
    notes="no JSON number holds it: a defect, never Infinity in the arguments",
)
case(
    "pythonic",
    "wild-dotted-name",
    "[grocery.orderIngredients(items=['eggs', 'milk'])]",
    tools=[GROCERY],
    content=None,
    calls=[("grocery.orderIngredients", {"items": ["eggs", "milk"]})],
    kind="wild",
    source="ml-explore/mlx-lm#1246 (dotted names such as grocery.orderIngredients in LFM outputs)",
    model=LFM2,
    grammar="accept",
)

case(
    "pythonic",
    "wild-lfm25-list-directory",
    '[list_directory(path="desktop")]',
    tools=[tool("list_directory", {"path": STRING}, ("path",))],
    content=None,
    calls=[("list_directory", {"path": "desktop"})],
    kind="wild",
    source="lmstudio-ai/lmstudio-bug-tracker#1979 (salah-8, 2026-05-29: "
    "LiquidAI/LFM2.5-8B-A1B-MLX-4bit in LM Studio 0.4.14 returned it as content; the call "
    "between its markers)",
    model=LFM2,
    notes="the tool declaration is reconstructed from the call (the thread gives none)",
    grammar="accept",
)
case(
    "pythonic",
    "wild-lfm25-browser-navigate",
    "[browser_navigate(url='/home/user1/workspace')]",
    tools=[tool("browser_navigate", {"url": STRING}, ("url",))],
    content=None,
    calls=[("browser_navigate", {"url": "/home/user1/workspace"})],
    kind="wild",
    source="theroyallab/tabbyAPI#464 (mpetruc, 2026-09-05: 'raw model output' of lfm2.5; the "
    "call between its markers)",
    model=LFM2,
    notes="the tool declaration is reconstructed from the call (the pull request gives none)",
    grammar="accept",
)

# -- pythonic: the policy ---------------------------------------------------------------------

case(
    "pythonic",
    "nested-quotes",
    "[run_command(command='sed -n '360,450p' f.py')]",
    tools=[SHELL],
    content=None,
    calls=[("run_command", {"command": "sed -n '360,450p' f.py"})],
    recoveries=("nested-quote",),
    notes="the shape vLLM 0.33's lfm2 recovery names (tool_parsers/utils.py)",
)
case(
    "pythonic",
    "leading-zero",
    "[get_events(month=07, year=2025)]",
    tools=[CALENDAR],
    content=None,
    calls=[("get_events", {"month": 7, "year": 2025})],
    recoveries=("leading-zero",),
)
case(
    "pythonic",
    "bare-call-at-start",
    "get_weather(city='Paris', metric='celsius')",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Paris", "metric": "celsius"})],
    recoveries=("bare-call",),
    notes="a call without its list, naming a declared tool (BFCL reads foo() like [foo()], "
    "ShishirPatil/gorilla#1028)",
)
case(
    "pythonic",
    "bare-calls-after-text",
    "I'll check both.\nget_weather(city='Paris')\nget_time(tz='CET')\nprint('not a tool')",
    tools=[WEATHER, TIME],
    content="I'll check both.\nprint('not a tool')",
    calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    recoveries=("bare-call",),
    notes="each line must start with a declared tool's name and (; the first other line ends "
    "the calls",
)
case(
    "pythonic",
    "json-literals",
    "[search(query='vllm', exact=true)]",
    tools=[SEARCH],
    content=None,
    calls=[("search", {"query": "vllm", "exact": True})],
    recoveries=("json-literal",),
)
case(
    "pythonic",
    "nested-values",
    '[search(query=\'vllm\', filters={"lang": "en", "years": [2024, 2025], "open": True})]',
    tools=[SEARCH],
    content=None,
    calls=[
        (
            "search",
            {"query": "vllm", "filters": {"lang": "en", "years": [2024, 2025], "open": True}},
        )
    ],
    grammar="accept",
)
case(
    "pythonic",
    "text-before-on-its-own-line",
    "Let me check the weather for you.\n[get_weather(city='Paris')]",
    tools=[WEATHER],
    content="Let me check the weather for you.",
    calls=[("get_weather", {"city": "Paris"})],
    grammar="accept",
)
case(
    "pythonic",
    "text-after-the-list",
    "[get_weather(city='Oslo'), get_time()]\nI asked for the weather and the time.",
    tools=[WEATHER, TIME],
    content="I asked for the weather and the time.",
    calls=[("get_weather", {"city": "Oslo"}), ("get_time", {})],
    grammar="accept",
)
case(
    "pythonic",
    "undeclared-name-after-text",
    "Here is what I would run:\n[delete_everything(force=True)]",
    tools=[WEATHER],
    content="Here is what I would run:\n[delete_everything(force=True)]",
    calls=[],
    notes="after content, a list is calls only when its first call names a declared tool",
    grammar="reject",
    refusal=(
        at("delete_everything"),
        "a list that starts a line holds calls: 'd' starts no declared name",
    ),
)
case(
    "pythonic",
    "undeclared-name-in-a-second-list",
    '[get_weather(city="Oslo")] [delete_everything(force=True)]',
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Oslo"}), ("delete_everything", {"force": True})],
    notes="right after a list (whitespace between), a list is calls whatever its first name",
    grammar="reject",
    refusal=(
        at("delete_everything"),
        "a '[' right after a list at the start opens a call list: 'd' starts no declared name",
    ),
)
case(
    "pythonic",
    "undeclared-name-after-python-tag",
    "<|python_tag|>[delete_everything(force=True)]",
    tools=[WEATHER],
    content=None,
    calls=[("delete_everything", {"force": True})],
    notes="after <|python_tag|> a list is calls whatever its first name",
    grammar="reject",
    refusal=(
        at("delete_everything"),
        "after <|python_tag|> a '[' opens a call list: 'd' starts no declared name",
    ),
)
case(
    "pythonic",
    "list-inside-a-line-is-content",
    "You would write [get_weather(city='Oslo')] for that.",
    tools=[WEATHER],
    content="You would write [get_weather(city='Oslo')] for that.",
    calls=[],
    notes="a list after content must start a line",
    grammar="accept",
)
case(
    "pythonic",
    "markdown-link-is-content",
    "[the vLLM docs](https://docs.vllm.ai) explain tool calling.",
    tools=[WEATHER],
    content="[the vLLM docs](https://docs.vllm.ai) explain tool calling.",
    calls=[],
    notes="a list whose first element is not a call is content",
    grammar="reject",
    refusal=(at("the"), "a '[' at the start opens the call list: 't' starts no declared name"),
)
case(
    "pythonic",
    "one-malformed-call-of-three",
    "[get_weather(city='Paris'), get_weather(city=Rome), get_weather(city='Oslo')]",
    tools=[WEATHER],
    content="Rome",
    calls=[
        ("get_weather", {"city": "Paris"}),
        ("get_weather", '{"city": '),
        ("get_weather", {"city": "Oslo"}),
    ],
    notes="a bare name is no literal: that call keeps '{\"city\": ', the others parse",
)
case(
    "pythonic",
    "missing-comma-between-calls",
    "[get_weather(city='Paris') get_weather(city='Rome')]",
    tools=[WEATHER],
    content="get_weather(city='Rome')",
    calls=[("get_weather", {"city": "Paris"})],
    notes="an element without a , before it is content up to the next , or ]",
)
case(
    "pythonic",
    "cut-inside-a-string",
    "[get_weather(city='San Fra",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", '{"city": "San Fra')],
    finish_reason="length",
)
case(
    "pythonic",
    "unicode-and-empty-arguments",
    "[get_time(), get_weather(city='Z\u00fcrich \u6771\u4eac \U0001f324')]",
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_time", {}), ("get_weather", {"city": "Z\u00fcrich \u6771\u4eac \U0001f324"})],
    grammar="accept",
)
case(
    "pythonic",
    "schema-violation",
    "[get_weather(city=42)]",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": 42})],
    notes="the parser keeps the call; the grammar refuses an integer city",
    grammar="reject",
    refusal=(at("42"), "city is a string: a number cannot be its value"),
)
case(
    "pythonic",
    "named-choice",
    "[get_weather(city='Oslo', metric='celsius')]",
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_weather", {"city": "Oslo", "metric": "celsius"})],
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
    grammar="accept",
)
case(
    "pythonic",
    "named-choice-other-tool",
    "[get_time(tz='CET')]",
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_time", {"tz": "CET"})],
    tool_choice={"type": "function", "function": {"name": "get_weather"}},
    notes="the named tool is get_weather: the grammar refuses another; the parser keeps the call",
    grammar="reject",
    refusal=(at("get_time", 4), "the named tool is get_weather: 'get_t' cannot be it"),
)
case(
    "pythonic",
    "parallel-false-two-calls",
    "[get_weather(city='Paris'), get_weather(city='Rome')]",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
    parallel_tool_calls=False,
    notes="the parser returns what was written; the grammar allows one call",
    grammar="reject",
    refusal=(at("get_weather", nth=2), "parallel_tool_calls false: the list closes after one call"),
)
case(
    "pythonic",
    "required-missing-key",
    "[get_weather(metric='celsius')]",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"metric": "celsius"})],
    tool_choice="required",
    grammar="reject",
    refusal=(at("metric"), "city is required and comes first (the schema's order)"),
)
case(
    "pythonic",
    "tool-choice-none",
    "[get_weather(city='Oslo')]",
    tools=[WEATHER],
    content="[get_weather(city='Oslo')]",
    calls=[],
    tool_choice="none",
)

# -- olmo3 --------------------------------------------------------------------------------------

case(
    "olmo3",
    "two-calls-one-per-line",
    '<function_calls>get_weather(city="Paris", metric="celsius")\n'
    'get_time(tz="CET")</function_calls>',
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_weather", {"city": "Paris", "metric": "celsius"}), ("get_time", {"tz": "CET"})],
    source=OLMO_FORMAT,
    grammar="accept",
)
case(
    "olmo3",
    "json-literals-native",
    '<function_calls>search(query="vllm", exact=true, limit=null)</function_calls>',
    tools=[
        tool(
            "search",
            {"query": STRING, "exact": {"type": "boolean"}, "limit": {"type": ["integer", "null"]}},
            ("query",),
        )
    ],
    content=None,
    calls=[("search", {"query": "vllm", "exact": True, "limit": None})],
    source=OLMO_FORMAT + "; JSON literals are native to olmo3 (no recovery)",
    grammar="accept",
)
case(
    "olmo3",
    "python-literals-too",
    "<function_calls>search(query='vllm', exact=True, filters={'lang': None})</function_calls>",
    tools=[SEARCH],
    content=None,
    calls=[("search", {"query": "vllm", "exact": True, "filters": {"lang": None}})],
    grammar="accept",
)
case(
    "olmo3",
    "text-around-the-block",
    'I will look that up.\n<function_calls>get_weather(city="Oslo")</function_calls>\nOne moment.',
    tools=[WEATHER],
    content="I will look that up.\nOne moment.",
    calls=[("get_weather", {"city": "Oslo"})],
    grammar="accept",
)
case(
    "olmo3",
    "line-breaks-inside-the-block",
    '<function_calls>\nget_weather(city="Oslo")\n\nget_time()\n</function_calls>',
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_weather", {"city": "Oslo"}), ("get_time", {})],
    grammar="accept",
)
case(
    "olmo3",
    "dotted-name-and-nested-values",
    '<function_calls>db.query(sql="SELECT name FROM users WHERE id = ?", params=[7, "a"], '
    'opts={"timeout": 30, "retry": false})</function_calls>',
    tools=[DATABASE],
    content=None,
    calls=[
        (
            "db.query",
            {
                "sql": "SELECT name FROM users WHERE id = ?",
                "params": [7, "a"],
                "opts": {"timeout": 30, "retry": False},
            },
        )
    ],
    grammar="accept",
)
case(
    "olmo3",
    "block-with-no-call",
    "<function_calls>I cannot call a tool for that.</function_calls>",
    tools=[WEATHER],
    content="<function_calls>I cannot call a tool for that.</function_calls>",
    calls=[],
    notes="a block whose first line is not a call is content, markers included",
)
case(
    "olmo3",
    "missing-end-marker",
    '<function_calls>get_weather(city="Oslo")',
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": "Oslo"})],
    recoveries=("missing-end",),
)
case(
    "olmo3",
    "cut-inside-a-string",
    '<function_calls>get_weather(city="Os',
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", '{"city": "Os')],
    finish_reason="length",
)
case(
    "olmo3",
    "defect-then-good-call",
    '<function_calls>get_weather(city=Oslo)\nget_time(tz="CET")</function_calls>',
    tools=[WEATHER, TIME],
    content="Oslo",
    calls=[("get_weather", '{"city": '), ("get_time", {"tz": "CET"})],
)
case(
    "olmo3",
    "end-marker-before-the-paren",
    '<function_calls>get_weather(city="Oslo"</function_calls>',
    tools=[WEATHER],
    content='"',
    calls=[("get_weather", '{"city": "Oslo')],
    notes="the block ends inside the call: malformed; the closing quote had not been emitted",
)
case(
    "olmo3",
    "stray-end-marker",
    "Nothing to call here.</function_calls>",
    tools=[WEATHER],
    content="Nothing to call here.</function_calls>",
    calls=[],
)
case(
    "olmo3",
    "raw-newlines-in-code",
    '<function_calls>run_python(code="for i in range(3):\n    print(i)")</function_calls>',
    tools=[RUN],
    content=None,
    calls=[("run_python", {"code": "for i in range(3):\n    print(i)"})],
    recoveries=("control-character",),
)
case(
    "olmo3",
    "a-prose-line-between-calls",
    '<function_calls>get_weather(city="Oslo")\nand then\nget_time(tz="CET")</function_calls>',
    tools=[WEATHER, TIME],
    content="and then",
    calls=[("get_weather", {"city": "Oslo"}), ("get_time", {"tz": "CET"})],
)
case(
    "olmo3",
    "schema-violation",
    "<function_calls>get_weather(city=5)</function_calls>",
    tools=[WEATHER],
    content=None,
    calls=[("get_weather", {"city": 5})],
    grammar="reject",
    refusal=(at("5)"), "city is a string: a number cannot be its value"),
)
case(
    "olmo3",
    "required-one-call",
    '<function_calls>get_time(tz="UTC")</function_calls>',
    tools=[WEATHER, TIME],
    content=None,
    calls=[("get_time", {"tz": "UTC"})],
    tool_choice="required",
    parallel_tool_calls=False,
    grammar="accept",
)
case(
    "olmo3",
    "parallel-false-two-calls",
    '<function_calls>get_time(tz="UTC")\nget_time(tz="CET")</function_calls>',
    tools=[TIME],
    content=None,
    calls=[("get_time", {"tz": "UTC"}), ("get_time", {"tz": "CET"})],
    parallel_tool_calls=False,
    grammar="reject",
    refusal=(at("get_time", nth=2), "parallel_tool_calls false: the block closes after one call"),
)
case(
    "olmo3",
    "markers-inside-a-string",
    '<function_calls>write(filePath="olmo.md", content="Calls end with </function_calls>; '
    'blocks open with <function_calls>.")</function_calls>',
    tools=[WRITE],
    content=None,
    calls=[
        (
            "write",
            {
                "filePath": "olmo.md",
                "content": "Calls end with </function_calls>; blocks open with <function_calls>.",
            },
        )
    ],
    notes="inside a string literal both markers are the string's text; the block ends at the "
    "marker after the call",
    grammar="accept",
)
case(
    "olmo3",
    "tool-choice-none",
    '<function_calls>get_weather(city="Oslo")</function_calls>',
    tools=[WEATHER],
    content='<function_calls>get_weather(city="Oslo")</function_calls>',
    calls=[],
    tool_choice="none",
)


# -- generated under the grammar (request.constrained) ----------------------------------------
#
# The text is the format's own turn (pythonic_turn, olmo3_turn: the writers the benchmark
# uses); the token ids are what the structural tag of the request's plan (at its own strict
# level) let through, one seeded choice per step (toolcall_conformance.constrained). The seed
# is the case id. A tool marked ``strict: true`` puts ``auto`` under the grammar with that
# tool's schema pinned.


for parser, turn in (("pythonic", pythonic_turn), ("olmo3", olmo3_turn)):
    plans: list[tuple[str, list[tuple[str, dict[str, Any]]], dict[str, Any]]] = [
        (
            "constrained-auto-strict-tool",
            [("get_weather", {"city": "Zürich 東京 🌤", "metric": "celsius"})],
            {"tools": [strict_tool(WEATHER), TIME]},
        ),
        (
            "constrained-required-two-calls",
            [("search", {"query": "tool calling", "limit": 2, "exact": False}), ("get_time", {})],
            {"tools": [SEARCH, TIME], "tool_choice": "required"},
        ),
        (
            "constrained-named-call",
            [("get_time", {"tz": "UTC"})],
            {
                "tools": [WEATHER, TIME],
                "tool_choice": {"type": "function", "function": {"name": "get_time"}},
            },
        ),
        (
            "constrained-single-call-not-parallel",
            [("run_command", {"command": "echo '[get_time()]' \"<function_calls>\""})],
            {"tools": [SHELL, TIME], "tool_choice": "required", "parallel_tool_calls": False},
        ),
    ]
    for slug, calls, request in plans:
        case(
            parser,
            slug,
            turn("", calls),
            content=None,
            calls=list(calls),
            grammar="accept",
            constrained=True,
            notes="the text is the format's turn as the corpus writes it (pythonic_turn, "
            "olmo3_turn)",
            **request,
        )


# -- writing --------------------------------------------------------------------------------


def build(entry: Mapping[str, Any]) -> tuple[Path, dict[str, Any]]:
    fields = {key: entry[key] for key in ("text", "request", "provenance", "expected")}
    return build_corpus_case(
        ROOT,
        tokenizer=TOKENIZERS[entry["parser"]],
        parser=entry["parser"],
        slug=entry["slug"],
        finish_reason=entry["finish_reason"],
        constrained=entry["constrained"],
        **fields,
    )


def main(argv: list[str] | None = None) -> int:
    return write_corpus((build(entry) for entry in CASES), argv, label="Python-call")


if __name__ == "__main__":
    raise SystemExit(main())
