"""The replay checks name the case, the check and the first difference.

Each "wrong" parser below is the example ``example_tags`` parser with one deliberate defect;
each test shows that the check meant to catch that defect fails, and says what is wrong.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kit_helpers import REQUEST, qwen_case, text_case

from toolcall import Delta, Event, Parsed, Span, Stream, ToolCall, ToolCallDelta
from toolcall.strictness import Plan
from toolcall_conformance.builder import build_case_from_ids
from toolcall_conformance.cases import Case, Step, load_case, write_case
from toolcall_conformance.checks import (
    CHECKS,
    MAX_TOKENS_PER_STEP,
    RANDOM_SPLITS,
    STREAM_CHECKS,
    CheckResult,
    Resources,
    applicable_checks,
    case_splits,
    plan_checks,
    run_case,
    run_check,
    token_spans,
)
from toolcall_conformance.compare import first_difference, json_difference
from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_example_tags import ExampleTagsParser

Transform = Callable[[list[Delta]], list[Delta]]


class _Wrapped:
    """A stream whose deltas pass through a transform (the defect under test)."""

    def __init__(self, inner: Stream, transform: Transform) -> None:
        self._inner = inner
        self._transform = transform

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        return self._transform(self._inner.feed(text, token_ids))

    def finish(self) -> list[Delta]:
        return self._transform(self._inner.finish())

    @property
    def events(self) -> tuple[Event, ...]:
        return self._inner.events

    @property
    def framing(self) -> tuple[Span, ...]:
        return self._inner.framing


class _Defective(ExampleTagsParser):
    name: ClassVar[str] = "defective"

    def transform(self, deltas: list[Delta]) -> list[Delta]:
        return deltas

    def stream(self) -> Stream:
        return _Wrapped(super().stream(), self.transform)


class DropsContentAfterCalls(_Defective):
    """Like vLLM's hermes: text after the first call is never streamed."""

    name = "drops_content"

    def stream(self) -> Stream:
        seen_call = False

        def transform(deltas: list[Delta]) -> list[Delta]:
            nonlocal seen_call
            out = []
            for delta in deltas:
                seen_call = seen_call or bool(delta.tool_calls)
                out.append(Delta(tool_calls=delta.tool_calls) if seen_call else delta)
            return out

        return _Wrapped(ExampleTagsParser.stream(self), transform)


class LowercasesArguments(_Defective):
    name = "lowercases"

    def transform(self, deltas: list[Delta]) -> list[Delta]:
        return [
            Delta(
                delta.content,
                tuple(
                    ToolCallDelta(entry.index, entry.id, entry.name, entry.arguments.lower())
                    for entry in delta.tool_calls
                ),
            )
            for delta in deltas
        ]


class ReserialisesOneShot(_Defective):
    """Streams the model's own argument text, but re-serialises it in parse()."""

    name = "reserialises"

    def parse(self, text: str) -> Parsed:
        parsed = super().parse(text)
        calls = tuple(
            ToolCall(
                call.id, call.name, json.dumps(json.loads(call.arguments), separators=(",", ":"))
            )
            for call in parsed.tool_calls
        )
        return replace(parsed, tool_calls=calls)


class DropsIds(_Defective):
    name = "drops_ids"

    def transform(self, deltas: list[Delta]) -> list[Delta]:
        return [
            Delta(
                delta.content,
                tuple(
                    ToolCallDelta(entry.index, None, entry.name, entry.arguments)
                    for entry in delta.tool_calls
                ),
            )
            for delta in deltas
        ]


class HoldsEverything(_Defective):
    """Releases nothing until finish(): breaks promptness (clause 6)."""

    name = "holds_everything"

    def stream(self) -> Stream:
        held: list[Delta] = []
        inner = ExampleTagsParser.stream(self)

        class Holding(_Wrapped):
            def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
                held.extend(inner.feed(text, token_ids))
                return []

            def finish(self) -> list[Delta]:
                return [*held, *inner.finish()]

        return Holding(inner, lambda deltas: deltas)


class Raises(_Defective):
    name = "raises"

    def transform(self, deltas: list[Delta]) -> list[Delta]:
        if any("boom" in delta.content for delta in deltas):
            msg = "boom in the content"
            raise RuntimeError(msg)
        return deltas


class ForgetsRecoveries(_Defective):
    name = "forgets_recoveries"

    def stream(self) -> Stream:
        inner = ExampleTagsParser.stream(self)

        class Forgetful(_Wrapped):
            @property
            def events(self) -> tuple[Event, ...]:
                return tuple(event for event in inner.events if not event.is_recovery)

        return Forgetful(inner, lambda deltas: deltas)


class NoGrammar(_Defective):
    name = "no_grammar"

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        return None


def _failed(result: CheckResult, case: Case, parser: str, check: str) -> str:
    """Assert the result is a failure that names case, parser and check; return its detail."""
    assert not result.passed, str(result)
    assert (result.case, result.parser, result.check) == (case.id, parser, check)
    assert str(result).startswith(f"{case.id} [{parser}] {check} FAILED: ")
    return result.detail


# -- the reference parser passes ---------------------------------------------------------


def test_a_conformant_parser_passes_every_check(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "call-between-text",
        ["Let me ", 'look.<call name="get_', 'weather">{"city": ', '"Paris"}</call> Done.'],
        {
            "content": "Let me look. Done.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    )
    assert [r.check for r in run_case(ExampleTagsParser, case)] == [
        "parse",
        "stream-token",
        "stream-char",
        "stream-random",
    ]
    results = run_case(ExampleTagsParser, case, not_applicable=True)
    assert [(r.check, r.outcome) for r in results] == [
        ("parse", "passed"),
        # a text-only case's chunks are its "tokens": the recorded split is the token split
        ("stream-recorded", "not applicable"),
        ("stream-token", "passed"),
        ("stream-char", "passed"),
        ("stream-random", "passed"),
    ]
    (skipped,) = [r for r in results if not r.applicable]
    assert not skipped.passed
    assert not skipped.failed
    assert str(skipped) == (
        "example_tags/text/call-between-text [example_tags] stream-recorded not applicable: "
        "repeats stream-token: a text-only case's chunks stand in for its tokens"
    )


# -- each defect is caught by its check, with the first difference ---------------------------


def test_content_dropped_after_a_call_is_named(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "text-after-call",
        ['<call name="get_weather">{"city": "Paris"}</call>', " It is sunny."],
        {
            "content": "It is sunny.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    )
    detail = _failed(
        run_check(DropsContentAfterCalls, case, "parse"), case, "drops_content", "parse"
    )
    assert detail.startswith(
        "parse() differs from expected: content: first difference at character 0"
    )
    assert "expected 'It is sunny.'" in detail
    stream = run_check(DropsContentAfterCalls, case, "stream-char")
    detail = _failed(stream, case, "drops_content", "stream-char")
    assert "stream differs from expected: content" in detail
    # the delta contract sees it too: the text is neither content nor framing
    assert "§4.5 nothing lost" in detail


def test_a_wrong_argument_value_is_named_by_its_path(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "one-call",
        ['<call name="get_weather">', '{"city": "Paris"}</call>'],
        {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    )
    detail = _failed(run_check(LowercasesArguments, case, "parse"), case, "lowercases", "parse")
    assert detail == (
        'parse() differs from expected: tool_calls[0].arguments["city"]: '
        'expected "Paris", got "paris"'
    )


def test_streaming_that_disagrees_with_the_one_shot_parse_breaks_clause_1(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "spaced-json",
        ['<call name="get_weather">{"city": ', '"Paris"}</call>'],
        {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    )
    # the one-shot parse is right by JSON value, so the parse check passes ...
    assert run_check(ReserialisesOneShot, case, "parse").passed
    # ... but the stream's arguments are not byte-identical to the one-shot ones
    detail = _failed(
        run_check(ReserialisesOneShot, case, "stream-recorded"),
        case,
        "reserialises",
        "stream-recorded",
    )
    assert detail.startswith(
        "delta contract §4.1 chunking invariance: the arguments of call 0 differ"
    )


def test_a_call_without_an_id_breaks_clause_2(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "needs-id",
        ['<call name="get_weather">{"city": "Paris"}</call>'],
        {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    )
    detail = _failed(run_check(DropsIds, case, "stream-token"), case, "drops_ids", "stream-token")
    assert "§4.2 call identity (step 0): the first entry of call 0 has no id" in detail


def test_holding_everything_until_finish_breaks_promptness(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "prompt",
        ["Checking the weather now. ", '<call name="get_weather">{"city": "Paris"}</call>'],
        {
            "content": "Checking the weather now.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    )
    assert run_check(HoldsEverything, case, "parse").passed
    detail = _failed(
        run_check(HoldsEverything, case, "stream-char"), case, "holds_everything", "stream-char"
    )
    assert "§4.6 promptness" in detail
    assert "is still held back" in detail


def test_random_splits_name_the_split_that_failed(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "random",
        ['<call name="get_weather">{"city": "Paris"}</call>'],
        {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    )
    detail = _failed(run_check(DropsIds, case, "stream-random"), case, "drops_ids", "stream-random")
    assert "in random split 0 (seed 'example_tags/text/random#0'" in detail


def test_an_exception_is_a_failure_that_names_it(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "explodes",
        ["boom"],
        {"content": "boom", "tool_calls": []},
    )
    detail = _failed(run_check(Raises, case, "parse"), case, "raises", "parse")
    assert detail.startswith("raised RuntimeError: boom in the content at ")
    assert "test_checks.py" in detail


def test_recoveries_are_compared_as_sets(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "missing-end",
        ['<call name="get_weather">{"city": "Paris"}'],
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "recoveries": ["missing-end"],
        },
    )
    assert run_check(ExampleTagsParser, case, "parse").passed
    detail = _failed(
        run_check(ForgetsRecoveries, case, "parse"), case, "forgets_recoveries", "parse"
    )
    assert detail == (
        "parse() differs from expected: recoveries: expected ['missing-end'], got [] "
        "(missing ['missing-end'])"
    )


def test_an_expected_argument_text_is_compared_exactly(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "truncated",
        ['<call name="get_weather">', '{"city": "Par'],
        {"content": None, "tool_calls": [{"name": "get_weather", "arguments": '{"city": "Paris'}]},
        finish_reason="length",
    )
    detail = _failed(run_check(ExampleTagsParser, case, "parse"), case, "example_tags", "parse")
    assert detail.startswith(
        "parse() differs from expected: tool_calls[0].arguments (exact text): "
        "first difference at character 13"
    )


# -- comparison rules -----------------------------------------------------------------------


def test_json_values_compare_as_json() -> None:
    assert json_difference({"a": 1}, {"a": 1.0}) is None
    assert json_difference({"a": 1}, {"a": True}) == '["a"]: expected 1, got true'
    assert json_difference({"a": "1"}, {"a": 1}) == '["a"]: expected "1", got 1'
    assert json_difference({"a": [1, 2]}, {"a": [1]}) == '["a"]: expected a list of 2, got 1: [1]'
    assert json_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert (
        json_difference({"a": 1}, {"b": 1})
        == " (top level): missing key(s) ['a'], unexpected key(s) ['b']"
    )


def test_content_is_compared_stripped_and_null_equals_empty(tmp_path: Path) -> None:
    case = text_case(tmp_path, "blank", ["x"], {"content": None, "tool_calls": []})
    assert first_difference(case.expected, Parsed(content="  \n")) is None
    assert first_difference(case.expected, Parsed(content="")) is None
    other = text_case(tmp_path, "spaced", ["x"], {"content": "\n hi ", "tool_calls": []})
    assert first_difference(other.expected, Parsed(content="hi")) is None


def test_arguments_that_do_not_parse_are_named(tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "args",
        ["x"],
        {"content": None, "tool_calls": [{"name": "f", "arguments": {"a": 1}}]},
    )
    parsed = Parsed(content=None, tool_calls=(ToolCall("id", "f", '{"a": 1,}'),))
    difference = first_difference(case.expected, parsed)
    assert difference is not None
    assert difference.startswith(
        "tool_calls[0].arguments: expected a JSON object, got text that does not parse"
    )


# -- splits ---------------------------------------------------------------------------------


def test_token_and_random_splits_come_from_the_real_tokenizer(tmp_path: Path) -> None:
    built = qwen_case(
        tmp_path,
        "splits",
        'Sure.<call name="get_weather">{"city": "Paris"}</call>',
        {
            "content": "Sure.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    )
    ids = [i for step in built.steps for i in step.token_ids or ()]
    # The same output recorded as engine steps of three tokens each.
    grouped = tuple(
        Step("".join(s.text for s in built.steps[i : i + 3]), tuple(ids[i : i + 3]))
        for i in range(0, len(ids), 3)
    )
    case = replace(built, steps=grouped)
    assert case.text == built.text
    (recorded,) = case_splits(case, "stream-recorded")
    assert recorded.steps == tuple(step.text for step in grouped)
    (token,) = case_splits(case, "stream-token")
    assert token.token_ids == tuple((i,) for i in ids)
    assert list(token.steps) == get_tokenizer("qwen2.5").decode_steps(ids)
    randoms = case_splits(case, "stream-random")
    assert len(randoms) == RANDOM_SPLITS
    assert randoms == case_splits(case, "stream-random")  # seeded: the same every run
    for split in randoms:
        assert "".join(split.steps) == case.text
        assert split.token_ids is not None
        assert [i for group in split.token_ids for i in group] == ids
        assert all(1 <= len(group) <= MAX_TOKENS_PER_STEP for group in split.token_ids)
    assert any(max(len(g) for g in split.token_ids or ()) > 1 for split in randoms)
    assert all(r.passed for r in run_case(ExampleTagsParser, case)), "the reference parser passes"


def test_ids_that_do_not_decode_to_the_text_are_a_case_data_failure(tmp_path: Path) -> None:
    good = qwen_case(tmp_path, "hello", "Hello there", {"content": "Hello there", "tool_calls": []})
    other_ids = tuple(get_tokenizer("qwen2.5").encode("Goodbye there"))
    case = replace(good, steps=(Step("Hello there", other_ids),))
    detail = _failed(
        run_check(ExampleTagsParser, case, "stream-token"), case, "example_tags", "stream-token"
    )
    assert detail.startswith(
        "case data: the qwen2.5 tokenizer decodes the case's token ids to a text"
    )


def test_applicable_checks(tmp_path: Path) -> None:
    plain = text_case(tmp_path, "plain", ["hi"], {"content": "hi", "tool_calls": []})
    # One chunk: the recorded split and all 20 random splits are the token split.
    assert applicable_checks(plain) == ("parse", "stream-token", "stream-char")
    planned = {entry.check: entry for entry in plan_checks(plain)}
    assert planned["stream-random"].repeats == "stream-token"
    assert planned["stream-random"].reason == "every split it feeds is one that stream-token feeds"
    graded = qwen_case(
        tmp_path,
        "graded",
        '<call name="get_weather">{"city": "Paris"}</call>',
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "grammar": "accept",
        },
        request={**REQUEST, "tool_choice": "required", "constrained": True},
    )
    # One token per step: the recorded split is the token split. The request's own level
    # (auto, required) leaves the schema unpinned, so its tag differs from the raised one.
    assert applicable_checks(graded, parser_class=ExampleTagsParser) == tuple(
        check for check in CHECKS if check != "stream-recorded"
    )
    (recorded,) = [e for e in plan_checks(graded) if e.check == "stream-recorded"]
    assert (recorded.repeats, recorded.reason) == (
        "stream-token",
        "the recorded steps hold one token each",
    )
    assert "grammar" not in applicable_checks(graded, grammar=False)


def test_engine_steps_of_several_tokens_are_a_split_of_their_own(tmp_path: Path) -> None:
    ids = get_tokenizer("qwen2.5").encode('Sure.<call name="get_weather">{"city": "Oslo"}</call>')
    data = build_case_from_ids(
        tokenizer="qwen2.5",
        parser="example_tags",
        token_ids=[ids[:3], ids[3:9], ids[9:]],
        request=REQUEST,
        provenance={"kind": "constructed", "source": "toolcall-conformance's own tests"},
        expected={
            "content": "Sure.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
        },
        case_id="example_tags/qwen2.5/three-steps",
    )
    case = load_case(write_case(data, tmp_path / "three-steps.json"))
    assert applicable_checks(case) == ("parse", *STREAM_CHECKS)
    results = run_case(ExampleTagsParser, case)
    assert all(r.passed for r in results), [str(r) for r in results if not r.passed]


def test_constrained_at_the_parameter_level_repeats_the_grammar_check(tmp_path: Path) -> None:
    graded = qwen_case(
        tmp_path,
        "pinned",
        '<call name="get_weather">{"city": "Paris"}</call>',
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "grammar": "accept",
        },
        request={**REQUEST, "strict_level": "parameter", "constrained": True},
    )
    (constrained,) = [
        entry
        for entry in plan_checks(graded, parser_class=ExampleTagsParser)
        if entry.check == "grammar-constrained"
    ]
    assert constrained.repeats == "grammar"
    results = run_case(ExampleTagsParser, graded, not_applicable=True)
    assert [r.outcome for r in results if r.check == "grammar-constrained"] == ["not applicable"]
    assert "grammar-constrained" not in [r.check for r in run_case(ExampleTagsParser, graded)]
    # Without the parser class the tags cannot be compared: it is planned to run.
    assert "grammar-constrained" in applicable_checks(graded)


# -- grammar --------------------------------------------------------------------------------


def test_grammar_accepts_and_rejects_as_the_case_says(tmp_path: Path) -> None:
    valid = '<call name="get_weather">{"city": "Paris"}</call>'
    wrong_type = '<call name="get_weather">{"city": 42}</call>'
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    accept = qwen_case(
        tmp_path, "accept", valid, {"content": None, "tool_calls": calls, "grammar": "accept"}
    )
    assert run_check(ExampleTagsParser, accept, "grammar").passed
    wrong_calls = [{"name": "get_weather", "arguments": {"city": 42}}]
    reject = qwen_case(
        tmp_path,
        "reject",
        wrong_type,
        {"content": None, "tool_calls": wrong_calls, "grammar": "reject"},
    )
    assert run_check(ExampleTagsParser, reject, "grammar").passed

    # A case whose expectation is the opposite fails, naming the token or the acceptance.
    said_accept = replace(reject, expected=replace(reject.expected, grammar="accept"))
    detail = _failed(
        run_check(ExampleTagsParser, said_accept, "grammar"), said_accept, "example_tags", "grammar"
    )
    assert detail.startswith("grammar (strict level raised to parameter) refused token #")
    assert """after '<call name="get_weather">{"city":""" in detail
    said_reject = replace(accept, expected=replace(accept.expected, grammar="reject"))
    detail = _failed(
        run_check(ExampleTagsParser, said_reject, "grammar"), said_reject, "example_tags", "grammar"
    )
    assert "but the case expects it to refuse one" in detail


def test_a_reject_must_happen_where_the_case_places_the_defect(tmp_path: Path) -> None:
    # The call's "city" must be a string: after '"city": ' only '"' may follow, so the
    # first character no allowed output can have there is the '4' of 42.
    text = '<call name="get_weather">{"city": 42}</call>'
    expected = {
        "content": None,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": 42}}],
        "grammar": "reject",
    }

    def placed(slug: str, offset: int) -> Case:
        refusal = {"offset": offset, "reason": "a number where the schema wants a string"}
        return qwen_case(tmp_path, slug, text, {**expected, "grammar_refusal": refusal})

    defect = text.index("42")
    assert run_check(ExampleTagsParser, placed("right", defect), "grammar").passed
    early = placed("early", 0)
    detail = _failed(
        run_check(ExampleTagsParser, early, "grammar"), early, "example_tags", "grammar"
    )
    assert "later than the defect the case places at character 0" in detail
    late = placed("late", text.index("}"))
    detail = _failed(run_check(ExampleTagsParser, late, "grammar"), late, "example_tags", "grammar")
    assert f"earlier than the defect the case places at character {text.index('}')}" in detail
    assert "(a number where the schema wants a string: '}</call>')" in detail


def test_a_refusal_before_the_call_is_not_the_call_s_defect(tmp_path: Path) -> None:
    # tool_choice "required": the output must start with the call, so "Sure." is refused at
    # its first character; a case that places the defect inside the call fails.
    text = 'Sure.<call name="get_weather">{"city": 42}</call>'
    expected = {
        "content": "Sure.",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": 42}}],
        "grammar": "reject",
    }
    request = {**REQUEST, "tool_choice": "required"}
    inside = qwen_case(
        tmp_path,
        "inside",
        text,
        {**expected, "grammar_refusal": {"offset": text.index("42"), "reason": "not a string"}},
        request=request,
    )
    detail = _failed(
        run_check(ExampleTagsParser, inside, "grammar"), inside, "example_tags", "grammar"
    )
    assert "refused token #0" in detail
    assert "earlier than the defect" in detail
    before = qwen_case(
        tmp_path,
        "before",
        text,
        {**expected, "grammar_refusal": {"offset": 0, "reason": "text before the call"}},
        request=request,
    )
    assert run_check(ExampleTagsParser, before, "grammar").passed


def test_a_refusal_at_the_end_is_the_stop_token(tmp_path: Path) -> None:
    text = '<call name="get_weather">{"city": "Paris"}'
    case = qwen_case(
        tmp_path,
        "no-end",
        text,
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "recoveries": ["missing-end"],
            "grammar": "reject",
            "grammar_refusal": {"offset": len(text), "reason": "</call> is missing"},
        },
    )
    assert run_check(ExampleTagsParser, case, "grammar").passed
    moved = replace(
        case,
        expected=replace(
            case.expected,
            grammar_refusal=replace(case.expected.grammar_refusal, offset=len(text) - 1),
        ),
    )
    detail = _failed(
        run_check(ExampleTagsParser, moved, "grammar"), moved, "example_tags", "grammar"
    )
    assert "the stop token" in detail
    assert "later than the defect" in detail


def test_token_spans_give_a_partial_character_to_the_token_that_completes_it() -> None:
    assert token_spans(["a", "", "bc", "", ""]) == [(0, 1), (1, 3), (1, 3), (3, 3), (3, 3)]
    assert token_spans([]) == []


def test_constrained_cases_are_checked_at_their_own_level(tmp_path: Path) -> None:
    text = '<call name="get_weather">{"city": "Paris"}</call>'
    calls = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    required = qwen_case(
        tmp_path,
        "required",
        text,
        {"content": None, "tool_calls": calls},
        request={**REQUEST, "tool_choice": "required", "constrained": True},
    )
    assert run_check(ExampleTagsParser, required, "grammar-constrained").passed
    # "auto" at the parser's default level (auto) with no strict tool: vLLM applies no grammar,
    # so the output cannot have been generated under one.
    auto = qwen_case(
        tmp_path,
        "auto",
        text,
        {"content": None, "tool_calls": calls},
        request={**REQUEST, "constrained": True},
    )
    detail = _failed(
        run_check(ExampleTagsParser, auto, "grammar-constrained"),
        auto,
        "example_tags",
        "grammar-constrained",
    )
    assert detail.startswith("case data: no grammar applies to this request (strict level auto")


def test_a_parser_without_a_structural_tag_fails_the_grammar_check(tmp_path: Path) -> None:
    case = qwen_case(
        tmp_path,
        "tagless",
        '<call name="get_weather">{"city": "Paris"}</call>',
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "grammar": "accept",
        },
    )
    detail = _failed(run_check(NoGrammar, case, "grammar"), case, "no_grammar", "grammar")
    assert detail == (
        "the parser builds no structural tag for a plan that needs one "
        "(strict level raised to parameter)"
    )


def test_without_xgrammar_the_grammar_check_fails_as_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = qwen_case(
        tmp_path,
        "needs-xgrammar",
        '<call name="get_weather">{"city": "Paris"}</call>',
        {
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "grammar": "accept",
        },
    )
    monkeypatch.setitem(sys.modules, "xgrammar", None)  # what Python does for a blocked import
    result = run_check(ExampleTagsParser, case, "grammar", Resources())
    detail = _failed(result, case, "example_tags", "grammar")
    assert detail.startswith("not run: xgrammar missing")
    # --no-grammar leaves the grammar checks out instead (stream-recorded: one token a step)
    assert [r.check for r in run_case(ExampleTagsParser, case, Resources(grammar=False))] == [
        "parse",
        "stream-token",
        "stream-char",
        "stream-random",
    ]
