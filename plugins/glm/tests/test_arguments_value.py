"""The value of a call's arguments that GLM hands to ``close_call`` (so that a one-shot parse
does not decode 1 MB of arguments a second time) must be exactly what a strict decode of the
arguments text gives: a wrong one would pass arguments the check should flag, or flag sound
ones. Checked against a strict decode, and against a stream that always decodes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from glm_testing import CODE, WEATHER, make_parser

from toolcall import Parsed, Parser, ParserContext, assemble
from toolcall.scanning import UNDECODED
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_glm import Glm45Parser
from toolcall_glm.parser import GlmStream


class _Handing(GlmStream):
    """Records each value handed to close_call, with the arguments text it stands for."""

    def __init__(self, parser: Glm45Parser, handed: list[tuple[str, object]]) -> None:
        super().__init__(parser)
        self.handed = handed

    def close_call(self, *, check: bool = True, value: object = UNDECODED) -> None:
        if value is not UNDECODED:
            self.handed.append((self.arguments_text(), value))
        super().close_call(check=check, value=value)


class _Decoding(GlmStream):
    """Never hands a value over: close_call decodes the arguments text itself."""

    def close_call(self, *, check: bool = True, value: object = UNDECODED) -> None:
        del value
        super().close_call(check=check)


class _HandingParser(Glm45Parser):
    handed: list[tuple[str, object]]

    def __init__(self, context: ParserContext | None = None) -> None:
        super().__init__(context)
        self.handed = []

    def stream(self) -> GlmStream:
        return _Handing(self, self.handed)


class _DecodingParser(Glm45Parser):
    def stream(self) -> GlmStream:
        return _Decoding(self)


def _reject(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def strict(text: str) -> object:
    """RFC 8259 JSON, strictly (DESIGN §4.3): no NaN, no Infinity, no float beyond range."""
    return json.loads(text, parse_constant=_reject, parse_float=_finite)


def same(a: object, b: object) -> bool:
    """Equal, and of the same JSON types all the way down (``1 == True`` is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def summary(parsed: Parsed) -> tuple[object, ...]:
    calls = [(call.name, call.arguments) for call in parsed.tool_calls]  # ids are fresh
    return (parsed.content, calls, parsed.events, parsed.framing)


def call(*pairs: tuple[str, str], name: str = "run_code", sep: str = "") -> str:
    body = "".join(
        f"{sep}<arg_key>{key}</arg_key>{sep}<arg_value>{value}</arg_value>" for key, value in pairs
    )
    return f"<tool_call>{name}{sep}{body}{sep}</tool_call>"


TYPED: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "typed",
        "parameters": {
            "type": "object",
            "properties": {
                "n": {"type": "number"},
                "i": {"type": "integer"},
                "b": {"type": "boolean"},
                "o": {"type": "object"},
                "s": {"type": ["string", "null"]},
            },
        },
    },
}
TOOLS = (WEATHER, CODE, TYPED)

OUTPUTS = [
    call(("code", "print(\"a\\\\b\")\n\tx = '\x01\x1f\x7f é 😀 <b>'")),
    call(("code", "x\ud800y"), ("note", "null")),
    call(("note", "nul"), ("data", "[1, 2.5, -0.0, true, null]"), sep="\n"),
    call(("note", " null "), ("code", "")),
    call(("n", "1e400"), ("i", "12"), ("b", "true"), name="typed"),
    call(("n", "1e308"), ("n", "2"), ("o", '{"k": [1, {"z": null}]}'), name="typed"),
    call(("o", '"\\ud800"'), ("s", "nullx"), ("s", "again"), name="typed"),
    call(("x", "1.5"), ("y", "[1e999]"), ("z", "not json"), name="unknown_tool"),
    call(("a\x01b", "v"), ("c", "</arg_key>"), name="unknown_tool"),
    "Done.\n<tool_call>get_weather\n<arg_key>city</arg_key>\nParis</arg_value>\n</tool_call>",
    "<tool_call>get_weather<arg_key>city</arg_key></arg_value></tool_call>",
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value>",
    "<tool_call>get_time\n</tool_call><tool_call>run_code<arg_key>code</arg_key><arg_value>1",
]


def corpus_outputs() -> list[str]:
    cases, errors = load_cases(shipped_case_dirs("glm45") + shipped_case_dirs("glm47"))
    assert errors == []
    return ["".join(step.text for step in case.steps) for case in cases]


def splits(text: str) -> list[list[str]]:
    """One piece (a one-shot parse), a character at a time, and a few characters at a time."""
    return [[text], list(text), [text[i : i + 3] for i in range(0, len(text), 3)]]


def run(parser: Parser, steps: list[str]) -> Parsed:
    stream = parser.stream()
    deltas = [delta for step in steps for delta in stream.feed(step)] + stream.finish()
    return assemble(deltas, events=stream.events, framing=stream.framing)


@pytest.mark.parametrize("strict_parsing", [False, True], ids=["recover", "strict"])
@pytest.mark.parametrize("text", OUTPUTS + corpus_outputs())
def test_a_value_handed_over_is_the_strict_decode_of_the_arguments(
    text: str, strict_parsing: bool
) -> None:
    context = make_parser(TOOLS, strict_parsing=strict_parsing).context
    decoding = _DecodingParser(context)
    for steps in splits(text):
        handing = _HandingParser(context)
        assert summary(run(handing, steps)) == summary(run(decoding, steps))
        for arguments, value in handing.handed:
            assert same(strict(arguments), value), arguments


@pytest.mark.parametrize("text", OUTPUTS[:7])
def test_a_one_shot_parse_of_a_sound_call_hands_its_value_over(text: str) -> None:
    """Each call of these outputs closes soundly, and GLM wrote every piece of its arguments."""
    parser = _HandingParser(make_parser(TOOLS).context)
    parsed = parser.parse(text)
    assert [arguments for arguments, _ in parser.handed] == [
        call.arguments for call in parsed.tool_calls
    ]
