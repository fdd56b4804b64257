"""``toolcall conformance``: run the kit over installed parsers and print a scorecard.

Which parsers: those named with ``-p``, else every installed parser (through the
registry) that has cases. Which cases for a parser: the shipped corpus of its format
(``Parser.corpus`` or its name) and every case under ``--cases`` whose ``parser`` field
names it (or its corpus). A case file that does not load, and a ``--cases`` case whose
parser is not installed, are failures, not silently skipped.

The exit status is 0 only if every check passed; 1 if one failed; 2 for a usage error
(an unknown parser, nothing to check, vLLM missing for ``--against-vllm``). vLLM's
built-ins are a baseline shown beside ours; their failures do not change the status.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from toolcall import Parser
from toolcall.registry import Registry, RegistryError
from toolcall_conformance.cases import load_cases, shipped_case_dirs
from toolcall_conformance.checks import (
    CHECKS,
    CheckResult,
    Resources,
    applicable_checks,
    corpus_of,
    run_check,
)
from toolcall_conformance.vllm_baseline import (
    BASELINE_CHECKS,
    VllmBaseline,
    VllmUnavailable,
    baseline_name,
)

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "ScorecardError",
    "Target",
    "add_arguments",
    "main",
    "render",
    "run",
    "select_targets",
    "summarize",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

#: The ``check`` of a result that reports a case file that could not be loaded or placed.
LOAD_CHECK = "load"


class ScorecardError(Exception):
    """A usage error: reported on one line, exit status 2."""


@dataclass(frozen=True)
class Target:
    """A parser and the cases it must pass."""

    parser_class: type[Parser]
    cases: tuple[Case, ...]

    @property
    def name(self) -> str:
        return self.parser_class.name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The scorecard's options (``toolcall conformance``)."""
    parser.add_argument(
        "-p",
        "--parser",
        dest="parsers",
        action="append",
        metavar="NAME",
        help="a parser to check (repeatable; default: every installed parser with cases)",
    )
    parser.add_argument(
        "--cases",
        dest="case_dirs",
        action="append",
        metavar="DIR",
        type=Path,
        help="more case files or directories (repeatable), beside the shipped corpus",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--against-vllm",
        action="store_true",
        help="also run the cases through vLLM's built-in parser of the same name",
    )
    parser.add_argument(
        "--no-grammar",
        action="store_true",
        help="leave out the grammar checks (which need xgrammar)",
    )


def main(args: argparse.Namespace, *, registry: Registry | None = None) -> int:
    """Run the scorecard for parsed arguments; returns the exit status."""
    out = sys.stdout
    try:
        registry = registry if registry is not None else Registry.load()
        targets, load_results = select_targets(registry, args.parsers or (), args.case_dirs or ())
        baseline = _baseline() if args.against_vllm else None
    except ScorecardError as error:
        print(f"toolcall conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    resources = Resources(grammar=not args.no_grammar)
    results, vllm_results = run(targets, resources, baseline=baseline, progress=not args.json)
    results = [*load_results, *results]
    if args.json:
        data: dict[str, Any] = {
            "results": [result.to_json() for result in results],
            "summary": summarize(results),
        }
        if baseline is not None:
            data["vllm"] = {
                "version": baseline.version,
                "results": [result.to_json() for result in vllm_results],
                "summary": summarize(vllm_results),
            }
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        render(results, vllm_results if baseline is not None else None, out=out)
    return EXIT_OK if all(result.passed for result in results) else EXIT_FAILED


def _baseline() -> VllmBaseline:
    try:
        return VllmBaseline()
    except VllmUnavailable as error:
        raise ScorecardError(str(error)) from error


def select_targets(
    registry: Registry, names: Sequence[str], case_dirs: Sequence[Path]
) -> tuple[list[Target], list[CheckResult]]:
    """The parsers to check with their cases, and ``load`` failures for case files that
    did not load or whose parser is not installed."""
    for directory in case_dirs:
        if not directory.exists():
            msg = f"--cases {directory}: no such file or directory"
            raise ScorecardError(msg)
    extra, errors = load_cases(list(case_dirs)) if case_dirs else ([], [])
    failures = [
        CheckResult(str(error.path), "-", LOAD_CHECK, False, f"{error.field}: {error.message}")
        for error in errors
    ]
    if names:
        classes = []
        for name in dict.fromkeys(names):
            try:
                classes.append(registry.get(name))
            except RegistryError as error:
                raise ScorecardError(str(error)) from error
    else:
        classes = [entry.parser_class for entry in registry.entries()]
    targets: list[Target] = []
    claimed: set[str] = set()
    for parser_class in classes:
        corpus = corpus_of(parser_class)
        wanted = {parser_class.name, corpus}
        shipped, shipped_errors = load_cases(shipped_case_dirs(corpus))
        failures += [
            CheckResult(
                str(error.path),
                parser_class.name,
                LOAD_CHECK,
                False,
                f"{error.field}: {error.message}",
            )
            for error in shipped_errors
        ]
        mine = [case for case in extra if case.parser in wanted]
        claimed.update(case.id for case in mine)
        cases = _unique([*shipped, *mine])
        if cases:
            targets.append(Target(parser_class, tuple(cases)))
        elif names:
            msg = f"no cases for parser {parser_class.name!r} (corpus {corpus!r}); give --cases DIR"
            raise ScorecardError(msg)
    if not names:
        installed = ", ".join(registry.names()) or "none"
        failures += [
            CheckResult(
                case.id,
                case.parser,
                LOAD_CHECK,
                False,
                f"{case.path}: targets parser {case.parser!r}, which is not installed "
                f"(installed: {installed})",
            )
            for case in extra
            if case.id not in claimed
        ]
    if not targets and not failures:
        msg = "no installed parser has cases (install a toolcall plugin, or give -p and --cases)"
        raise ScorecardError(msg)
    return targets, failures


def _unique(cases: Iterable[Case]) -> list[Case]:
    seen: dict[str, Case] = {}
    for case in cases:
        seen.setdefault(case.id, case)
    return list(seen.values())


def run(
    targets: Sequence[Target],
    resources: Resources,
    *,
    baseline: VllmBaseline | None = None,
    progress: bool = True,
) -> tuple[list[CheckResult], list[CheckResult]]:
    """Run every applicable check of every target (and the vLLM baseline, if given)."""
    work = [
        (target, case, check)
        for target in targets
        for case in target.cases
        for check in applicable_checks(case, grammar=resources.grammar)
    ]
    vllm_work = (
        [
            (target, case, check)
            for target in targets
            if baseline.has_builtin(target.name)
            for case in target.cases
            for check in BASELINE_CHECKS
        ]
        if baseline is not None
        else []
    )
    results: list[CheckResult] = []
    vllm_results: list[CheckResult] = []
    with _Progress(len(work) + len(vllm_work), enabled=progress) as bar:
        for target, case, check in work:
            bar.describe(f"{target.name} {case.id} {check}")
            results.append(run_check(target.parser_class, case, check, resources))
            bar.advance()
        for target, case, check in vllm_work:
            assert baseline is not None
            bar.describe(f"vLLM {target.name} {case.id} {check}")
            vllm_results.append(baseline.run_check(target.name, case, check))
            bar.advance()
    return results, vllm_results


class _Progress:
    """A rich progress bar on stderr, shown only on a terminal and for real work."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._bar: Any = None
        self._task: Any = None
        if enabled and total > 1 and sys.stderr.isatty():
            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._task = self._bar.add_task("checks", total=total)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=_clip(text, 60))

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)


def summarize(results: Sequence[CheckResult]) -> dict[str, Any]:
    """Totals, and per parser and check: passed / failed / total."""
    by_parser: dict[str, dict[str, dict[str, int]]] = {}
    for result in results:
        counts = by_parser.setdefault(result.parser, {}).setdefault(
            result.check, {"passed": 0, "failed": 0, "total": 0}
        )
        counts["passed" if result.passed else "failed"] += 1
        counts["total"] += 1
    passed = sum(result.passed for result in results)
    return {
        "passed": passed,
        "failed": len(results) - passed,
        "total": len(results),
        "cases": len({(result.parser, result.case) for result in results}),
        "by_parser": by_parser,
    }


def render(
    results: Sequence[CheckResult],
    vllm_results: Sequence[CheckResult] | None = None,
    *,
    out: TextIO | None = None,
) -> None:
    """The scorecard table (parser x check), then the failures."""
    console = Console(file=out or sys.stdout, soft_wrap=True, highlight=False)
    ours = _counts(results)
    theirs = _counts(vllm_results or ())
    table = Table(title="toolcall conformance", header_style="bold")
    table.add_column("parser")
    table.add_column("check")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("total", justify="right")
    if vllm_results is not None:
        table.add_column("vLLM built-in passed / total", justify="right")
    for parser_name, check in _rows(ours):
        counts = ours[parser_name, check]
        failed = counts["failed"]
        row = [
            parser_name,
            check,
            f"[green]{counts['passed']}[/]",
            f"[red]{failed}[/]" if failed else "0",
            str(counts["total"]),
        ]
        if vllm_results is not None:
            base = theirs.get((baseline_name(parser_name), check))
            row.append(_ratio(base) if base is not None else "-")
        table.add_row(*row)
    console.print(table)
    total = len(results)
    failed_results = [result for result in results if not result.passed]
    console.print(
        f"{total - len(failed_results)} of {total} checks passed"
        + (f", [red]{len(failed_results)} failed[/]" if failed_results else "")
    )
    if failed_results:
        console.print("\n[bold]Failures[/]")
        for result in failed_results:
            console.print(f"- {_escape(str(result))}")
    if vllm_results:
        vllm_failed = [result for result in vllm_results if not result.passed]
        console.print(
            f"\nvLLM built-ins: {len(vllm_results) - len(vllm_failed)} of {len(vllm_results)} "
            "checks passed (a baseline: not part of the exit status)"
        )
        if vllm_failed:
            console.print("\n[bold]vLLM built-in failures[/]")
            for result in vllm_failed:
                console.print(f"- {_escape(str(result))}")


def _counts(results: Iterable[CheckResult]) -> dict[tuple[str, str], Mapping[str, int]]:
    passed: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    for result in results:
        key = (result.parser, result.check)
        total[key] += 1
        passed[key] += result.passed
    return {
        key: {"passed": passed[key], "failed": total[key] - passed[key], "total": total[key]}
        for key in total
    }


def _rows(counts: Mapping[tuple[str, str], Mapping[str, int]]) -> list[tuple[str, str]]:
    order = {check: index for index, check in enumerate((LOAD_CHECK, *CHECKS))}
    return sorted(counts, key=lambda key: (key[0], order.get(key[1], len(order)), key[1]))


def _ratio(counts: Mapping[str, int]) -> str:
    text = f"{counts['passed']} / {counts['total']}"
    return f"[red]{text}[/]" if counts["failed"] else f"[green]{text}[/]"


def _escape(text: str) -> str:
    return escape(text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
