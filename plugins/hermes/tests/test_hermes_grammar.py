"""The structural tag, compiled by real xgrammar 0.2.8 against the real Qwen2.5 and
Llama-3.1 tokenizers, fed the real token ids of each output plus a stop token.

What must be accepted and refused follows from DESIGN §5 and plugins/hermes/README.md:
every framing the parser reads cleanly is accepted; a pinned schema, the declared names,
the call obligation and parallel_tool_calls=false are enforced.
"""

from __future__ import annotations

from typing import Any

import pytest

# xgrammar 0.2.8 is installed wherever these tests run (the plugin sessions): without it
# they fail, they do not skip.
import xgrammar
from hermes_testing import make_parser

from toolcall import NamedChoice, Request, StrictLevel, Tool, ToolChoice
from toolcall.strictness import Obligation, resolve_plan
from toolcall_conformance.grammar import GrammarSession
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_hermes.grammar import structural_tag

WEATHER = Tool(
    "get_weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
TIME = Tool("get_time", {"type": "object", "properties": {"tz": {"type": "string"}}})
STRICT_TIME = Tool(TIME.name, TIME.parameters, strict=True)

PARIS = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
UTC = '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}</tool_call>'


@pytest.fixture(scope="module")
def session() -> GrammarSession:
    return GrammarSession()


def accepts(
    session: GrammarSession,
    text: str,
    *,
    tools: tuple[Tool, ...] = (WEATHER, TIME),
    choice: Any = "auto",
    parallel: bool = True,
    level: StrictLevel | None = StrictLevel.PARAMETER,
    tokenizer: str = "qwen2.5",
) -> bool:
    plan = resolve_plan(
        Request(tools=tools, tool_choice=choice, parallel_tool_calls=parallel), strict_level=level
    )
    tag = structural_tag(plan)
    assert tag is not None
    real = get_tokenizer(tokenizer)
    ids = real.encode(text)
    stops = list(real.stop_token_ids)
    outcome = session.match(session.compile(tag, real), [*ids, stops[0]], stops)
    return outcome.accepted


# -- accepted: every framing the parser reads cleanly -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        PARIS,  # newline framing (Qwen2.5 / Hermes 3 templates)
        UTC,  # compact framing
        PARIS + "\n" + UTC,  # the template's newline between calls
        PARIS + UTC,  # nothing between calls
        PARIS + "\n\n  \n" + UTC + "\n",  # any whitespace between and after
        '<tool_call>\n{ "arguments": {"tz": "UTC"}, "name": "get_time"}\n</tool_call> ',
        '<tool_call>{"name":"get_weather","arguments":{"city":"Oslo","unit":"celsius"}}</tool_call>',
        '<tool_call>\n{"name": "get_time", "arguments": {"tz": "a </tool_call> b"}}\n</tool_call>',
    ],
)
def test_required_accepts_every_clean_framing(session: GrammarSession, text: str) -> None:
    assert accepts(session, text, choice="required")


def test_auto_accepts_content_around_calls(session: GrammarSession) -> None:
    text = "Let me check.\n" + PARIS + "\nI will report back.<tools> is not a trigger"
    assert accepts(session, text)
    assert accepts(session, "Just an answer, no call.")


def test_plain_text_markers_of_the_llama_vocabulary(session: GrammarSession) -> None:
    # Hermes 3 on the Llama-3.1 vocabulary: '<', 'tool', '_call', '>\n' ... as separate tokens.
    assert accepts(session, PARIS + "\n" + UTC, choice="required", tokenizer="llama3.1")
    wrong = PARIS.replace('"Paris"', "7")
    assert not accepts(session, wrong, choice="required", tokenizer="llama3.1")


# -- refused -------------------------------------------------------------------------------------


def test_a_pinned_schema_refuses_wrong_types_and_values(session: GrammarSession) -> None:
    assert not accepts(session, PARIS.replace('"Paris"', "3"), choice="required")
    assert not accepts(session, PARIS.replace('"Paris"}', '"Paris", "unit": "kelvin"}'))
    assert not accepts(session, PARIS.replace('{"city": "Paris"}', "{}"), choice="required")
    assert not accepts(session, PARIS.replace('"Paris"}', '"Paris", "extra": 1}'))


def test_undeclared_names_are_refused(session: GrammarSession) -> None:
    assert not accepts(session, PARIS.replace("get_weather", "get_stock"))
    assert not accepts(session, PARIS.replace("get_weather", "get_stock"), choice="required")


def test_required_refuses_text_before_and_no_call_at_all(session: GrammarSession) -> None:
    assert not accepts(session, "Sure.\n" + PARIS, choice="required")
    assert not accepts(session, "No call.", choice="required")
    assert accepts(session, "\n" + PARIS, choice="required")  # whitespace is framing


def test_named_choice_allows_exactly_one_call_of_that_tool(session: GrammarSession) -> None:
    named = NamedChoice("get_time")
    assert accepts(session, UTC, choice=named)
    assert not accepts(session, PARIS, choice=named)
    assert not accepts(session, UTC + "\n" + UTC, choice=named)


def test_not_parallel_stops_after_the_first_call(session: GrammarSession) -> None:
    assert accepts(session, PARIS + "\n", choice="required", parallel=False)
    assert not accepts(session, PARIS + "\n" + UTC, choice="required", parallel=False)
    assert accepts(session, "Checking. " + PARIS, parallel=False)
    assert not accepts(session, PARIS + "\n" + UTC, parallel=False)


def test_unpinned_tools_take_any_object(session: GrammarSession) -> None:
    # At FUNCTION level nothing is pinned: any JSON object passes, other JSON does not.
    level = StrictLevel.FUNCTION
    odd = PARIS.replace('{"city": "Paris"}', '{"anything": [1, {"x": null}]}')
    assert accepts(session, odd, choice="required", level=level)
    array = PARIS.replace('{"city": "Paris"}', "[1]")
    assert not accepts(session, array, choice="required", level=level)


def test_per_tool_strict_pins_only_that_tool(session: GrammarSession) -> None:
    tools = (WEATHER, STRICT_TIME)
    free = PARIS.replace('{"city": "Paris"}', '{"city": 3}')  # get_weather is not pinned
    assert accepts(session, free, tools=tools, level=None)
    assert not accepts(session, UTC.replace('"UTC"', "1"), tools=tools, level=None)


# -- the tag as data -------------------------------------------------------------------------------


def test_no_tag_without_a_grammar() -> None:
    plan = resolve_plan(Request(tools=(WEATHER,), tool_choice="auto"))
    assert plan.grammar is False
    assert structural_tag(plan) is None
    assert make_parser().structural_tag(plan) is None


def test_the_tag_is_valid_structural_tag_json_for_every_obligation() -> None:
    choices: list[tuple[ToolChoice, bool]] = [
        ("auto", False),
        ("required", True),
        ("required", False),
        (NamedChoice("get_time"), True),
    ]
    for choice, parallel in choices:
        plan = resolve_plan(
            Request(tools=(WEATHER, TIME), tool_choice=choice, parallel_tool_calls=parallel),
            strict_level=StrictLevel.FUNCTION,
        )
        tag = structural_tag(plan)
        assert tag is not None
        xgrammar.StructuralTag.model_validate(tag)
        if plan.obligation is Obligation.OPTIONAL:
            assert tag["format"]["elements"][0]["stop_after_first"] is True
