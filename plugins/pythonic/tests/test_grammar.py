"""The structural tags, compiled by real xgrammar against the real tokenizers.

For every plan (auto, required, named, ``parallel_tool_calls: false``, tools pinned by
``strict: true`` or by the level, and not pinned) each tag must accept what the parser
reads cleanly for that request and refuse what the schema forbids. A property test
writes random arguments of the schema as Python source and checks both sides.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest
import xgrammar  # noqa: F401  (the grammar is part of the contract: without it, fail)
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall import NamedChoice, ParserContext, Request, StrictLevel, Tool
from toolcall.strictness import resolve_plan
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_pythonic import Olmo3Parser, PythonicParser

WEATHER = Tool(
    "get_weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
TIME = Tool("get_time", {"type": "object", "properties": {}})
CONFIG = Tool(
    "set_config",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "limits": {"type": "array", "items": {"type": "integer"}},
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean"},
            "owner": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/person"}]},
            "extra": {"type": "object"},
        },
        "required": ["name", "enabled"],
        "$defs": {
            "person": {
                "type": "object",
                "properties": {"login": {"type": "string"}, "id": {"type": "integer"}},
                "required": ["login"],
            }
        },
    },
)
STRICT_WEATHER = Tool(WEATHER.name, WEATHER.parameters, strict=True)
FAMILIES = {"pythonic": (PythonicParser, "llama3.1"), "olmo3": (Olmo3Parser, "olmo3")}


@cache
def session() -> GrammarSession:
    return GrammarSession()


COMPILED: dict[tuple[str, str, StrictLevel], Any] = {}


def compiled(family: str, request: Request, level: StrictLevel) -> Any:
    key = (family, repr(request), level)
    if key not in COMPILED:
        COMPILED[key] = compile_tag(family, request, level)
    return COMPILED[key]


def compile_tag(family: str, request: Request, level: StrictLevel) -> Any:
    parser_class, tokenizer = FAMILIES[family]
    plan = resolve_plan(request, strict_level=level)
    tag = parser_class(ParserContext(request=request)).structural_tag(plan)
    assert tag is not None
    json.dumps(tag)  # plain JSON data
    return session().compile(tag, get_tokenizer(tokenizer))


def accepts(
    family: str, request: Request, text: str, level: StrictLevel = StrictLevel.PARAMETER
) -> bool:
    tokenizer = get_tokenizer(FAMILIES[family][1])
    outcome = session().match(
        compiled(family, request, level),
        [*tokenizer.encode(text), tokenizer.stop_token_ids[0]],
        tokenizer.stop_token_ids,
    )
    return outcome.accepted


def parses_cleanly(family: str, request: Request, text: str) -> bool:
    parsed = FAMILIES[family][0](ParserContext(request=request)).parse(text)
    return bool(parsed.tool_calls) and not parsed.events


AUTO = Request(tools=(WEATHER, TIME, CONFIG))
REQUIRED = Request(tools=(WEATHER, TIME), tool_choice="required")
NAMED = Request(tools=(WEATHER, TIME), tool_choice=NamedChoice("get_weather"))
SINGLE = Request(tools=(WEATHER, TIME), parallel_tool_calls=False)

PYTHONIC = [
    # (request, text, accepted)
    (AUTO, "[get_weather(city='Paris', days=3)]", True),
    (AUTO, 'Sure.\n[get_weather(city="Paris"), get_time()]\nDone.', True),
    (AUTO, "No tool is needed: 2 + 2 = 4, and [x] stays text.", True),
    (AUTO, "[ get_weather ( city = 'Oslo' , unit = \"celsius\" , ) ]", True),
    (AUTO, "[get_weather(city='a' 'b', days=0x10), get_time()]", True),
    (AUTO, "[get_weather(city=r'\\d', days=-3)]", True),
    (AUTO, "[get_weather(city='''multi\nline''')]", True),
    (
        AUTO,
        "[set_config(name='x', limits=[1, 2], ratio=.5, enabled=True, owner={'login': 'k'})]",
        True,
    ),
    (
        AUTO,
        "[set_config(name='x', limits=(1, 2), enabled=False, owner=None, extra={1: [None]})]",
        True,
    ),
    (AUTO, "[set_config(name='x', limits={3, 1}, enabled=True)]", True),
    (AUTO, "[get_weather(days=3)]", False),  # a required keyword is missing
    (AUTO, "[get_weather(city=5)]", False),  # a string is required
    (AUTO, "[get_weather(city='x', unit='kelvin')]", False),  # not in the enum
    (AUTO, "[get_weather(city='x', country='NO')]", False),  # not declared
    (AUTO, "[get_weather(days=1, city='x')]", False),  # pinned: the schema's order
    (AUTO, "[set_config(name='x', enabled=True, owner={'id': 1})]", False),  # login missing
    (AUTO, "[set_config(name='x', enabled=1)]", False),  # a bool is required
    (AUTO, "[get_weather(city='x', days=true)]", False),  # not a Python literal
    (AUTO, "[nope()]", False),
    (AUTO, "Sure.\n[nope()]", False),
    # After a list at the start, and after <|python_tag|> anywhere, the parser reads a list
    # as calls whatever its first name (DESIGN §6): the grammar refuses an undeclared one.
    (AUTO, "[get_time()] [nope()]", False),
    (AUTO, "[get_time()][nope()]", False),
    (AUTO, "<|python_tag|>[nope()]", False),
    (AUTO, "Sure. <|python_tag|>[nope()]", False),
    (AUTO, "[get_time()] <|python_tag|>[nope()]", False),
    (AUTO, "<|python_tag|>[get_time()] [get_weather(city='x')]", True),
    (AUTO, "[get_time()] and then text", True),
    (AUTO, "<b>bold</b> text", True),
    (REQUIRED, "[get_weather(city='x'), get_time()]", True),
    (REQUIRED, "  [get_time()]\n", True),
    (REQUIRED, "I will not call anything.", False),
    (REQUIRED, "Text first\n[get_time()]", False),
    (NAMED, "[get_weather(city='x')]", True),
    (NAMED, "[get_time()]", False),
    (NAMED, "[get_weather(city='x'), get_weather(city='y')]", False),
    (SINGLE, "[get_time()]", True),
    (SINGLE, "[get_time(), get_time()]", False),
    (SINGLE, "[get_time()]\n[get_time()]", False),
    (SINGLE, "[get_time()] [get_time()]", False),
    (SINGLE, "[get_time()] <|python_tag|>[get_time()]", False),
    (SINGLE, "[get_time()] done", True),
]


@pytest.mark.parametrize(("request_", "text", "accepted"), PYTHONIC)
def test_pythonic_tags(request_: Request, text: str, accepted: bool) -> None:
    assert accepts("pythonic", request_, text) is accepted
    if accepted and "[" in text and "x] stays" not in text:
        assert parses_cleanly("pythonic", request_, text)


OLMO3 = [
    (AUTO, '<function_calls>get_weather(city="Paris", days=3)\nget_time()</function_calls>', True),
    (AUTO, "I'll check.\n<function_calls>\nget_weather(city='Oslo')\n</function_calls>", True),
    (AUTO, "<function_calls>set_config(name='x', enabled=true, owner=null)</function_calls>", True),
    (AUTO, "No call at all.", True),
    (AUTO, "<function_calls>get_weather(city=1)</function_calls>", False),
    (AUTO, "<function_calls>get_weather(city='x') get_time()</function_calls>", False),
    (AUTO, "<function_calls>nope()</function_calls>", False),
    (REQUIRED, '<function_calls>get_time()\nget_weather(city="x")</function_calls>', True),
    (REQUIRED, "No call.", False),
    (NAMED, '<function_calls>get_weather(city="x")</function_calls>', True),
    (NAMED, "<function_calls>get_time()</function_calls>", False),
    (SINGLE, "<function_calls>get_time()\nget_time()</function_calls>", False),
    (SINGLE, "<function_calls>get_time()</function_calls>", True),
]


@pytest.mark.parametrize(("request_", "text", "accepted"), OLMO3)
def test_olmo3_tags(request_: Request, text: str, accepted: bool) -> None:
    assert accepts("olmo3", request_, text) is accepted
    if accepted and "<function_calls>" in text:
        assert parses_cleanly("olmo3", request_, text)


def test_unpinned_tools_take_declared_keywords_in_any_order() -> None:
    level = StrictLevel.FUNCTION
    assert accepts("pythonic", AUTO, "[get_weather(days=1, city='x')]", level)
    assert accepts("pythonic", AUTO, "[get_weather(unit='kelvin')]", level) is False  # enum kept
    assert accepts("pythonic", AUTO, "[get_weather(city=1)]", level) is False  # type kept
    assert accepts("pythonic", AUTO, "[get_weather(country='x')]", level) is False


def test_a_strict_tool_is_pinned_and_the_others_are_not() -> None:
    mixed = Request(tools=(STRICT_WEATHER, CONFIG))
    plan = resolve_plan(mixed, strict_level=StrictLevel.AUTO)
    assert plan.grammar
    assert [tool_plan.pinned for tool_plan in plan.tools] == [True, False]
    level = StrictLevel.AUTO
    assert accepts("pythonic", mixed, "[get_weather(days=1, city='x')]", level) is False
    assert accepts("pythonic", mixed, "[set_config(enabled=True, name='x')]", level)


def test_no_tag_without_a_grammar() -> None:
    plan = resolve_plan(AUTO, strict_level=StrictLevel.AUTO)
    assert not plan.grammar
    assert PythonicParser(ParserContext(request=AUTO)).structural_tag(plan) is None
    assert Olmo3Parser(ParserContext(request=AUTO)).structural_tag(plan) is None


# -- property: random arguments of the schema, written as Python --------------------------


def python_source(value: object, rng: random.Random) -> str:
    if isinstance(value, str):
        text = repr(value)
        return text if rng.random() < 0.5 or '"' in value or "\\" in text else '"' + value + '"'
    if isinstance(value, list):
        if value and rng.random() < 0.3:
            return "(" + ", ".join(python_source(item, rng) for item in value) + ",)"
        return "[" + ", ".join(python_source(item, rng) for item in value) + "]"
    if isinstance(value, dict):
        ordered = sorted(value.items(), key=lambda item: ORDER.index(item[0]))  # pinned: in order
        pairs = (f"{python_source(k, rng)}: {python_source(v, rng)}" for k, v in ordered)
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
CONFIG_ARGUMENTS = st.fixed_dictionaries(
    {"name": TEXT, "enabled": st.booleans()},
    optional={
        "limits": st.lists(st.integers(-(10**6), 10**6), max_size=4),
        "ratio": st.floats(allow_nan=False, allow_infinity=False),
        "owner": st.one_of(
            st.none(),
            st.fixed_dictionaries({"login": TEXT}, optional={"id": st.integers(0, 99)}),
        ),
    },
)
ORDER = ["name", "limits", "ratio", "enabled", "owner", "extra", "login", "id"]


@settings(max_examples=60, deadline=None)
@given(arguments=CONFIG_ARGUMENTS, seed=st.integers(0, 1000))
def test_what_the_schema_allows_is_accepted_and_parsed_cleanly(
    arguments: dict[str, Any], seed: int
) -> None:
    rng = random.Random(seed)
    ordered = sorted(arguments.items(), key=lambda item: ORDER.index(item[0]))
    source = ", ".join(f"{key}={python_source(value, rng)}" for key, value in ordered)
    text = f"[set_config({source})]"
    request = Request(tools=(CONFIG,))
    assert accepts("pythonic", request, text), text
    parsed = PythonicParser(ParserContext(request=request)).parse(text)
    assert parsed.events == ()
    assert json.loads(parsed.tool_calls[0].arguments) == dict(ordered)
    olmo = f"<function_calls>set_config({source})</function_calls>"
    assert accepts("olmo3", request, olmo), olmo
