"""The parsing policy (DESIGN §6) for GLM: recoveries, defects, truncation, bad input.

Expected values follow from the format and the policy as plugins/glm/README.md states
it; the delta contract (toolcall.contract) is checked alongside.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from typing import Any

import pytest
from glm_testing import (
    CODE,
    TIME,
    WEATHER,
    args_of,
    assert_contract,
    event_names,
    feed_all,
    make_parser,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcall import WHITESPACE, ParserContext, Request, is_blank, strict_parsing_from_env
from toolcall.contract import check_cost, check_stream
from toolcall_glm import MARKERS, Glm45Parser, Glm47Parser

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
MISSING_OPEN = (
    "<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value></tool_call>"
)


# -- missing-value-open ------------------------------------------------------------------


def test_missing_value_open_reads_the_value() -> None:
    parser = make_parser([SEARCH])
    parsed = parser.parse(MISSING_OPEN)
    assert args_of(parsed) == [{"query": "how many vacation days left"}]
    assert parsed.recoveries == ("missing-value-open",)
    assert parsed.content is None
    assert_contract(parser, MISSING_OPEN, promptness=False)


def test_missing_value_open_types_the_value() -> None:
    parser = make_parser([WEATHER])
    text = (
        "<tool_call>get_weather\n<arg_key>days</arg_key>\n 4</arg_value>"
        "\n<arg_key>city</arg_key>\nRome</arg_value>\n</tool_call>"
    )
    parsed = parser.parse(text)
    assert args_of(parsed) == [{"days": 4, "city": "Rome"}]
    assert set(parsed.recoveries) == {"missing-value-open"}


def test_strict_parsing_turns_missing_value_open_into_a_defect() -> None:
    parser = make_parser([SEARCH], strict_parsing=True)
    parsed = parser.parse(MISSING_OPEN)
    # The key was emitted at </arg_key>; the value never opened: the rest is content.
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", '{"query": ')]
    assert parsed.content == "how many vacation days left</arg_value>"
    assert parsed.recoveries == ()
    assert "malformed-arguments" in event_names(parsed)
    assert_contract(parser, MISSING_OPEN)


def test_strict_parsing_comes_from_the_environment() -> None:
    strict = strict_parsing_from_env({"TOOLCALL_STRICT_PARSING": "1"})
    request = Request.from_openai({"tools": [SEARCH]})
    parsed = Glm47Parser(ParserContext(request=request, strict_parsing=strict)).parse(MISSING_OPEN)
    assert parsed.recoveries == ()
    assert parsed.tool_calls[0].arguments == '{"query": '


def test_missing_end_is_a_recovery_and_strict_parsing_keeps_it_truncated() -> None:
    text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value>"
    parsed = make_parser().parse(text)
    assert args_of(parsed) == [{"city": "Oslo"}]
    assert parsed.recoveries == ("missing-end",)
    strict = make_parser(strict_parsing=True).parse(text)
    assert strict.tool_calls[0].arguments == '{"city": "Oslo"'
    assert "truncated" in event_names(strict)


# -- defects never change the calls around them -------------------------------------------

GOOD_BEFORE = (
    "Let me see.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    "\n</tool_call>"
)
GOOD_AFTER = (
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Madrid</arg_value>"
    "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>"
)
GOOD_CALLS = [{"city": "Paris"}, {"city": "Madrid", "days": 2}]

# (defect, the arguments of the call it adds, or None when its name never completes):
# from the policy, not from a run. The test puts a newline on each side of the defect.
DEFECTS = [
    ("<tool_call>get_weather\n<arg_key>city\n<arg_value>Rome</arg_value>\n</tool_call>", ""),
    ("<tool_call>get_weather\n<arg_value>Rome</arg_value>\n</tool_call>", ""),
    (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rome\n</tool_call>",
        '{"city": "Rome\\n',
    ),
    (
        "<tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>3<arg_key>x</arg_key></tool_call>",
        '{"days": ',
    ),
    (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>a</arg_value>b</tool_call>",
        '{"city": "a"',
    ),
    ("<tool_call>get_weather\n<arg_key>city</arg_key><tool_call>", '{"city": '),
    ("<tool_call>get_time\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n", '{"x": 1'),
    ('<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>', None),
    ("<tool_call></tool_call>", None),
    ("<tool_call>get weather\n</tool_call>", None),
    ("<tool_call>get_weather", ""),  # the newline after it completes the name
    ("<tool_call>get_weather<tool_call>", None),
    ("<tool_call>\n</arg_key></tool_call>", None),
    ("</tool_call></arg_value><arg_key>", None),
    ("<tool_call>f(x=1)</tool_call>", None),
]


@pytest.mark.parametrize(("defect", "arguments"), DEFECTS, ids=range(len(DEFECTS)))
@pytest.mark.parametrize("parser_class", [Glm45Parser, Glm47Parser])
def test_a_defect_leaves_the_calls_around_it_alone(
    defect: str, arguments: str | None, parser_class: type[Glm45Parser]
) -> None:
    parser = make_parser(parser_class=parser_class)
    text = f"{GOOD_BEFORE}\n{defect}\n{GOOD_AFTER}"
    parsed = parser.parse(text)
    calls = [(c.name, c.arguments) for c in parsed.tool_calls]
    good = [json.loads(args) for _, args in (calls[0], calls[-1])]
    assert good == GOOD_CALLS
    if arguments is None:
        # No readable name: no call, the markup is content, verbatim.
        assert len(calls) == 2
        assert defect.strip() in (parsed.content or "")
        assert "unparsed-markup" in event_names(parsed)
    else:
        # The name was complete: a call with what was streamed before the defect.
        assert len(calls) == 3
        assert calls[1][1] == arguments
        assert "malformed-arguments" in event_names(parsed)
    assert_contract(parser, text, seed=len(defect))


def test_the_rest_of_a_defective_call_is_content_verbatim() -> None:
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>a</arg_value>"
        "b\n\n<x>\n</tool_call>after"
    )
    parsed = make_parser().parse(text)
    assert parsed.tool_calls[0].arguments == '{"city": "a"'
    assert parsed.content == "b\n\n<x>after"


# -- duplicates -------------------------------------------------------------------------------


def test_a_repeated_key_keeps_the_first_value_and_the_rest_of_the_call() -> None:
    text = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
        "<arg_key> city </arg_key><arg_value>Lyon</arg_value>"
        "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>"
    )
    parser = make_parser()
    parsed = parser.parse(text)
    arguments = parsed.tool_calls[0].arguments
    assert json.loads(arguments) == {"city": "Paris", "days": 2}
    assert arguments == json.dumps({"city": "Paris", "days": 2}, ensure_ascii=False)
    assert parsed.content == "<arg_key> city </arg_key><arg_value>Lyon</arg_value>"
    assert "duplicate-key" in event_names(parsed)
    assert "malformed-arguments" not in event_names(parsed)
    assert_contract(parser, text)


# -- truncation --------------------------------------------------------------------------------

TRUNCATED_SOURCE = (
    "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>São Paulo</arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value>12</arg_value>\n</tool_call>"
    '<tool_call>run_code<arg_key>data</arg_key><arg_value>[1, {"a": "</arg"}]</arg_value>'
    "<arg_key>code</arg_key><arg_value>x = '<'\n</arg_value></tool_call>"
)


def test_every_truncation_keeps_exactly_what_was_streamed(glm_tokenizer: Any) -> None:
    strict = make_parser(strict_parsing=True)
    whole = strict.parse(TRUNCATED_SOURCE)
    assert args_of(whole) == [
        {"city": "São Paulo", "days": 12},
        {"data": [1, {"a": "</arg"}], "code": "x = '<'\n"},
    ]
    # Cut after every token of the real tokenizer (each marker is one token).
    tokens = glm_tokenizer.decode_steps(glm_tokenizer.encode(TRUNCATED_SOURCE))
    assert "".join(tokens) == TRUNCATED_SOURCE
    for end in range(len(tokens) + 1):
        steps = tokens[:end]
        prefix = "".join(steps)
        parsed = strict.parse(prefix)
        assert len(parsed.tool_calls) <= len(whole.tool_calls)
        for cut, full in zip(parsed.tool_calls, whole.tool_calls, strict=False):
            assert cut.name == full.name
            assert full.arguments.startswith(cut.arguments), prefix
        for parser in (strict, make_parser()):
            _, violations = check_stream(parser, steps, promptness=parser is strict)
            assert violations == [], (prefix, [str(v) for v in violations])


def test_a_cut_anywhere_keeps_the_contract() -> None:
    # Cut inside a marker too: the unfinished marker is then text.
    for end in range(len(TRUNCATED_SOURCE) + 1):
        prefix = TRUNCATED_SOURCE[:end]
        for parser in (make_parser(strict_parsing=True), make_parser()):
            _, violations = check_stream(parser, list(prefix), promptness=False)
            assert violations == [], (prefix, [str(v) for v in violations])


# -- tool_choice, names, values ------------------------------------------------------------------


def test_tool_choice_none_returns_everything_as_content() -> None:
    text = "I would call:\n<tool_call>get_time\n</tool_call>"
    parser = make_parser(tool_choice="none")
    parsed = parser.parse(text)
    assert parsed.tool_calls == ()
    assert parsed.content == text
    assert "unparsed-markup" in event_names(parsed)
    assert_contract(parser, text)


def test_an_unknown_tool_is_kept_with_json_values() -> None:
    text = (
        "<tool_call>get_stock<arg_key>symbol</arg_key><arg_value>AAPL</arg_value>"
        "<arg_key>n</arg_key><arg_value>5</arg_value></tool_call>"
    )
    parsed = make_parser([WEATHER]).parse(text)
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("get_stock", {"symbol": "AAPL", "n": 5})
    ]


def test_names_are_kept_as_written() -> None:
    for name in ("functions.get_weather", "mcp__files__read", "天气", "a-b:c/d"):
        parsed = make_parser().parse(f"<tool_call>{name}\n</tool_call>")
        assert [c.name for c in parsed.tool_calls] == [name]
    assert (
        make_parser().parse("<tool_call>\n  get_time  \n</tool_call>").tool_calls[0].name
        == "get_time"
    )


def test_empty_values_and_keys() -> None:
    text = (
        "<tool_call>run_code<arg_key>code</arg_key><arg_value></arg_value>"
        "<arg_key></arg_key><arg_value></arg_value>"
        "<arg_key>data</arg_key><arg_value></arg_value></tool_call>"
    )
    parsed = make_parser().parse(text)
    assert args_of(parsed) == [{"code": "", "": "", "data": ""}]


# -- random outputs: round trip and the contract ------------------------------------------------

KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
SAFE_TEXT = st.text(max_size=30).filter(lambda s: not any(marker in s for marker in MARKERS))
JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    SAFE_TEXT,
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SAFE_TEXT, inner, max_size=3),
    max_leaves=6,
)
TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


def schema_type(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return TYPES[type(value)]


def render(name: str, arguments: dict[str, Any], newlines: bool) -> str:
    nl = "\n" if newlines else ""
    body = "".join(
        f"{nl}<arg_key>{key}</arg_key>{nl}<arg_value>"
        f"{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}</arg_value>"
        for key, value in arguments.items()
    )
    return f"<tool_call>{name}{body}{nl}</tool_call>"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    calls=st.lists(st.dictionaries(KEYS, JSON_VALUE, max_size=4), min_size=1, max_size=3),
    newlines=st.booleans(),
    before=SAFE_TEXT,
    seed=st.integers(0, 2**16),
)
def test_rendered_calls_round_trip_in_both_framings(
    calls: list[dict[str, Any]], newlines: bool, before: str, seed: int
) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"tool{i}",
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": schema_type(v)} for k, v in args.items()},
                },
            },
        }
        for i, args in enumerate(calls)
    ]
    text = before + "".join(render(f"tool{i}", args, newlines) for i, args in enumerate(calls))
    parser = make_parser(tools)
    parsed = parser.parse(text)
    assert [json.loads(c.arguments) for c in parsed.tool_calls] == calls
    for call, args in zip(parsed.tool_calls, calls, strict=True):
        assert call.arguments == json.dumps(args, ensure_ascii=False)
    # Whitespace around calls is framing; whitespace-only content is null.
    want = before.strip(WHITESPACE)
    assert parsed.content == (None if is_blank(want) else want)
    assert parsed.events == ()
    assert_contract(parser, text, seed=seed)


FRAGMENTS = st.sampled_from(
    [
        *MARKERS,
        *(marker[:cut] for marker in MARKERS for cut in (1, 3, 7)),
        "get_weather",
        "run_code",
        "city",
        "days",
        "code",
        "data",
        "unknown_fn",
        "Paris",
        "12",
        "[1, 2]",
        '{"a": 1}',
        "\n",
        " ",
        "\t",
        '"',
        "\\",
        "{",
        "é 🗼",
        "text",
        "<",
        ">",
        "/",
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fragments=st.lists(FRAGMENTS, max_size=40),
    strict=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_markup_soup_keeps_the_contract(fragments: list[str], strict: bool, seed: int) -> None:
    """Clauses 1-5 on garbage. Clause 6 is left out here: a call's first key, opened by
    the <arg_key> that completed its name (framing), is held until </arg_key>; when it
    turns out to be content (a defect), the checker sees held text that does not start
    with a marker. Real keys are short; the corpus and round-trip tests check clause 6."""
    text = "".join(fragments)
    parser = make_parser(strict_parsing=strict)
    if len(text) > 1:
        assert_contract(parser, text, seed=seed, promptness=False)
    else:
        _, violations = check_stream(parser, [text], promptness=False)
        assert violations == []


# -- large values and cost ---------------------------------------------------------------------


def chunks(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_a_one_megabyte_string_value_streams_whole() -> None:
    rng = random.Random(7)
    pieces = [
        "".join(rng.choices(string.ascii_letters, k=rng.randint(1, 40))) for _ in range(40_000)
    ]
    noise = ["</arg_val", "<arg", '"', "\n", "\\", "é", "</arg_value >", "< /arg_value>"]
    value = "".join(p + rng.choice(noise) for p in pieces)[:1_000_000]
    assert len(value) == 1_000_000
    text = f"<tool_call>run_code<arg_key>code</arg_key><arg_value>{value}</arg_value></tool_call>"
    parser = make_parser()
    per_step, parsed = feed_all(parser, chunks(text, 5))
    assert json.loads(parsed.tool_calls[0].arguments) == {"code": value}
    assert parsed == parser.parse(text).__class__(
        content=None, tool_calls=parsed.tool_calls, events=(), framing=parsed.framing
    )
    assert parser.parse(text).tool_calls[0].arguments == parsed.tool_calls[0].arguments
    released = sum(1 for step in per_step[:-1] if step)
    assert released > len(per_step) // 2, "the value streams as it arrives"


def test_a_one_megabyte_json_value_and_garbage_lose_nothing() -> None:
    array = json.dumps(list(range(150_000)))
    assert len(array) > 1_000_000
    text = f"<tool_call>run_code<arg_key>data</arg_key><arg_value>{array}</arg_value></tool_call>"
    parsed = make_parser().parse(text)
    assert json.loads(parsed.tool_calls[0].arguments) == {"data": list(range(150_000))}
    garbage = "<tool_call>" + "x" * 1_000_000
    assert make_parser().parse(garbage).content == garbage
    key = "<tool_call>f<arg_key>" + "k" * 1_000_000
    parsed = make_parser().parse(key)
    # The <arg_key> that completed the name is framing; the unread key is content.
    assert parsed.content == "k" * 1_000_000
    assert parsed.tool_calls[0].arguments == ""


COST_OUTPUTS: dict[str, Callable[[int], str]] = {
    "string value": lambda n: (
        "<tool_call>run_code<arg_key>code</arg_key><arg_value>" + "word, " * n
    ),
    "json value": lambda n: "<tool_call>run_code<arg_key>data</arg_key><arg_value>[" + "12, " * n,
    "key": lambda n: "<tool_call>run_code<arg_key>" + "key_" * n,
    "name": lambda n: "<tool_call>" + "name" * n,
    "content": lambda n: "Some text " * n,
    "defect rest": lambda n: "<tool_call>get_time<arg_value>x</arg_value>" + "junk " * n,
    "repeated pair": lambda n: (
        "<tool_call>run_code<arg_key>code</arg_key><arg_value>a</arg_value>"
        "<arg_key>code</arg_key><arg_value>" + "dup " * n
    ),
    "missing open": lambda n: "<tool_call>run_code<arg_key>data</arg_key>" + "1, " * n,
    "maybe null": lambda n: (
        "<tool_call>run_code<arg_key>note</arg_key><arg_value>" + " \n" * n + "nu"
    ),
    "optional string": lambda n: (
        "<tool_call>run_code<arg_key>note</arg_key><arg_value>" + " \n" * n + "x" + "y\n" * n
    ),
    "unicode spaces": lambda n: "\u00a0 \u3000\n" * n,
    "between calls": lambda n: "<tool_call>get_time</tool_call>\n" * n,
}


@pytest.mark.parametrize("kind", list(COST_OUTPUTS))
def test_work_per_delta_does_not_grow_with_the_output(kind: str) -> None:
    make = COST_OUTPUTS[kind]
    violations = check_cost(make_parser([CODE, TIME]), lambda n: chunks(make(n), 3))
    assert violations == [], [str(v) for v in violations]


# -- nothing escapes -------------------------------------------------------------------------


def test_an_internal_error_becomes_content_not_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolcall_glm import parser as module

    parser = make_parser()
    stream = parser.stream()
    assert [d.content for d in stream.feed("Hi <tool_call>get_time")] == ["Hi"]

    def broken(self: object, *args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(module.GlmStream, "on_marker", broken)
    deltas = stream.feed("</tool_call> and more")
    deltas += stream.feed(" text")
    deltas += stream.finish()
    assert "".join(d.content for d in deltas).endswith("</tool_call> and more text")
    assert [e.name for e in stream.events][-1] == "internal-error"


def test_feed_after_finish_is_an_error_not_more_output() -> None:
    """Issue 16.7: a finished stream takes no more text."""
    stream = make_parser().stream()
    stream.feed("Hi")
    stream.finish()
    with pytest.raises(RuntimeError, match="after finish"):
        stream.feed("x<tool_call>y")
    assert stream.finish() == []


def test_feed_takes_only_text() -> None:
    stream = make_parser().stream()
    for bad in (None, 3, b"<tool_call>", ["a"]):
        with pytest.raises(TypeError, match=type(bad).__name__):
            stream.feed(bad)  # type: ignore[arg-type]
    assert [d.content for d in stream.feed("ok")] == ["ok"]


@pytest.mark.parametrize("text", ["", "\ud800", "\x00<tool_call>\x00\n</tool_call>", "<" * 50])
def test_odd_input_does_not_raise(text: str) -> None:
    parser = make_parser()
    _, violations = check_stream(parser, list(text) or [""])
    assert violations == []
