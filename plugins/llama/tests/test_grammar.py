"""The structural tags, compiled by real xgrammar 0.2.8 against the real Llama 3.1 and
Llama 4 tokenizers, fed the real token ids of each output plus a stop token.

What must be accepted and refused follows from DESIGN §5 and the README: every spelling the
parser reads cleanly is accepted; pinned schemas, declared names, the call obligation and
``parallel_tool_calls: false`` are enforced.
"""

from __future__ import annotations

from typing import Any

import pytest
import xgrammar  # the grammar is part of the contract: without xgrammar these tests fail

from toolcall import NamedChoice, Parser, ParserContext, Request, StrictLevel, Tool
from toolcall.pygrammar import PythonCalls, literal
from toolcall.strictness import ToolPlan, resolve_plan
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_llama import Llama3JsonParser, Llama4JsonParser, Llama4PythonicParser

WEATHER = Tool(
    "get_weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["city"],
    },
)
TIME = Tool("get_time", {"type": "object", "properties": {"tz": {"type": "string"}}})
TOKENIZER = {
    Llama3JsonParser: "llama3.1",
    Llama4JsonParser: "llama4",
    Llama4PythonicParser: "llama4",
}


@pytest.fixture(scope="module")
def session() -> GrammarSession:
    return GrammarSession()


def accepts(
    session: GrammarSession,
    parser_class: type[Parser],
    text: str,
    *,
    tools: tuple[Tool, ...] = (WEATHER, TIME),
    choice: Any = "auto",
    parallel: bool = True,
    level: StrictLevel | None = StrictLevel.PARAMETER,
) -> bool:
    request = Request(tools=tools, tool_choice=choice, parallel_tool_calls=parallel)
    plan = resolve_plan(request, strict_level=level)
    tag = parser_class(ParserContext(request=request)).structural_tag(plan)
    assert tag is not None
    tokenizer = get_tokenizer(TOKENIZER[parser_class])
    compiled = session.compile(tag, tokenizer)
    stops = list(tokenizer.stop_token_ids)
    outcome = session.match(compiled, [*tokenizer.encode(text), stops[0]], stops)
    return outcome.accepted


JSON = [Llama3JsonParser, Llama4JsonParser]
W = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
T = '{"name": "get_time", "arguments": {"tz": "UTC"}}'


@pytest.mark.parametrize("parser_class", JSON)
@pytest.mark.parametrize(
    "text",
    [
        W,
        f"{W}; {T}",
        f"{W}\n{T}",
        W + T,
        '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}',
        '{ "parameters" : {"city":"Paris"} , "name" : "get_weather" }',
        '{\n    "type": "function",\n    "name": "get_time",\n    "parameters": {}\n}',
    ],
)
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_every_clean_json_spelling_is_accepted(
    session: GrammarSession, parser_class: type[Parser], text: str, choice: str
) -> None:
    assert accepts(session, parser_class, text, choice=choice)


@pytest.mark.parametrize(
    ("parser_class", "text"),
    [
        (Llama3JsonParser, f"<|python_tag|>{W}; {T}"),
        (Llama4JsonParser, f"<|python_start|>{W}{T}<|python_end|>"),
        (Llama4JsonParser, f"<|python_start|>{W}"),
    ],
)
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_the_run_markers_are_accepted(
    session: GrammarSession, parser_class: type[Parser], text: str, choice: str
) -> None:
    assert accepts(session, parser_class, text, choice=choice)


@pytest.mark.parametrize("parser_class", JSON)
def test_auto_leaves_text_and_other_json_free(
    session: GrammarSession, parser_class: type[Parser]
) -> None:
    text = 'Here is the record:\n{"name": "Alice", "age": 30}\nand {"a": [1]}.'
    assert accepts(session, parser_class, text)
    assert not accepts(session, parser_class, text, choice="required")


@pytest.mark.parametrize("parser_class", JSON)
@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "parameters": {"city": 5}}',
        '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "kelvin"}}',
        '{"name": "get_weather", "parameters": {"unit": "celsius"}}',
        '{"name": "get_weather", "parameters": "{\\"city\\": \\"Paris\\"}"}',
    ],
)
def test_pinned_schemas_are_enforced(
    session: GrammarSession, parser_class: type[Parser], text: str
) -> None:
    assert not accepts(session, parser_class, text)
    # Unpinned (strict level function), any JSON object is allowed, a string is not.
    is_object = '"parameters": {' in text
    assert accepts(session, parser_class, text, level=StrictLevel.FUNCTION) is is_object


def test_undeclared_tools_after_a_marker_are_refused(session: GrammarSession) -> None:
    text = '<|python_tag|>{"name": "get_stock", "parameters": {}}'
    assert not accepts(session, Llama3JsonParser, text)


STOCK = '{"name": "get_stock", "parameters": {}}'


@pytest.mark.parametrize("parser_class", JSON)
@pytest.mark.parametrize(
    "text",
    [
        STOCK,
        '  \n{"type": "function", "name": "get_stock", "parameters": {}}',
        '{"parameters": {}, "name": "get_stock"}',
        '{ "name" : "get_stock", "parameters": {}}',
        f"{W}; {STOCK}",
        f"{W}\n{STOCK}",
        W + STOCK,
        f"[{STOCK}]",
        f"[{T}, {STOCK}]",
        '{"type": "function", "function": {"name": "get_stock", "parameters": {}}}',
        "{'name': 'get_stock', 'parameters': {}}",
    ],
)
@pytest.mark.parametrize("parallel", [True, False])
def test_an_undeclared_call_without_a_marker_is_refused_at_the_start(
    session: GrammarSession, parser_class: type[Parser], text: str, parallel: bool
) -> None:
    # The parser reads a call object at the start, and every call of the run it begins,
    # as a call whatever its name (DESIGN §6): under auto the grammar must refuse it.
    if not parallel and text.count("{") > 2:
        return  # one call only: a second call is refused anyway
    assert not accepts(session, parser_class, text, parallel=parallel)


@pytest.mark.parametrize("parser_class", JSON)
@pytest.mark.parametrize(
    "text",
    [
        '{"answer": 42, "unit": "km"}',
        '  {"type": "function", "answer": 1} then text',
        '{"parameters": {"x": 1}} and more',
        "{}",
        '{"name": 5}',
        "{'answer': 'it is'}",
        "[1, 2] are numbers",
        '[{"answer": 42}]',
        "<b>bold</b> text",
        f"{W}; that is all",
        f'{W}\n{{"answer": 1}}',
        f"{W};\n",
        f"{T}\nAnd then [x]",
    ],
)
def test_content_that_is_no_call_stays_free_at_the_start(
    session: GrammarSession, parser_class: type[Parser], text: str
) -> None:
    assert accepts(session, parser_class, text)


@pytest.mark.parametrize("parser_class", JSON)
def test_named_and_single_call(session: GrammarSession, parser_class: type[Parser]) -> None:
    named = NamedChoice("get_time")
    assert accepts(session, parser_class, T, choice=named)
    assert not accepts(session, parser_class, W, choice=named)
    assert not accepts(session, parser_class, f"{T}; {T}", choice=named)
    assert accepts(session, parser_class, W, parallel=False)
    assert not accepts(session, parser_class, f"{W}; {T}", parallel=False)
    assert not accepts(session, parser_class, f"{W}; {T}", choice="required", parallel=False)


# -- llama4_pythonic ----------------------------------------------------------------------------

PY = Llama4PythonicParser


@pytest.mark.parametrize(
    "text",
    [
        "[get_weather(city='Paris', days=3)]",
        '[get_weather(city="Paris", unit=\'celsius\'), get_time(tz="UTC")]',
        "[ get_weather( city = 'Paris' , ) ]",
        '<|python_start|>[get_time(tz="UTC")]<|python_end|>',
        '<|python_start|>get_time(tz="UTC")\nget_weather(city="Oslo")<|python_end|>',
        "[get_time()]",
    ],
)
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_every_clean_python_spelling_is_accepted(
    session: GrammarSession, text: str, choice: str
) -> None:
    assert accepts(session, PY, text, choice=choice)


@pytest.mark.parametrize(
    "text",
    [
        "[get_weather(city=5)]",
        "[get_weather(city='Paris', unit='kelvin')]",
        "[get_weather(city='Paris', days='3')]",
        "[get_weather(town='Paris')]",
        "[get_weather('Paris')]",
        "[get_weather(city=true)]",
    ],
)
def test_pinned_python_schemas_are_enforced(session: GrammarSession, text: str) -> None:
    assert not accepts(session, PY, text)


def test_python_text_around_and_unpinned_tools(session: GrammarSession) -> None:
    assert accepts(session, PY, "See [the docs](x). Then [get_time(tz='UTC')] ok")
    assert not accepts(session, PY, "See [the docs](x).", choice="required")
    assert accepts(session, PY, "[get_weather(town='Paris')]", level=StrictLevel.FUNCTION)
    assert not accepts(session, PY, "[get_stock(x=1)]", choice="required")
    assert not accepts(session, PY, "[get_time(), get_time()]", parallel=False)
    named = NamedChoice("get_time")
    assert accepts(session, PY, "[get_time(tz='UTC')]", choice=named)
    assert not accepts(session, PY, "[get_weather(city='Paris')]", choice=named)


@pytest.mark.parametrize(
    "text",
    [
        "[get_stock(x=1)]",
        "  [get_stock(x=1), get_time()]",
        "[get_stock (x=1)]",
        "[get_time()] [get_stock(x=1)]",
        "[get_time()]\n[get_stock(x=1)]",
    ],
)
@pytest.mark.parametrize("parallel", [True, False])
def test_an_undeclared_call_list_is_refused_at_the_start(
    session: GrammarSession, text: str, parallel: bool
) -> None:
    # At the start of the output, and after a list there, the parser reads a list of
    # calls whatever its first name (DESIGN §6): under auto the grammar must refuse it.
    assert not accepts(session, PY, text, parallel=parallel)


@pytest.mark.parametrize(
    "text",
    [
        "[the docs](x) come first",
        "[1, 2] are numbers",
        "[] and more",
        "[get_stock] is a name",
        "[get_time()] and [get_stock(x=1)] as text",
        "[get_time()]\n\n[note] x",
        "[ get_time( ) ] [get_time()]",
        "<b>bold</b> [get_time()]",
    ],
)
def test_python_content_that_is_no_call_stays_free_at_the_start(
    session: GrammarSession, text: str
) -> None:
    assert accepts(session, PY, text)


TYPES = Tool(
    "f",
    {
        "type": "object",
        "properties": {
            "n": {"type": "number"},
            "flag": {"type": "boolean"},
            "nothing": {"type": "null"},
            "maybe": {"type": ["string", "null"]},
            "items": {"type": "array", "items": {"type": "integer"}},
            "point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "label": {"const": "it's"}},
            },
            "any": {},
            "either": {"anyOf": [{"type": "integer"}, {"enum": ["a", 'b"c']}]},
        },
    },
)


@pytest.mark.parametrize(
    ("arguments", "ok"),
    [
        ("n=-1.5e3, flag=True, nothing=None, maybe=None", True),
        ("maybe='x', items=[1, 2,], either=7", True),
        ("items=(1, 2)", True),
        ('point={\'x\': 1, "label": "it\'s"}', True),
        ("point={'x': 1, 'label': 'it\\'s'}", True),
        ("any={'a': [None, (1,)]}, either='b\"c'", True),
        ('either="b\\"c"', True),
        ("flag=1", False),
        ("items=['1']", False),
        ("point={'x': 1.5}", False),
        ("point={'label': 'its'}", False),
        ("either='c'", False),
        ("nothing=0", False),
    ],
)
def test_python_literals_typed_by_schema(session: GrammarSession, arguments: str, ok: bool) -> None:
    assert accepts(session, PY, f"[f({arguments})]", tools=(TYPES,)) is ok


def test_literals_and_rules() -> None:
    assert literal(True) == '"True"'
    assert literal(None) == '"None"'
    assert literal(3) == '"3"'
    assert literal("it's") == '("\'it\\\\\'s\'" | "\\"it\'s\\"")'
    calls = PythonCalls([ToolPlan(WEATHER, pinned=True), ToolPlan(TIME, pinned=False)])
    assert calls.names == ("get_weather", "get_time")
    grammar = calls.grammar(calls.call())
    assert grammar.startswith("root ::= (call_0 | call_1)")
    xgrammar.Grammar.from_ebnf(grammar)  # the EBNF is well formed
