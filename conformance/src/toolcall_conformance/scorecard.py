"""``toolcall conformance``: run the kit over installed parsers and print a scorecard.

Which parsers: those named with ``-p``, else every installed parser (through the
registry) that has cases. Which cases for a parser: the shipped corpus of its format
(``Parser.corpus`` or its name) and every case under ``--cases`` whose ``parser`` field
names it (or its corpus). A case file that does not load, and a ``--cases`` case whose
parser is not installed, are failures, not silently skipped.

The scorecard counts only what it proves:

* an **alias** (the same parser behaviour under another name: a subclass that changes
  nothing but ``name``, ``summary`` or ``corpus``, on the same cases) is not run again; it
  is shown as an alias of the parser it repeats and counted once, under that parser;
* a check that would feed the parser what another check of the case feeds it (recorded
  steps of one token each are the ``stream-token`` split) is *not applicable*, shown as
  such and never counted as passed (:func:`toolcall_conformance.checks.plan_checks`);
* per parser it gives the cases by provenance (recorded, wild, template, constructed) and
  the number of independent checks that ran;
* per parser (aliases once) it checks the properties that hold on any output
  (:mod:`toolcall_conformance.fuzz`): the stream API (``feed`` after ``finish``, ``feed``
  of a non-``str``) and a derandomized fuzz of ``--fuzz-examples`` mutated outputs of the
  parser's cases; it shows how many outputs the fuzz checked and its finding, shrunk.

The exit status is 0 only if every check that ran passed and every property held; 1 if
one failed; 2 for a usage error (an unknown parser, nothing to check, vLLM missing for
``--against-vllm``). vLLM's built-ins are a baseline shown beside ours; their failures do
not change the status.
"""

from __future__ import annotations

import argparse
import json
import os
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
    corpus_of,
    plan_checks,
    run_check,
)
from toolcall_conformance.fuzz import (
    Finding,
    check_stream_api,
    installed_markers,
    search,
    seeds_from_cases,
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
    "FUZZ_EXAMPLES",
    "PROVENANCE_KINDS",
    "Properties",
    "ScorecardError",
    "Target",
    "add_arguments",
    "behaviour_class",
    "builtin_aliases",
    "check_properties",
    "main",
    "mark_aliases",
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

PROVENANCE_KINDS = ("recorded", "wild", "template", "constructed")

#: Mutated outputs fuzzed per parser, unless ``--fuzz-examples`` or ``TOOLCALL_FUZZ_EXAMPLES``
#: says otherwise.
FUZZ_EXAMPLES = 50

#: Class attributes that describe a parser without changing what it does.
_METADATA = frozenset({"name", "summary", "corpus", "_abc_impl"})


@dataclass(frozen=True)
class Properties:
    """What held of one parser on any output: the stream API's problems, how many mutated
    outputs the fuzz checked, and what it found (``None``: nothing)."""

    parser: str
    stream_api: tuple[str, ...]
    fuzzed: int
    finding: Finding | None = None

    @property
    def failed(self) -> bool:
        return bool(self.stream_api) or self.finding is not None

    def failures(self) -> list[str]:
        lines = [f"{self.parser} stream API FAILED: {problem}" for problem in self.stream_api]
        if self.finding is not None:
            lines.append(f"{self.parser} fuzz FAILED after {self.fuzzed} outputs: {self.finding}")
        return lines

    def to_json(self) -> dict[str, Any]:
        finding = self.finding
        return {
            "stream_api": list(self.stream_api),
            "fuzzed": self.fuzzed,
            "finding": None
            if finding is None
            else {
                "text": finding.text,
                "split_seed": finding.split_seed,
                "problems": list(finding.problems),
            },
        }


class ScorecardError(Exception):
    """A usage error: reported on one line, exit status 2."""


@dataclass(frozen=True)
class Target:
    """A parser and the cases it must pass; ``alias_of`` names the parser it repeats."""

    parser_class: type[Parser]
    cases: tuple[Case, ...]
    alias_of: str | None = None

    @property
    def name(self) -> str:
        return self.parser_class.name


def behaviour_class(parser_class: type[Parser]) -> type[Parser]:
    """The class that defines what ``parser_class`` does: itself, or the nearest base class
    when it (and every class in between) only sets ``name``, ``summary`` or ``corpus``."""
    current = parser_class
    while current.__base__ is not None and issubclass(current.__base__, Parser):
        own = {key for key in vars(current) if not (key.startswith("__") and key.endswith("__"))}
        if own - _METADATA or current.__base__ is Parser:
            break
        current = current.__base__
    return current


def mark_aliases(targets: Sequence[Target]) -> list[Target]:
    """Mark each target whose behaviour class and cases equal an earlier target's as an
    alias of it (targets in name order, so the first name is the one counted)."""
    ordered = sorted(targets, key=lambda target: target.name)
    seen: dict[tuple[type[Parser], frozenset[str]], str] = {}
    marked = []
    for target in ordered:
        key = (behaviour_class(target.parser_class), frozenset(c.id for c in target.cases))
        original = seen.setdefault(key, target.name)
        alias = original if original != target.name else None
        marked.append(Target(target.parser_class, target.cases, alias))
    return marked


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
        "--fuzz-examples",
        type=_budget,
        default=None,
        metavar="N",
        help="mutated outputs to fuzz per parser (default: TOOLCALL_FUZZ_EXAMPLES, else "
        f"{FUZZ_EXAMPLES}; 0 leaves the fuzz out)",
    )
    parser.add_argument(
        "--no-grammar",
        action="store_true",
        help="leave out the grammar checks (which need xgrammar)",
    )


def _budget(text: str) -> int:
    if not text.strip().isdigit():
        msg = f"a number of outputs (0 or more), not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def main(args: argparse.Namespace, *, registry: Registry | None = None) -> int:
    """Run the scorecard for parsed arguments; returns the exit status."""
    out = sys.stdout
    try:
        registry = registry if registry is not None else Registry.load()
        targets, load_results = select_targets(registry, args.parsers or (), args.case_dirs or ())
        baseline = _baseline() if args.against_vllm else None
        examples = args.fuzz_examples
        if examples is None:
            examples = _budget(os.environ.get("TOOLCALL_FUZZ_EXAMPLES", str(FUZZ_EXAMPLES)))
    except (ScorecardError, argparse.ArgumentTypeError) as error:
        print(f"toolcall conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    resources = Resources(grammar=not args.no_grammar)
    results, vllm_results = run(targets, resources, baseline=baseline, progress=not args.json)
    results = [*load_results, *results]
    properties = check_properties(targets, installed_markers(registry), examples=examples)
    if args.json:
        data: dict[str, Any] = {
            "results": [result.to_json() for result in results],
            "summary": summarize(results, targets),
            "properties": {entry.parser: entry.to_json() for entry in properties},
        }
        if baseline is not None:
            data["vllm"] = {
                "version": baseline.version,
                "results": [result.to_json() for result in vllm_results],
                "summary": summarize(vllm_results),
                "aliases": builtin_aliases(baseline, targets),
            }
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        render(
            results,
            vllm_results if baseline is not None else None,
            targets=targets,
            properties=properties,
            out=out,
        )
        for name, original in builtin_aliases(baseline, targets).items() if baseline else ():
            print(
                f"vLLM's {name} is its {original} class on the same cases: counted once, "
                f"under {original}",
                file=out,
            )
    failed = any(result.failed for result in results) or any(p.failed for p in properties)
    return EXIT_FAILED if failed else EXIT_OK


def check_properties(
    targets: Sequence[Target], markers: Sequence[str], *, examples: int
) -> list[Properties]:
    """The stream API and ``examples`` fuzzed outputs (none if 0) of every target that is
    not an alias, seeded with its cases; ``markers`` are the fuzz's alphabet."""
    checked = []
    for target in sorted(targets, key=lambda t: t.name):
        if target.alias_of is not None:
            continue
        seeds = seeds_from_cases(target.parser_class, target.cases)
        # Built for a case's request and tokenizer: a parser may need them.
        stream_api = tuple(check_stream_api(seeds[0].make_parser if seeds else target.parser_class))
        if examples == 0 or not seeds:
            checked.append(Properties(target.name, stream_api, 0))
            continue
        searched = search(seeds, [*markers, *target.parser_class.markers], examples=examples)
        checked.append(Properties(target.name, stream_api, searched.examples, searched.finding))
    return checked


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
    return mark_aliases(targets), failures


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
    """Run every check of every target that is not an alias (and the vLLM baseline, if
    given); a check that repeats another of its case is reported as not applicable."""
    work = [
        (target, case, entry)
        for target in targets
        if target.alias_of is None
        for case in target.cases
        for entry in plan_checks(case, grammar=resources.grammar, parser_class=target.parser_class)
    ]
    vllm_work = (
        [
            (target, case, entry)
            for target in targets
            if baseline.has_builtin(target.name)
            and target.name not in builtin_aliases(baseline, targets)
            for case in target.cases
            for entry in plan_checks(case, grammar=False)
            if entry.check in BASELINE_CHECKS
        ]
        if baseline is not None
        else []
    )
    results: list[CheckResult] = []
    vllm_results: list[CheckResult] = []
    with _Progress(len(work) + len(vllm_work), enabled=progress) as bar:
        for target, case, entry in work:
            bar.describe(f"{target.name} {case.id} {entry.check}")
            if entry.applicable:
                results.append(run_check(target.parser_class, case, entry.check, resources))
            else:
                results.append(entry.not_applicable(case, target.name))
            bar.advance()
        for target, case, entry in vllm_work:
            assert baseline is not None
            bar.describe(f"vLLM {target.name} {case.id} {entry.check}")
            if entry.applicable:
                vllm_results.append(baseline.run_check(target.name, case, entry.check))
            else:
                vllm_results.append(entry.not_applicable(case, baseline_name(target.name)))
            bar.advance()
    return results, vllm_results


def builtin_aliases(baseline: VllmBaseline, targets: Sequence[Target]) -> dict[str, str]:
    """vLLM's own aliases: a name whose built-in class and cases are an earlier name's
    (vLLM registers ``qwen3_json`` with its hermes class), counted once as ours are."""
    seen: dict[tuple[type[Any], frozenset[str]], str] = {}
    aliases = {}
    for target in sorted(targets, key=lambda t: t.name):
        if not baseline.has_builtin(target.name):
            continue
        key = (baseline.builtin_class(target.name), frozenset(c.id for c in target.cases))
        original = seen.setdefault(key, target.name)
        if original != target.name:
            aliases[target.name] = original
    return aliases


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


def _check_counts(results: Iterable[CheckResult]) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "not_applicable": 0, "total": 0}
    for result in results:
        if not result.applicable:
            counts["not_applicable"] += 1
            continue
        counts["passed" if result.passed else "failed"] += 1
        counts["total"] += 1
    return counts


def _provenance(cases: Iterable[Case]) -> dict[str, int]:
    kinds = Counter(str(case.provenance.get("kind")) for case in cases)
    counts = {"total": sum(kinds.values())}
    counts.update({kind: kinds.get(kind, 0) for kind in PROVENANCE_KINDS})
    return counts


def summarize(results: Sequence[CheckResult], targets: Sequence[Target] = ()) -> dict[str, Any]:
    """Totals and, per parser, the checks (passed / failed / not applicable; ``total`` is
    the checks that ran), the cases by provenance (when the targets are given) and which
    parsers are aliases. ``total`` at the top is the number of independent checks."""
    by_parser: dict[str, dict[str, Any]] = {}
    grouped: dict[str, list[CheckResult]] = {}
    for result in results:
        grouped.setdefault(result.parser, []).append(result)
    for parser_name, mine in grouped.items():
        checks: dict[str, list[CheckResult]] = {}
        for result in mine:
            checks.setdefault(result.check, []).append(result)
        counts = _check_counts(mine)
        by_parser[parser_name] = {
            "checks": {check: _check_counts(group) for check, group in checks.items()},
            "independent": counts["total"],
            "passed": counts["passed"],
            "failed": counts["failed"],
            "not_applicable": counts["not_applicable"],
        }
    aliases = {}
    for target in targets:
        entry = by_parser.setdefault(target.name, {})
        entry["cases"] = _provenance(target.cases)
        if target.alias_of is not None:
            entry["alias_of"] = target.alias_of
            aliases[target.name] = target.alias_of
    totals = _check_counts(results)
    return {
        "passed": totals["passed"],
        "failed": totals["failed"],
        "total": totals["total"],
        "not_applicable": totals["not_applicable"],
        "cases": len({r.case for r in results if r.check != LOAD_CHECK}),
        "aliases": aliases,
        "by_parser": by_parser,
    }


def render(
    results: Sequence[CheckResult],
    vllm_results: Sequence[CheckResult] | None = None,
    *,
    targets: Sequence[Target] = (),
    properties: Sequence[Properties] = (),
    out: TextIO | None = None,
) -> None:
    """The scorecard: the checks per parser, the cases and independent checks per parser,
    the properties on any output, what was not applicable and why, the aliases, then the
    failures."""
    stream = out or sys.stdout
    # Not a terminal (CI logs, a file): wide enough that no column is cut.
    width = None if stream.isatty() else 120
    console = Console(file=stream, soft_wrap=True, highlight=False, width=width)
    ours = _counts(results)
    theirs = _counts(vllm_results or ())
    table = Table(title="toolcall conformance: checks", header_style="bold")
    table.add_column("parser")
    table.add_column("check")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("n/a", justify="right")
    if vllm_results is not None:
        table.add_column("vLLM built-in passed / run", justify="right")
    asked = _constrained_asked(targets)
    for parser_name, check in _rows(ours, asked if targets else None):
        counts = ours.get((parser_name, check))
        if counts is None:  # grammar-constrained where no case asks for it
            table.add_row(parser_name, check, "-", "-", "-", *(["-"] if vllm_results else []))
            continue
        failed = counts["failed"]
        row = [
            parser_name,
            check,
            f"[green]{counts['passed']}[/]" if counts["total"] else "0",
            f"[red]{failed}[/]" if failed else "0",
            str(counts["not_applicable"]),
        ]
        if vllm_results is not None:
            base = theirs.get((baseline_name(parser_name), check))
            row.append(_ratio(base) if base is not None else "-")
        table.add_row(*row)
    console.print(table)
    if targets:
        console.print(_cases_table(results, targets))
    if properties:
        console.print(_properties_table(properties, targets))
    _print_notes(console, results, targets, asked)
    summary = summarize(results, targets)
    failed_results = [result for result in results if result.failed]
    parsers = [t for t in targets if t.alias_of is None]
    scope = f" ({summary['cases']} cases, {len(parsers)} parsers)" if targets else ""
    console.print(
        f"{summary['passed']} of {summary['total']} independent checks passed{scope}"
        + (f", [red]{summary['failed']} failed[/]" if summary["failed"] else "")
        + f"; {summary['not_applicable']} not applicable (repeats, not run)"
    )
    if properties:
        held = sum(not entry.failed for entry in properties)
        fuzzed = sum(entry.fuzzed for entry in properties)
        console.print(
            f"properties held for {held} of {len(properties)} parsers "
            f"(the stream API, and {fuzzed} fuzzed outputs)"
        )
    property_failures = [line for entry in properties for line in entry.failures()]
    if failed_results or property_failures:
        console.print("\n[bold]Failures[/]")
        for result in failed_results:
            console.print(f"- {_escape(str(result))}")
        for line in property_failures:
            console.print(f"- {_escape(line)}")
    if vllm_results:
        base = summarize(vllm_results)
        vllm_failed = [result for result in vllm_results if result.failed]
        console.print(
            f"\nvLLM built-ins: {base['passed']} of {base['total']} checks passed "
            "(a baseline: not part of the exit status)"
        )
        if vllm_failed:
            console.print("\n[bold]vLLM built-in failures[/]")
            for result in vllm_failed:
                console.print(f"- {_escape(str(result))}")


def _cases_table(results: Sequence[CheckResult], targets: Sequence[Target]) -> Table:
    table = Table(title="toolcall conformance: cases and independent checks", header_style="bold")
    table.add_column("parser")
    table.add_column("cases", justify="right")
    for kind in PROVENANCE_KINDS:
        table.add_column(kind, justify="right")
    table.add_column("independent checks", justify="right")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    summary = summarize(results, targets)["by_parser"]
    totals = Counter[str]()
    for target in sorted(targets, key=lambda t: t.name):
        entry = summary[target.name]
        cases = entry["cases"]
        if target.alias_of is not None:
            dash = ["-"] * (len(PROVENANCE_KINDS) + 3)
            table.add_row(target.name, f"alias of {target.alias_of}", *dash)
            continue
        row = [target.name, str(cases["total"]), *(str(cases[k]) for k in PROVENANCE_KINDS)]
        failed = entry.get("failed", 0)
        row += [
            str(entry.get("independent", 0)),
            f"[green]{entry.get('passed', 0)}[/]",
            f"[red]{failed}[/]" if failed else "0",
        ]
        table.add_row(*row)
        totals.update({key: cases[key] for key in ("total", *PROVENANCE_KINDS)})
        totals.update({key: entry.get(key, 0) for key in ("independent", "passed", "failed")})
    table.add_row(
        "[bold]all[/]",
        str(totals["total"]),
        *(str(totals[k]) for k in PROVENANCE_KINDS),
        str(totals["independent"]),
        str(totals["passed"]),
        str(totals["failed"]),
    )
    return table


def _properties_table(properties: Sequence[Properties], targets: Sequence[Target]) -> Table:
    table = Table(title="toolcall conformance: properties on any output", header_style="bold")
    table.add_column("parser")
    table.add_column("stream API")
    table.add_column("fuzzed outputs", justify="right")
    table.add_column("findings", justify="right")
    rows = {entry.parser: entry for entry in properties}
    aliases = {target.name: target.alias_of for target in targets if target.alias_of}
    for name in sorted({*rows, *aliases}):
        if name in aliases:
            table.add_row(name, f"alias of {aliases[name]}", "-", "-")
            continue
        entry = rows[name]
        api = f"[red]{len(entry.stream_api)} problems[/]" if entry.stream_api else "[green]ok[/]"
        found = "[red]1[/]" if entry.finding is not None else "0"
        table.add_row(name, api, str(entry.fuzzed), found if entry.fuzzed else "-")
    return table


def _print_notes(
    console: Console,
    results: Sequence[CheckResult],
    targets: Sequence[Target],
    asked: set[str],
) -> None:
    reasons = Counter(
        (result.parser, result.check, result.detail) for result in results if not result.applicable
    )
    lines = [
        f"{parser_name} {check}: {count} case{'s' if count != 1 else ''}, {detail}"
        for (parser_name, check, detail), count in sorted(reasons.items())
    ]
    lines += [
        f"{target.name} grammar-constrained: no case asks for it (request.constrained), "
        "so it did not run"
        for target in sorted(targets, key=lambda t: t.name)
        if target.alias_of is None and target.name not in asked
    ]
    if lines:
        console.print("[bold]Not applicable[/] (not run, not counted as passed)")
        for line in lines:
            console.print(f"- {_escape(line)}")
    for target in sorted(targets, key=lambda t: t.name):
        if target.alias_of is not None:
            console.print(
                f"{target.name} is an alias of {target.alias_of}: "
                f"{behaviour_class(target.parser_class).__name__} under another name, on the "
                f"same {len(target.cases)} cases; not run again, counted once under "
                f"{target.alias_of}"
            )


def _constrained_asked(targets: Sequence[Target]) -> set[str]:
    return {
        target.name
        for target in targets
        if any(case.request.get("constrained") is True for case in target.cases)
    }


def _counts(results: Iterable[CheckResult]) -> dict[tuple[str, str], Mapping[str, int]]:
    grouped: dict[tuple[str, str], list[CheckResult]] = {}
    for result in results:
        grouped.setdefault((result.parser, result.check), []).append(result)
    return {key: _check_counts(group) for key, group in grouped.items()}


def _rows(
    counts: Mapping[tuple[str, str], Mapping[str, int]], asked: set[str] | None = None
) -> list[tuple[str, str]]:
    order = {check: index for index, check in enumerate((LOAD_CHECK, *CHECKS))}
    keys = set(counts)
    parsers = {parser_name for parser_name, check in counts if check != LOAD_CHECK}
    if asked is not None:
        keys |= {(name, "grammar-constrained") for name in parsers - asked}
    return sorted(keys, key=lambda key: (key[0], order.get(key[1], len(order)), key[1]))


def _ratio(counts: Mapping[str, int]) -> str:
    text = f"{counts['passed']} / {counts['total']}"
    return f"[red]{text}[/]" if counts["failed"] else f"[green]{text}[/]"


def _escape(text: str) -> str:
    return escape(text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
