"""The parsing policy (DESIGN §6) as ``pythonic`` and ``olmo3`` apply it, and bad input.

Every expectation is derived from the policy and the format (plugins/pythonic/README.md);
every text is also streamed under random splits through the contract checker, so no
exception escapes, chunking does not matter and nothing is lost.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from toolcall import EventName, NamedChoice, Parsed, Parser, ParserContext, Request, Tool
from toolcall.contract import check_cost, check_splits
from toolcall_pythonic import Olmo3Parser, PythonicParser

WEATHER = Tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
TIME = Tool("get_time", {"type": "object", "properties": {}})
TOOLS = Request(tools=(WEATHER, TIME))


def make(kind: type[Parser] = PythonicParser, *, strict: bool = False, **request: Any) -> Parser:
    return kind(
        ParserContext(
            request=Request(**{"tools": (WEATHER, TIME), **request}), strict_parsing=strict
        )
    )


def pieces(text: str, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    out = [list(text), [text]]
    for _ in range(12):
        steps, rest = [], text
        while rest:
            size = rng.randint(1, 9)
            steps.append(rest[:size])
            rest = rest[size:]
        out.append(steps)
    return out


def parse(parser: Parser, text: str, *, promptness: bool = True) -> Parsed:
    violations = check_splits(parser, text, pieces(text, len(text)), promptness=promptness)
    assert violations == [], "\n".join(map(str, violations[:5]))
    return parser.parse(text)


def calls(parsed: Parsed) -> list[tuple[str, str]]:
    return [(call.name, call.arguments) for call in parsed.tool_calls]


def events(parsed: Parsed) -> set[str]:
    return {event.name for event in parsed.events}


# -- pythonic: where calls stand -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content", "names"),
    [
        # At the start of the output, after whitespace: calls, whatever the name.
        ("[get_time()]", None, ["get_time"]),
        ("  \n\n[undeclared(a=1)]", None, ["undeclared"]),
        # After content: only at the start of a line and naming a declared tool.
        ("Checking.\n[get_time()]", "Checking.", ["get_time"]),
        ("Checking.\n[undeclared()]", "Checking.\n[undeclared()]", []),
        ("Checking. [get_time()]", "Checking. [get_time()]", []),
        ("Checking.\n  [get_time()]", "Checking.\n  [get_time()]", []),
        # Lines that cannot open a list, then one that does (read in one piece or many).
        ("One.\n  two\n\tthree\n\n[get_time()]", "One.\n  two\n\tthree", ["get_time"]),
        # Right after a list (whitespace between): calls again.
        ("[get_time()]\n[undeclared()]", None, ["get_time", "undeclared"]),
        ("[get_time()] [get_weather(city='x')]", None, ["get_time", "get_weather"]),
        # Text after a list is content, and so is a list after that text unless it qualifies.
        ("[get_time()] then [get_time()]", "then [get_time()]", ["get_time"]),
        ("[get_time()]\nthen\n[get_time()]", "then", ["get_time", "get_time"]),
        # <|python_tag|> before a list is framing.
        ("<|python_tag|>[get_time()]", None, ["get_time"]),
        ("Text<|python_tag|> [get_time()]", "Text", ["get_time"]),
        # A code fence is content; the list on its own line inside it is a list.
        ("```python\n[get_time()]\n```", "```python\n```", ["get_time"]),
    ],
)
def test_where_pythonic_calls_stand(text: str, content: str | None, names: list[str]) -> None:
    parsed = parse(make(), text)
    assert parsed.content == content
    assert [call.name for call in parsed.tool_calls] == names


def test_a_python_tag_not_before_a_list_is_content() -> None:
    parsed = parse(make(), "<|python_tag|>print('hi')")
    assert parsed.content == "<|python_tag|>print('hi')"
    assert events(parsed) == {EventName.UNPARSED_MARKUP}


def test_tool_choice_none_passes_everything_through() -> None:
    text = "[get_time()]\n<|python_tag|>[get_weather(city='x')]"
    parsed = parse(make(tool_choice="none"), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


# -- bad input (the list) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_calls", "content"),
    [
        # Unbalanced brackets: the call's ")" ends it; the list's "]" ends the list.
        ("[get_weather(city=['Paris')]", [("get_weather", '{"city": ')], "['Paris'"),
        ("[get_weather(city='Paris']", [("get_weather", '{"city": "Paris"')], None),
        ("[get_weather(city='Paris'))]", [("get_weather", '{"city": "Paris"}')], ")"),
        ("[[get_time()]]", [], "[[get_time()]]"),
        # A string never closed runs to the end of the output: the call is cut off.
        (
            "[get_weather(city='Paris), get_time()]",
            [("get_weather", '{"city": "Paris), get_time()]')],
            None,
        ),
        # Positional arguments.
        ("[f(1, 2)]", [("f", "")], "1, 2"),
        # A missing comma between calls.
        ("[f(a=1) g(b=2)]", [("f", '{"a": 1}')], "g(b=2)"),
        # f-strings: placeholders are expressions.
        ("[f(a=f'{x}')]", [("f", '{"a": "')], "{x}'"),
        ("[f(a=f'{{x}}')]", [("f", '{"a": "{x}"}')], None),
        # Expressions.
        ("[f(a=1+2)]", [("f", '{"a": 1')], "+2"),
        ("[f(a=x)]", [("f", '{"a": ')], "x"),
        ("[f(a=len('x'))]", [("f", '{"a": ')], "len('x')"),
    ],
)
def test_bad_input(text: str, expected_calls: list[tuple[str, str]], content: str | None) -> None:
    parsed = parse(make(), text, promptness=False)
    assert calls(parsed) == expected_calls
    assert parsed.content == content


def test_ten_thousand_calls() -> None:
    text = "[" + ", ".join(f"get_weather(city='c{i}')" for i in range(10000)) + "]"
    parsed = make().parse(text)
    assert len(parsed.tool_calls) == 10000
    assert parsed.tool_calls[-1].arguments == '{"city": "c9999"}'
    assert parsed.content is None
    assert parsed.events == ()


def test_a_one_megabyte_string_value_streams() -> None:
    value = "\u00e9x\"'\\\n" * 200_000
    text = f"[get_weather(city={value!r})]"
    stream = make().stream()
    deltas = []
    for at in range(0, len(text), 4096):
        deltas += stream.feed(text[at : at + 4096])
    deltas += stream.finish()
    arguments = "".join(entry.arguments for delta in deltas for entry in delta.tool_calls)
    assert json.loads(arguments) == {"city": value}
    # It streamed: many deltas carried argument text.
    assert sum(1 for delta in deltas if delta.tool_calls) > 200


def test_deeply_nested_literals_never_raise() -> None:
    depth = 50_000
    for opening, closing in (("[", "]"), ("{'a': ", "}"), ("(", ",)")):
        text = f"[f(a={opening * depth}1{closing * depth}), g()]"
        parsed = make().parse(text)
        assert [call.name for call in parsed.tool_calls] == ["f", "g"]
        # Emitted whole; deeper than json.loads reads back, so malformed-arguments.
        emitted = parsed.tool_calls[0].arguments
        assert emitted.count("[") + emitted.count("{") > depth
        assert EventName.MALFORMED_ARGUMENTS in events(parsed)
        assert parsed.tool_calls[1].arguments == "{}"


def test_strict_parsing_makes_recoveries_defects() -> None:
    text = "[f(a='two\nlines', b=true, c=07, from=1)]"
    lenient = parse(make(), text, promptness=False)
    assert json.loads(lenient.tool_calls[0].arguments) == {
        "a": "two\nlines",
        "b": True,
        "c": 7,
        "from": 1,
    }
    assert set(lenient.recoveries) == {
        "control-character",
        "json-literal",
        "leading-zero",
        "reserved-word",
    }
    strict = parse(make(strict=True), text, promptness=False)
    assert calls(strict) == [("f", '{"a": "two')]
    assert strict.recoveries == ()
    # The rest of the call is content (its leading line break trimmed, as content's is).
    assert strict.content == "lines', b=true, c=07, from=1"


# -- olmo3 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content", "expected_calls"),
    [
        ("<function_calls>get_time()</function_calls>", None, [("get_time", "{}")]),
        (
            "<function_calls>get_time()\nget_weather(city=null)</function_calls>",
            None,
            [("get_time", "{}"), ("get_weather", '{"city": null}')],
        ),
        # Inside a string, the markers are the string's text (the block has no end).
        (
            "<function_calls>get_weather(city='a</function_calls>b')",
            None,
            [("get_weather", '{"city": "a</function_calls>b"}')],
        ),
        (
            '<function_calls>get_weather(city="<function_calls>")</function_calls>',
            None,
            [("get_weather", '{"city": "<function_calls>"}')],
        ),
        # A new block before the end marker: the first ends there.
        (
            "<function_calls>get_time()<function_calls>get_time()</function_calls>",
            None,
            [("get_time", "{}"), ("get_time", "{}")],
        ),
        # Bare calls are not olmo3's format: content.
        ("get_time()", "get_time()", []),
        # An empty block is content.
        ("<function_calls>\n</function_calls>", "<function_calls>\n</function_calls>", []),
        # A line that cannot start a call (a quote) is content, and the next line is
        # read again (this once looped forever: the reader refused it before taking a
        # character, and the block opened a reader for the same line again).
        ("<function_calls>x\n'y", "<function_calls>x\n'y", []),
        (
            "<function_calls>\n'y\nget_time()</function_calls>",
            "<function_calls>\n'y",
            [("get_time", "{}")],
        ),
        # A line break inside what began as a name: the next line is read as a call,
        # whether the break came in the same delta or in an earlier one.
        (
            "<function_calls>g\net_time()</function_calls>",
            "<function_calls>g",
            [("et_time", "{}")],
        ),
        # Two calls on one line: the second is content (calls are one per line).
        (
            "<function_calls>get_time() get_time()</function_calls>",
            "get_time()",
            [("get_time", "{}")],
        ),
    ],
)
def test_olmo3_blocks(
    text: str, content: str | None, expected_calls: list[tuple[str, str]]
) -> None:
    parsed = parse(make(Olmo3Parser), text, promptness=False)
    assert parsed.content == content
    assert calls(parsed) == expected_calls


def test_olmo3_named_and_required_requests_parse_like_auto() -> None:
    text = "<function_calls>get_weather(city='x')</function_calls>"
    for choice in ("required", NamedChoice("get_weather")):
        assert calls(parse(make(Olmo3Parser, tool_choice=choice), text)) == [
            ("get_weather", '{"city": "x"}')
        ]


# -- cost --------------------------------------------------------------------------------


def chunks(text: str, size: int = 4) -> list[str]:
    return [text[at : at + size] for at in range(0, len(text), size)]


@pytest.mark.parametrize(
    ("kind", "make_output"),
    [
        (PythonicParser, lambda n: chunks("Plain prose, no calls. " * n)),
        (PythonicParser, lambda n: chunks("line\n" * n)),
        (PythonicParser, lambda n: chunks("[get_weather(city='" + "ab" * n + "')]")),
        (PythonicParser, lambda n: chunks("[" + "get_time(), " * n + "get_time()]")),
        (PythonicParser, lambda n: chunks("x\n[" * n)),
        (
            Olmo3Parser,
            lambda n: chunks("<function_calls>" + "get_time()\n" * n + "</function_calls>"),
        ),
        (Olmo3Parser, lambda n: chunks("text < and > " * n)),
    ],
)
def test_cost_per_delta_is_flat(kind: type[Parser], make_output: Any) -> None:
    assert check_cost(make(kind), make_output) == []


# -- bare calls (recovery) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content", "expected_calls"),
    [
        ("get_weather(city='Paris')", None, [("get_weather", '{"city": "Paris"}')]),
        (
            "Sure.\nget_weather(city='Paris')\nget_time()\nDone.",
            "Sure.\nDone.",
            [("get_weather", '{"city": "Paris"}'), ("get_time", "{}")],
        ),
        ("Sure.\n  indented\n\nget_time()", "Sure.\n  indented", [("get_time", "{}")]),
        # The next line names no declared tool: the calls end there.
        ("get_time()\nprint('x')", "print('x')", [("get_time", "{}")]),
        # Text after the call on its line is content.
        ("get_time() is what I would call", "is what I would call", [("get_time", "{}")]),
    ],
)
def test_bare_calls_naming_declared_tools(
    text: str, content: str | None, expected_calls: list[tuple[str, str]]
) -> None:
    parsed = parse(make(), text, promptness=False)
    assert parsed.content == content
    assert calls(parsed) == expected_calls
    assert set(parsed.recoveries) == {"bare-call"}
    [event] = [e for e in parsed.events if e.name == EventName.BARE_CALL]
    assert event.call_index == 0


@pytest.mark.parametrize(
    "text",
    [
        "get the time for me",  # starts like get_time: held, then content
        "get_timer(a=1)",  # another name
        "get_time (a=1)",  # a space before "(": not this recovery
        "undeclared(a=1)",
        "print(get_time())",
        "Note:\nget the weather",
    ],
)
def test_lines_that_are_not_bare_calls_are_content(text: str) -> None:
    parsed = parse(make(), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert not parsed.recoveries


def test_strict_parsing_reads_no_bare_call() -> None:
    parsed = parse(make(strict=True), "get_time()")
    assert parsed.content == "get_time()"
    assert parsed.tool_calls == ()


@pytest.mark.parametrize("text", ["<function_calls>", "Done.<function_calls>"])
def test_an_olmo3_block_opened_as_the_output_ends_is_content_with_an_event(text: str) -> None:
    # The marker is content; a marker in content is said (DESIGN §4.4, no silent leaks).
    parsed = parse(make(Olmo3Parser), text, promptness=False)
    assert parsed.content == text
    assert parsed.tool_calls == ()
    assert EventName.UNPARSED_MARKUP in {event.name for event in parsed.events}
