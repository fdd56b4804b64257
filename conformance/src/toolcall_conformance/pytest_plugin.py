"""The pytest plugin (entry point ``pytest11``): the conformance kit as ordinary tests.

A parser package subclasses :class:`ConformanceSuite`, names its parser and, if it has
any, its own case directories::

    from toolcall_conformance.pytest_plugin import ConformanceSuite

    class TestConformance(ConformanceSuite):
        parser = "my_format"        # a registered name, or the Parser class
        case_dirs = ("cases",)      # relative to this test file

and gets one test per case and check (``test_conformance[<case id>-<check>]``). The
shipped corpus of its format (``Parser.corpus`` or its name) is included unless
``include_shipped = False``. A failing test names the case, the check and the first
difference. A check that would repeat another check of its case (recorded steps of one
token each are the ``stream-token`` split) gets no test of its own.

Known failures are listed with a reason, case by case (or check by check)::

        known_failures = {
            "my_format/qwen2.5/nested-calls": "nested calls are not read yet (issue 12)",
            "my_format/text/bom[stream-char]": "a BOM split from its text is lost",
        }

A listed test is expected to fail (``xfail``, strict): when it passes, the run fails and
says to remove the entry. An entry that names no case or check of the suite, or gives no
reason, is an error too.

Two more tests hold the parser to what must be true of any output, not only of the cases
(:mod:`toolcall_conformance.fuzz`): ``test_stream_api`` (``feed`` after ``finish`` is a
clear error, ``feed`` of a non-``str`` a ``TypeError`` naming the type) and ``test_fuzz``,
a derandomized search over mutations of the suite's own cases, with the markers of every
installed parser spliced in: no exception escapes, the delta contract holds under several
splits, streamed content equals one-shot content character for character, the arguments
of a call without a defect event are a strict JSON object encodable as UTF-8, and no word
of the output is lost unless an event says it was ignored. Its budget is
``TOOLCALL_FUZZ_EXAMPLES`` outputs (default 50, a few seconds). These are properties, not
cases: ``known_failures`` cannot list them; a case listed there is left out of the seeds,
since its output is already known to fail.

The grammar checks need xgrammar; without it they fail ("not run: xgrammar missing")
unless pytest runs with ``--toolcall-no-grammar``.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import pytest

pytest.register_assert_rewrite(
    "toolcall_conformance.checks",
    "toolcall_conformance.compare",
    "toolcall_conformance.grammar",
)

from toolcall import Parser  # noqa: E402
from toolcall.registry import Registry  # noqa: E402
from toolcall_conformance.cases import load_cases, shipped_case_dirs  # noqa: E402
from toolcall_conformance.checks import (  # noqa: E402
    CHECKS,
    CheckResult,
    Resources,
    applicable_checks,
    corpus_of,
    run_check,
)
from toolcall_conformance.fuzz import (  # noqa: E402
    check_stream_api,
    installed_markers,
    search,
    seeds_from_cases,
)

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = ["FUZZ_EXAMPLES", "ConformanceItem", "ConformanceSuite", "SuiteTarget", "fuzz_budget"]

_NO_GRAMMAR = "--toolcall-no-grammar"
#: The fuzz budget of a suite: outputs per suite unless ``TOOLCALL_FUZZ_EXAMPLES`` says.
FUZZ_EXAMPLES = 50


class ConformanceSuite:
    """Subclass it (with a name pytest collects, e.g. ``TestConformance``) and set
    :attr:`parser`; the plugin parametrizes :meth:`test_conformance` per case and check."""

    #: The parser under test: a name the registry serves, or the Parser class itself.
    parser: ClassVar[str | type[Parser] | None] = None
    #: More case files or directories; relative paths are taken from the test file.
    case_dirs: ClassVar[Sequence[str | Path]] = ()
    #: Include the shipped corpus of the parser's format.
    include_shipped: ClassVar[bool] = True
    #: Known failures: ``case id`` (every check of the case) or ``case id[check]`` -> the
    #: reason. Each listed test must fail; one that passes fails the run.
    known_failures: ClassVar[Mapping[str, str]] = {}

    def test_conformance(
        self, toolcall_conformance_item: ConformanceItem, toolcall_resources: Resources
    ) -> None:
        result = toolcall_conformance_item.run(toolcall_resources)
        if not result.passed:
            pytest.fail(str(result), pytrace=False)

    def test_stream_api(self, request: pytest.FixtureRequest) -> None:
        suite = _suite_target(request)
        # Built for a case's request and tokenizer where there is one: a parser may need them.
        seeds = seeds_from_cases(suite.parser_class, suite.seeds[:1])
        problems = check_stream_api(seeds[0].make_parser if seeds else suite.parser_class)
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    def test_fuzz(self, request: pytest.FixtureRequest) -> None:
        toolcall_suite = _suite_target(request)
        budget = fuzz_budget()
        seeds = seeds_from_cases(toolcall_suite.parser_class, toolcall_suite.seeds)
        if not seeds:
            pytest.fail(
                f"no case to seed the fuzz of {toolcall_suite.parser_class.name!r} with (a case "
                "listed in known_failures is no seed)",
                pytrace=False,
            )
        markers = installed_markers(Registry.load(), toolcall_suite.parser_class)
        searched = search(seeds, markers, examples=budget)
        if searched.finding is not None:
            pytest.fail(
                f"after {searched.examples} of {budget} mutated outputs of the cases, "
                f"{searched.finding}",
                pytrace=False,
            )


def fuzz_budget() -> int:
    """``TOOLCALL_FUZZ_EXAMPLES`` (a positive integer), else :data:`FUZZ_EXAMPLES`."""
    text = os.environ.get("TOOLCALL_FUZZ_EXAMPLES", "").strip()
    if not text:
        return FUZZ_EXAMPLES
    if not text.isdigit() or int(text) < 1:
        msg = f"TOOLCALL_FUZZ_EXAMPLES must be a positive number of outputs, not {text!r}"
        raise pytest.UsageError(msg)
    return int(text)


@dataclass(frozen=True)
class SuiteTarget:
    """A suite's parser, and the cases that seed its fuzz (those not known to fail)."""

    parser_class: type[Parser]
    seeds: tuple[Case, ...]


@dataclass(frozen=True)
class ConformanceItem:
    """One test: a check of a case against a parser (or a case file that did not load)."""

    parser_class: type[Parser] | None
    case: Case | None
    check: str
    error: str = ""
    #: Why this check is known to fail (from ``known_failures``), or "".
    known_failure: str = ""

    @property
    def id(self) -> str:
        label = self.case.id if self.case is not None else "load"
        return f"{label}-{self.check}"

    def run(self, resources: Resources) -> CheckResult:
        if self.parser_class is None or self.case is None:
            name = self.parser_class.name if self.parser_class is not None else "-"
            return CheckResult("-", name, "load", False, self.error)
        return run_check(self.parser_class, self.case, self.check, resources)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolcall-conformance")
    group.addoption(
        _NO_GRAMMAR,
        action="store_true",
        default=False,
        help="leave out the conformance grammar checks (which need xgrammar)",
    )


@pytest.fixture(scope="session")
def toolcall_resources(request: pytest.FixtureRequest) -> Resources:
    """What the conformance checks share over the session (grammar compilers)."""
    return Resources(grammar=not request.config.getoption(_NO_GRAMMAR))


def _suite_target(request: pytest.FixtureRequest) -> SuiteTarget:
    """The parser of the requesting :class:`ConformanceSuite` and its seed cases; a
    suite whose parser does not load fails the test, as its ``load`` test does."""
    cls = request.cls
    assert cls is not None
    assert issubclass(cls, ConformanceSuite)
    try:
        parser_class = _parser_class(cls)
    except Exception as problem:
        pytest.fail(f"{cls.__qualname__}.parser: {problem}", pytrace=False)
    cases, _ = _suite_cases(cls, parser_class, Path(request.path).parent)
    known, _ = _known_failures(cls)
    listed = {key.split("[", 1)[0] for key in known}
    return SuiteTarget(parser_class, tuple(case for case in cases if case.id not in listed))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    cls = metafunc.cls
    if (
        cls is None
        or not issubclass(cls, ConformanceSuite)
        or "toolcall_conformance_item" not in metafunc.fixturenames
    ):
        return
    grammar = not metafunc.config.getoption(_NO_GRAMMAR)
    items = _items(cls, Path(metafunc.definition.path).parent, grammar=grammar)
    params = [
        pytest.param(
            item,
            id=item.id,
            marks=pytest.mark.xfail(
                reason=f"known failure: {item.known_failure} (when it passes, remove it from "
                f"{cls.__qualname__}.known_failures)",
                strict=True,
            )
            if item.known_failure
            else (),
        )
        for item in items
    ]
    metafunc.parametrize("toolcall_conformance_item", params)


def _items(cls: type[ConformanceSuite], here: Path, *, grammar: bool) -> list[ConformanceItem]:
    try:
        parser_class = _parser_class(cls)
    except Exception as problem:
        message = f"{cls.__qualname__}.parser: {problem}"
        return [ConformanceItem(None, None, "load", message)]
    cases, load_problems = _suite_cases(cls, parser_class, here)
    items = [ConformanceItem(parser_class, None, "load", problem) for problem in load_problems]
    known, problems = _known_failures(cls)
    used: set[str] = set()
    for case in cases:
        for check in applicable_checks(case, grammar=grammar, parser_class=parser_class):
            keys = [f"{case.id}[{check}]", case.id]
            reason = next((known[key] for key in keys if key in known), "")
            used.update(key for key in keys if key in known)
            items.append(ConformanceItem(parser_class, case, check, known_failure=reason))
    if not items:
        message = f"no cases for parser {parser_class.name!r}: set case_dirs on {cls.__qualname__}"
        items.append(ConformanceItem(parser_class, None, "load", message))
    for key in sorted(set(known) - used):
        problems.append(
            f"{cls.__qualname__}.known_failures[{key!r}] names no case or check of this suite"
        )
    items += [ConformanceItem(parser_class, None, "load", problem) for problem in problems]
    return items


def _suite_cases(
    cls: type[ConformanceSuite], parser_class: type[Parser], here: Path
) -> tuple[list[Case], list[str]]:
    """The suite's cases for its parser, and the case files that are missing or do not load."""
    wanted = {parser_class.name, corpus_of(parser_class)}
    paths: list[Path] = []
    if cls.include_shipped:
        paths += shipped_case_dirs(corpus_of(parser_class))
    for entry in cls.case_dirs:
        path = Path(entry)
        paths.append(path if path.is_absolute() else here / path)
    problems = [f"{path}: no such file or directory" for path in paths if not path.exists()]
    cases, errors = load_cases([path for path in paths if path.exists()])
    problems += [f"{error.path}: {error.field}: {error.message}" for error in errors]
    return [case for case in cases if case.parser in wanted], problems


def _known_failures(cls: type[ConformanceSuite]) -> tuple[dict[str, str], list[str]]:
    """The suite's known failures, and what is wrong with the list."""
    known: dict[str, str] = {}
    problems: list[str] = []
    listed: object = cls.known_failures  # a user may have set anything
    if not isinstance(listed, Mapping):
        return {}, [f"{cls.__qualname__}.known_failures must map case ids to reasons"]
    for key, reason in listed.items():
        where = f"{cls.__qualname__}.known_failures[{key!r}]"
        if not isinstance(key, str) or not isinstance(reason, str) or not reason.strip():
            problems.append(f"{where}: give the reason it fails, as text")
            continue
        if key.endswith("]") and "[" in key:
            check = key[key.rindex("[") + 1 : -1]
            if check not in CHECKS:
                problems.append(f"{where}: no check {check!r} (checks: {', '.join(CHECKS)})")
                continue
        known[key] = reason.strip()
    return known, problems


def _parser_class(cls: type[ConformanceSuite]) -> type[Parser]:
    target = cls.parser
    if target is None:
        msg = "not set: name the parser under test (a registered name or a Parser class)"
        raise ValueError(msg)
    if isinstance(target, str):
        return Registry.load().get(target)
    candidate: object = target  # a user may have set anything
    if inspect.isclass(candidate) and issubclass(candidate, Parser):
        return candidate
    msg = f"{target!r} is neither a parser name nor a toolcall.Parser subclass"
    raise TypeError(msg)
