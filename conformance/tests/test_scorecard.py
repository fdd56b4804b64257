"""``toolcall conformance``: exit codes, the table, the ``--json`` shape, case selection.

Runs through the real ``toolcall`` command and the real registry, with the example
``example_tags`` parser installed (conformance/examples/toolcall-example-tags).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from kit_helpers import text_case

from toolcall import Delta, Event, Parsed, Span, Stream
from toolcall.cli import main
from toolcall.registry import Registry
from toolcall_conformance import scorecard
from toolcall_conformance.cases import load_cases
from toolcall_conformance.checks import CheckResult, Resources
from toolcall_example_tags import ExampleTagsParser

CALL = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


@pytest.fixture
def good_cases(tmp_path: Path) -> Path:
    directory = tmp_path / "good"
    directory.mkdir()
    text_case(
        directory,
        "call",
        ['Hi.<call name="get_weather">', '{"city": "Paris"}</call>'],
        {"content": "Hi.", "tool_calls": CALL},
    )
    text_case(directory, "plain", ["Just ", "text."], {"content": "Just text.", "tool_calls": []})
    return directory


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["conformance", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_all_passed_exits_0_and_prints_the_table(
    good_cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(
        ["-p", "example_tags", "--cases", str(good_cases), "--no-grammar", "--fuzz-examples", "7"],
        capsys,
    )
    assert status == 0, out
    assert "toolcall conformance: checks" in out
    for check in ("parse", "stream-recorded", "stream-token", "stream-char", "stream-random"):
        assert check in out
    # Text-only cases: the recorded chunks are the token split (not run, not counted).
    assert "8 of 8 independent checks passed (2 cases, 1 parsers); 2 not applicable" in out
    assert (
        "- example_tags stream-recorded: 2 cases, repeats stream-token: a text-only case's "
        "chunks stand in for its tokens" in out
    )
    assert (
        "- example_tags grammar-constrained: no case asks for it (request.constrained), so it "
        "did not run" in out
    )
    rows = [line.split("│")[1:-1] for line in out.splitlines() if line.startswith("│ example")]
    # parser, cases, recorded, wild, template, constructed, independent, passed, failed
    cases_row, properties_row = ([cell.strip() for cell in row] for row in rows[-2:])
    assert cases_row == ["example_tags", "2", "0", "0", "0", "2", "8", "8", "0"]
    # parser, stream API, fuzzed outputs, findings
    assert properties_row == ["example_tags", "ok", "7", "0"]
    assert "properties held for 1 of 1 parsers (the stream API, and 7 fuzzed outputs)" in out
    assert "Failures" not in out


def test_a_failure_exits_1_and_is_listed(
    good_cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A deliberately wrong expectation: the parse keeps "Hi." as content.
    text_case(
        good_cases,
        "wrong",
        ['Hi.<call name="get_weather">{"city": "Paris"}</call>'],
        {"content": "Hello.", "tool_calls": CALL},
    )
    status, out, _ = run(["-p", "example_tags", "--cases", str(good_cases), "--no-grammar"], capsys)
    assert status == 1
    assert "Failures" in out
    assert (
        "example_tags/text/wrong [example_tags] parse FAILED: "
        "parse() differs from expected: content" in out
    )


def test_json_output_shape(good_cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        ["-p", "example_tags", "--cases", str(good_cases), "--json", "--no-grammar"], capsys
    )
    assert status == 0
    data = json.loads(out)
    assert set(data) == {"results", "summary", "properties"}
    assert data["properties"]["example_tags"]["stream_api"] == []
    assert data["properties"]["example_tags"]["finding"] is None
    assert data["properties"]["example_tags"]["fuzzed"] >= 1
    assert len(data["results"]) == 10
    for result in data["results"]:
        assert set(result) == {"case", "parser", "check", "outcome", "passed", "detail"}
        assert result["parser"] == "example_tags"
        assert result["passed"] is (result["outcome"] == "passed")
    outcomes = {(r["case"].rsplit("/", 1)[1], r["check"]): r["outcome"] for r in data["results"]}
    assert outcomes[("call", "stream-recorded")] == "not applicable"
    assert outcomes[("plain", "stream-recorded")] == "not applicable"
    assert outcomes[("call", "stream-random")] == "passed"
    summary = data["summary"]
    assert (
        summary["passed"],
        summary["failed"],
        summary["total"],
        summary["not_applicable"],
        summary["cases"],
    ) == (8, 0, 8, 2, 2)
    assert summary["aliases"] == {}
    mine = summary["by_parser"]["example_tags"]
    assert mine["checks"]["stream-char"] == {
        "passed": 2,
        "failed": 0,
        "not_applicable": 0,
        "total": 2,
    }
    assert mine["checks"]["stream-recorded"] == {
        "passed": 0,
        "failed": 0,
        "not_applicable": 2,
        "total": 0,
    }
    assert mine["cases"] == {
        "total": 2,
        "recorded": 0,
        "wild": 0,
        "template": 0,
        "constructed": 2,
    }
    assert (mine["independent"], mine["passed"], mine["failed"]) == (8, 8, 0)


def test_a_broken_case_file_is_a_failure(
    good_cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (good_cases / "broken.json").write_text('{"schema": "toolcall-case/1"', encoding="utf-8")
    status, out, _ = run(
        ["-p", "example_tags", "--cases", str(good_cases), "--json", "--no-grammar"], capsys
    )
    assert status == 1
    loads = [r for r in json.loads(out)["results"] if r["check"] == "load"]
    assert len(loads) == 1
    assert loads[0]["case"].endswith("broken.json")
    assert loads[0]["detail"].startswith("$: not JSON")


def test_usage_errors_exit_2(
    good_cases: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, _, err = run(["-p", "no_such_parser", "--cases", str(good_cases)], capsys)
    assert status == 2
    assert "unknown parser 'no_such_parser'" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    status, _, err = run(["-p", "example_tags", "--cases", str(empty)], capsys)
    assert status == 2
    assert "no cases for parser 'example_tags'" in err
    status, _, err = run(["-p", "example_tags", "--cases", str(tmp_path / "missing")], capsys)
    assert status == 2
    assert "no such file or directory" in err
    monkeypatch.setenv("TOOLCALL_FUZZ_EXAMPLES", "many")
    status, _, err = run(["-p", "example_tags", "--cases", str(good_cases)], capsys)
    assert status == 2
    assert "a number of outputs (0 or more), not 'many'" in err


@pytest.mark.skipif(
    importlib.util.find_spec("vllm") is not None,
    reason="vLLM is installed here, so --against-vllm cannot fail for want of it",
)
def test_against_vllm_without_vllm_is_a_clear_error(
    good_cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(
        ["-p", "example_tags", "--cases", str(good_cases), "--against-vllm"], capsys
    )
    assert status == 2
    assert out == ""
    assert "--against-vllm needs vLLM 0.33 importable in this environment" in err


def test_without_p_every_installed_parser_with_cases_is_checked(
    good_cases: Path, tmp_path: Path
) -> None:
    stray = tmp_path / "stray"
    stray.mkdir()
    text_case(stray, "orphan", ["x"], {"content": "x", "tool_calls": []}, parser="not_installed")
    registry = Registry.load()
    targets, failures = scorecard.select_targets(registry, (), [good_cases, stray])
    names = [target.name for target in targets]
    assert "example_tags" in names
    assert set(names) <= set(registry.names())
    assert all(target.cases for target in targets)
    (example,) = (target for target in targets if target.name == "example_tags")
    assert {case.id for case in example.cases} >= {
        "example_tags/text/call",
        "example_tags/text/plain",
    }
    (orphan,) = [failure for failure in failures if failure.parser == "not_installed"]
    assert (orphan.case, orphan.check, orphan.passed) == (
        "not_installed/text/orphan",
        "load",
        False,
    )
    assert "targets parser 'not_installed', which is not installed" in orphan.detail


def test_the_vllm_column_sits_beside_ours() -> None:
    ours = [
        CheckResult("hermes/x/a", "hermes", "parse", True),
        CheckResult("hermes/x/b", "hermes", "parse", True),
    ]
    theirs = [
        CheckResult("hermes/x/a", "vllm:hermes", "parse", True),
        CheckResult("hermes/x/b", "vllm:hermes", "parse", False, "content: ..."),
    ]
    out = io.StringIO()
    scorecard.render(ours, theirs, out=out)
    text = out.getvalue()
    assert "vLLM built-in" in text
    (row,) = [line for line in text.splitlines() if line.startswith("│ hermes")]
    assert "1 / 2" in row
    assert "2 of 2 independent checks passed" in text
    assert "hermes/x/b [vllm:hermes] parse FAILED: content: ..." in text


def test_an_alias_is_shown_once_and_not_run_again(good_cases: Path) -> None:
    class Renamed(ExampleTagsParser):
        """The example's behaviour under a second name: only metadata changes."""

        name = "example_tags_alias"
        corpus = "example_tags"
        summary = "the same format"

    class Stricter(ExampleTagsParser):
        """Not an alias: it changes what the parser does (its markers)."""

        name = "example_tags_stricter"
        corpus = "example_tags"
        markers = ("<call",)

    assert scorecard.behaviour_class(Renamed) is ExampleTagsParser
    assert scorecard.behaviour_class(Stricter) is Stricter
    assert scorecard.behaviour_class(ExampleTagsParser) is ExampleTagsParser
    cases = tuple(load_cases([good_cases])[0])
    targets = scorecard.mark_aliases(
        [
            scorecard.Target(Stricter, cases),
            scorecard.Target(Renamed, cases),
            scorecard.Target(ExampleTagsParser, cases),
            # the same behaviour on other cases is checked on its own
            scorecard.Target(Renamed, cases[:1]),
        ]
    )
    assert [(t.name, t.alias_of, len(t.cases)) for t in targets] == [
        ("example_tags", None, 2),
        ("example_tags_alias", "example_tags", 2),
        ("example_tags_alias", None, 1),
        ("example_tags_stricter", None, 2),
    ]
    targets = [t for t in targets if len(t.cases) == 2]
    results, _ = scorecard.run(targets, Resources(grammar=False), progress=False)
    assert {r.parser for r in results} == {"example_tags", "example_tags_stricter"}
    summary = scorecard.summarize(results, targets)
    assert summary["aliases"] == {"example_tags_alias": "example_tags"}
    assert summary["by_parser"]["example_tags_alias"] == {
        "alias_of": "example_tags",
        "cases": {"total": 2, "recorded": 0, "wild": 0, "template": 0, "constructed": 2},
    }
    assert summary["total"] == 16
    out = io.StringIO()
    scorecard.render(results, targets=targets, out=out)
    text = out.getvalue()
    assert (
        "example_tags_alias is an alias of example_tags: ExampleTagsParser under another name, "
        "on the same 2 cases; not run again, counted once under example_tags" in text
    )
    assert "16 of 16 independent checks passed (2 cases, 2 parsers)" in text


def test_the_shipped_aliases_are_counted_once() -> None:
    registry = Registry.load()
    if "qwen3_json" not in registry.names() or "hermes" not in registry.names():
        pytest.fail("this session installs toolcall-hermes: hermes and qwen3_json must be there")
    targets, failures = scorecard.select_targets(registry, ("hermes", "qwen3_json"), ())
    assert failures == []
    assert [(t.name, t.alias_of) for t in targets] == [("hermes", None), ("qwen3_json", "hermes")]


def test_with_no_parser_that_has_cases_it_is_a_usage_error(tmp_path: Path) -> None:
    empty = Registry.load(path=[str(tmp_path)])  # no plugin installed there
    with pytest.raises(scorecard.ScorecardError, match="no installed parser has cases"):
        scorecard.select_targets(empty, (), ())


def test_progress_is_drawn_on_a_terminal_only(
    good_cases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    targets, _ = scorecard.select_targets(Registry.load(), ("example_tags",), [good_cases])
    resources = Resources(grammar=False)
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    scorecard.run(targets, resources, progress=True)
    drawn = terminal.getvalue()
    # The bar counts the checks and names the one at work.
    assert "10/10" in drawn
    assert "stream-random" in drawn
    assert scorecard._clip("a" * 70, 60) == "a" * 57 + "..."
    quiet = Terminal()
    monkeypatch.setattr("sys.stderr", quiet)
    scorecard.run(targets, resources, progress=False)
    assert quiet.getvalue() == ""


class _Lenient:
    """The example's stream, but it reads anything as text and ignores what comes after
    ``finish()``."""

    def __init__(self, inner: Stream) -> None:
        self.inner, self.done = inner, False

    @property
    def events(self) -> tuple[Event, ...]:
        return self.inner.events

    @property
    def framing(self) -> tuple[Span, ...]:
        return self.inner.framing

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        return [] if self.done else self.inner.feed(str(text), token_ids)

    def finish(self) -> list[Delta]:
        self.done = True
        return self.inner.finish()


class _Broken(ExampleTagsParser):
    """A lenient stream, and a parse that loses the content."""

    name = "example_tags_broken"
    corpus = "example_tags"

    def stream(self) -> Stream:
        return _Lenient(super().stream())

    def parse(self, text: str) -> Parsed:
        return dataclasses.replace(super().parse(text), content=None)


def test_the_properties_fail_a_broken_parser_and_count_an_alias_once(good_cases: Path) -> None:
    class Renamed(_Broken):
        name = "example_tags_broken_too"

    cases = tuple(load_cases([good_cases])[0])
    targets = scorecard.mark_aliases(
        [scorecard.Target(_Broken, cases), scorecard.Target(Renamed, cases)]
    )
    (broken,) = scorecard.check_properties(targets, ExampleTagsParser.markers, examples=5)
    assert broken.parser == "example_tags_broken"
    assert broken.failed
    assert "feed(None) was accepted" in broken.stream_api
    assert "feed() after finish() was accepted" in broken.stream_api
    assert broken.finding is not None
    assert broken.fuzzed == 1  # the first output, a case's, already fails
    assert any("differs from one-shot None" in line for line in broken.finding.problems)
    out = io.StringIO()
    scorecard.render([], targets=targets, properties=[broken], out=out)
    text = out.getvalue()
    assert "properties held for 0 of 1 parsers (the stream API, and 1 fuzzed outputs)" in text
    assert "example_tags_broken stream API FAILED: feed(None) was accepted" in text
    assert "example_tags_broken fuzz FAILED after 1 outputs: the output " in text
    (alias,) = [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in text.splitlines()
        if line.startswith("│ example_tags_broken_too") and line.count("│") == 5
    ]
    assert alias == ["example_tags_broken_too", "alias of example_tags_broken", "-", "-"]
    # No fuzz: the stream API still runs; no outputs, no findings.
    (unfuzzed,) = scorecard.check_properties(targets, (), examples=0)
    assert (unfuzzed.fuzzed, unfuzzed.finding) == (0, None)
    assert unfuzzed.stream_api == broken.stream_api
