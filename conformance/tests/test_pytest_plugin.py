"""The pytest plugin, through its ``pytest11`` entry point, in a separate pytest process
(``pytester.runpytest_subprocess``): a third party's suite is just a subclass."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit_helpers import text_case

import toolcall_example_tags  # noqa: F401  (these tests run the installed example parser)

pytest_plugins = ("pytester",)

CALL = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
STREAM_CHECKS = ("stream-recorded", "stream-token", "stream-char", "stream-random")


@pytest.fixture
def cases(pytester: pytest.Pytester) -> Path:
    directory = pytester.path / "cases"
    directory.mkdir()
    text_case(
        directory,
        "call",
        ['Hi.<call name="get_weather">', '{"city": "Paris"}</call>'],
        {"content": "Hi.", "tool_calls": CALL},
    )
    text_case(directory, "plain", ["Just ", "text."], {"content": "Just text.", "tool_calls": []})
    return directory


def test_a_subclass_gets_one_test_per_case_and_check(
    pytester: pytest.Pytester, cases: Path
) -> None:
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestConformance(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)
        """
    )
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    # stream-recorded would repeat stream-token (a text-only case's chunks are its tokens);
    # and the stream API and the fuzz, once for the suite
    result.assert_outcomes(passed=10)
    result.stdout.fnmatch_lines(
        ["*TestConformance::test_stream_api PASSED*", "*TestConformance::test_fuzz PASSED*"]
    )
    for case in ("example_tags/text/call", "example_tags/text/plain"):
        for check in ("parse", *STREAM_CHECKS):
            line = f"*TestConformance::test_conformance[[]{case}-{check}[]]*"
            if check == "stream-recorded":
                assert not any(f"[{case}-{check}]" in text for text in result.stdout.lines), (
                    "a repeat gets no test"
                )
            else:
                result.stdout.fnmatch_lines([f"{line} PASSED*"])


def test_a_failure_names_the_case_the_check_and_the_first_difference(
    pytester: pytest.Pytester, cases: Path
) -> None:
    # A parser class (not a registered name) with a defect: it loses content after a call.
    pytester.makepyfile(
        test_third_party="""
        from toolcall import Delta
        from toolcall_conformance.pytest_plugin import ConformanceSuite
        from toolcall_example_tags import ExampleTagsParser

        class Lossy(ExampleTagsParser):
            name = "lossy"
            corpus = "example_tags"

            def parse(self, text):
                parsed = super().parse(text)
                return type(parsed)(content=None, tool_calls=parsed.tool_calls,
                                    events=parsed.events, framing=parsed.framing)

        class TestLossy(ConformanceSuite):
            parser = Lossy
            case_dirs = ("cases",)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    # parse() is wrong for both cases, and every stream check compares the stream with
    # parse() (delta contract clause 1); the fuzz finds it on any output with content. The
    # stream API is the example's, which keeps it.
    result.assert_outcomes(failed=9, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*example_tags/text/call [[]lossy[]] parse FAILED: parse() differs from expected: "
            "content: first difference at character 0: expected 'Hi.', got ''*",
            "*example_tags/text/call [[]lossy[]] stream-char FAILED: delta contract "
            "§4.1 chunking invariance: content differs from the one-shot parse*",
            "*TestLossy.test_fuzz*",
            "after 1 of 50 mutated outputs of the cases, the output * (split seed *",
            "*streamed content 'Hi.' differs from one-shot None*",
        ]
    )


def test_grammar_checks_can_be_left_out(pytester: pytest.Pytester) -> None:
    from kit_helpers import qwen_case

    directory = pytester.path / "cases"
    directory.mkdir()
    qwen_case(
        directory,
        "graded",
        '<call name="get_weather">{"city": "Paris"}</call>',
        {"content": None, "tool_calls": CALL, "grammar": "accept"},
    )
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestConformance(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)
        """
    )
    collected = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    collected.stdout.fnmatch_lines(["*example_tags/qwen2.5/graded-grammar*"])
    without = pytester.runpytest_subprocess(
        "--collect-only", "-q", "--toolcall-no-grammar", "-p", "no:cacheprovider"
    )
    assert "graded-grammar" not in without.stdout.str()
    # parse, stream-token, stream-char, stream-random (the recorded steps are one token
    # each); the stream API and the fuzz
    without.stdout.fnmatch_lines(["*6 tests collected*"])


def test_a_suite_without_a_parser_or_cases_fails_loudly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestNoParser(ConformanceSuite):
            pass

        class TestNoCases(ConformanceSuite):
            parser = "example_tags"
            include_shipped = False
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    # TestNoParser: the cases, the stream API and the fuzz; TestNoCases: the cases and the
    # fuzz (its stream API is the example's, and passes)
    result.assert_outcomes(failed=5, passed=1)
    result.stdout.fnmatch_lines_random(
        [
            "*TestNoParser.parser: not set: name the parser under test*",
            "*no cases for parser 'example_tags': set case_dirs on TestNoCases*",
            "*no case to seed the fuzz of 'example_tags' with*",
        ]
    )


def test_known_failures_are_expected_to_fail_and_must_keep_failing(
    pytester: pytest.Pytester, cases: Path
) -> None:
    text_case(
        cases,
        "wrong",
        ['Hi.<call name="get_weather">{"city": "Paris"}</call>'],
        {"content": "Hello.", "tool_calls": CALL},
    )
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestConformance(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)
            known_failures = {
                "example_tags/text/wrong": "the case expects other content (issue 1)",
                "example_tags/text/plain[stream-char]": "listed, but it passes",
            }
        """
    )
    result = pytester.runpytest_subprocess("-rxX", "-p", "no:cacheprovider")
    # "wrong" (one chunk: no stream-recorded, and its random splits are that chunk too): its
    # 3 checks fail as expected; "plain" stream-char passes, which is an error.
    result.assert_outcomes(passed=9, xfailed=3, failed=1)
    result.stdout.fnmatch_lines_random(
        [
            "*XFAIL*example_tags/text/wrong-parse*known failure: the case expects other "
            "content (issue 1) (when it passes, remove it from TestConformance.known_failures)",
            "*[[]XPASS(strict)[]] known failure: listed, but it passes*",
        ]
    )


def test_a_known_failure_list_must_name_cases_and_give_reasons(
    pytester: pytest.Pytester, cases: Path
) -> None:
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestConformance(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)
            known_failures = {
                "example_tags/text/gone": "a case that is not there",
                "example_tags/text/plain[stream-sideways]": "no such check",
                "example_tags/text/call": "  ",
            }
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=10, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "*TestConformance.known_failures[[]'example_tags/text/call'[]]: give the reason it "
            "fails, as text*",
            "*TestConformance.known_failures[[]'example_tags/text/plain[[]stream-sideways[]]'[]]:"
            " no check 'stream-sideways'*",
            "*TestConformance.known_failures[[]'example_tags/text/gone'[]] names no case or "
            "check of this suite*",
        ]
    )


def test_what_a_suite_points_at_must_exist_and_load(pytester: pytest.Pytester, cases: Path) -> None:
    (cases / "broken.json").write_text('{"schema": "toolcall-case/1"', encoding="utf-8")
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite

        class TestMissing(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases", "no-such-folder")
            include_shipped = False

        class TestNotAParser(ConformanceSuite):
            parser = 42

        class TestListedWrongly(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)
            known_failures = ["example_tags/text/call"]
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    # TestMissing: the two good cases pass (8), the missing folder and the broken file fail;
    # TestNotAParser: one failing load; TestListedWrongly: 8 pass, the broken file and the
    # list fail to load. The stream API and the fuzz pass where the parser loads (4) and
    # fail where it does not (2).
    result.assert_outcomes(passed=20, failed=7)
    result.stdout.fnmatch_lines_random(
        [
            "*no-such-folder: no such file or directory*",
            "*broken.json: $: not JSON*",
            "*TestNotAParser.parser: 42 is neither a parser name nor a toolcall.Parser subclass*",
            "*TestListedWrongly.known_failures must map case ids to reasons*",
        ]
    )


def test_the_stream_api_test_names_each_misuse_a_stream_accepts(
    pytester: pytest.Pytester, cases: Path
) -> None:
    # The example's stream, but lenient: it reads anything as text and ignores what comes
    # after finish(). Its parses are the example's, so the cases and the fuzz pass.
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite
        from toolcall_example_tags import ExampleTagsParser

        class Lenient:
            def __init__(self, inner):
                self.inner, self.done = inner, False

            def __getattr__(self, name):
                return getattr(self.inner, name)

            def feed(self, text, token_ids=()):
                return [] if self.done else self.inner.feed(str(text), token_ids)

            def finish(self):
                self.done = True
                return self.inner.finish()

        class LenientParser(ExampleTagsParser):
            name = "lenient"
            corpus = "example_tags"

            def stream(self):
                return Lenient(super().stream())

        class TestLenient(ConformanceSuite):
            parser = LenientParser
            case_dirs = ("cases",)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=9, failed=1)
    result.stdout.fnmatch_lines_random(
        [
            "*TestLenient::test_stream_api*",
            "*feed(None) was accepted*",
            "*feed(b'x') was accepted*",
            "*feed() after finish() was accepted*",
        ]
    )


def test_the_fuzz_budget_comes_from_the_environment(
    pytester: pytest.Pytester, cases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_third_party="""
        from toolcall_conformance.pytest_plugin import ConformanceSuite, fuzz_budget

        class TestConformance(ConformanceSuite):
            parser = "example_tags"
            case_dirs = ("cases",)

        def test_budget():
            assert fuzz_budget() == 3
        """
    )
    monkeypatch.setenv("TOOLCALL_FUZZ_EXAMPLES", "3")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "fuzz or budget").assert_outcomes(
        passed=2
    )
    monkeypatch.setenv("TOOLCALL_FUZZ_EXAMPLES", "many")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "fuzz")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TOOLCALL_FUZZ_EXAMPLES must be a positive number*'many'*"])
