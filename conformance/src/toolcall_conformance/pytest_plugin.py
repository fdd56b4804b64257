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

The grammar checks need xgrammar; without it they fail ("not run: xgrammar missing")
unless pytest runs with ``--toolcall-no-grammar``.
"""

from __future__ import annotations

import inspect
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

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = ["ConformanceItem", "ConformanceSuite"]

_NO_GRAMMAR = "--toolcall-no-grammar"


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
    wanted = {parser_class.name, corpus_of(parser_class)}
    paths: list[Path] = []
    if cls.include_shipped:
        paths += shipped_case_dirs(corpus_of(parser_class))
    for entry in cls.case_dirs:
        path = Path(entry)
        paths.append(path if path.is_absolute() else here / path)
    items: list[ConformanceItem] = []
    missing = [path for path in paths if not path.exists()]
    for path in missing:
        items.append(
            ConformanceItem(parser_class, None, "load", f"{path}: no such file or directory")
        )
    cases, errors = load_cases([path for path in paths if path.exists()])
    for error in errors:
        message = f"{error.path}: {error.field}: {error.message}"
        items.append(ConformanceItem(parser_class, None, "load", message))
    known, problems = _known_failures(cls)
    used: set[str] = set()
    for case in cases:
        if case.parser not in wanted:
            continue
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
