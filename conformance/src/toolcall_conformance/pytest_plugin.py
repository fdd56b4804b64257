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
difference.

The grammar checks need xgrammar; without it they fail ("not run: xgrammar missing")
unless pytest runs with ``--toolcall-no-grammar``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
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
    metafunc.parametrize("toolcall_conformance_item", items, ids=[item.id for item in items])


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
    for case in cases:
        if case.parser not in wanted:
            continue
        for check in applicable_checks(case, grammar=grammar):
            items.append(ConformanceItem(parser_class, case, check))
    if not items:
        message = f"no cases for parser {parser_class.name!r}: set case_dirs on {cls.__qualname__}"
        items.append(ConformanceItem(parser_class, None, "load", message))
    return items


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
