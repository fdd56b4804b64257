"""The replay checks: one case, one parser, one check at a time.

Every check is a function of (parser class, case) that returns a :class:`CheckResult`;
a failure's ``detail`` names the first difference (or the first broken clause of the
delta contract), so ``str(result)`` says which case, which check and what went wrong.

Checks, in the order they run:

``parse``
    the one-shot ``parse()`` of the whole output equals ``expected``.
``stream-recorded``, ``stream-token``, ``stream-char``, ``stream-random``
    a fresh stream fed the recorded engine steps, one token per step, one character per
    step, and 20 seeded random multi-token splits; each reassembled stream equals
    ``expected`` and the delta contract (:mod:`toolcall.contract`) holds throughout,
    including equality with the one-shot parse.
``grammar``
    where the case gives ``expected.grammar``: the structural tag for the case's request,
    with the strict level raised to ``parameter``, accepts (or rejects) the output.
``grammar-constrained``
    where ``request.constrained`` is true: the structural tag at the request's own strict
    level (or the parser's default) accepts the output.

A case's "tokens" are its recorded steps when every step holds exactly one token id;
otherwise the case's tokenizer decodes its ids one at a time, as vLLM's detokenizer
does. A text-only case (``tokenizer: null``) has free chunks as steps, and those chunks
stand in for tokens.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolcall import Parser, ParserContext, StrictLevel
from toolcall.contract import Violation, check_stream
from toolcall.strictness import resolve_plan
from toolcall_conformance.compare import first_difference
from toolcall_conformance.grammar import GrammarSession, GrammarUnavailable
from toolcall_conformance.tokenizers import get_tokenizer

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = [
    "CHECKS",
    "GRAMMAR_CHECKS",
    "RANDOM_SPLITS",
    "STREAM_CHECKS",
    "CheckResult",
    "Resources",
    "Split",
    "applicable_checks",
    "build_parser",
    "case_splits",
    "corpus_of",
    "run_case",
    "run_check",
]

STREAM_CHECKS = ("stream-recorded", "stream-token", "stream-char", "stream-random")
GRAMMAR_CHECKS = ("grammar", "grammar-constrained")
#: Every check, in the order :func:`run_case` runs them.
CHECKS = ("parse", *STREAM_CHECKS, *GRAMMAR_CHECKS)
#: How many seeded random multi-token splits ``stream-random`` tries.
RANDOM_SPLITS = 20
#: The largest number of tokens one random step holds.
MAX_TOKENS_PER_STEP = 8


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check of one case against one parser."""

    case: str
    parser: str
    check: str
    passed: bool
    detail: str = ""

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        tail = f": {self.detail}" if self.detail else ""
        return f"{self.case} [{self.parser}] {self.check} {verdict}{tail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "parser": self.parser,
            "check": self.check,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass
class Resources:
    """What checks share over one run: the grammar compilers, and whether to run the
    grammar checks at all (``grammar=False`` is ``--no-grammar``: they are left out)."""

    grammar: bool = True
    session: GrammarSession = field(default_factory=GrammarSession)


@dataclass(frozen=True)
class Split:
    """One way to cut the output into stream steps."""

    name: str
    steps: tuple[str, ...]
    token_ids: tuple[tuple[int, ...], ...] | None = None

    def describe(self) -> str:
        sizes = [len(ids) for ids in self.token_ids] if self.token_ids is not None else None
        shown = sizes if sizes is not None else [len(step) for step in self.steps]
        unit = "tokens" if sizes is not None else "characters"
        preview = ", ".join(str(n) for n in shown[:12]) + (", ..." if len(shown) > 12 else "")
        return f"{self.name} ({len(self.steps)} steps of [{preview}] {unit})"


class CaseDataError(ValueError):
    """The case cannot be replayed as it is written (its ids and text disagree, ...)."""


def corpus_of(parser_class: type[Parser]) -> str:
    """The shipped corpus a parser class must pass: ``Parser.corpus`` or its name."""
    return parser_class.corpus or parser_class.name


def build_parser(parser_class: type[Parser], case: Case) -> Parser:
    """The parser for one case: built, as vLLM builds it per request, from the case's
    request, the tokenizer's special tokens (and response template) and the prompt."""
    context = ParserContext(
        request=case.request_view(),
        vocabulary=case.vocabulary(),
        prompt=case.prompt,
    )
    return parser_class(context)


def applicable_checks(case: Case, *, grammar: bool = True) -> tuple[str, ...]:
    """The checks that apply to ``case`` (grammar checks only where the case asks)."""
    checks = ["parse", *STREAM_CHECKS]
    if grammar and case.expected.grammar is not None:
        checks.append("grammar")
    if grammar and case.request.get("constrained") is True:
        checks.append("grammar-constrained")
    return tuple(checks)


def run_case(
    parser_class: type[Parser],
    case: Case,
    resources: Resources | None = None,
    *,
    checks: Iterable[str] | None = None,
) -> list[CheckResult]:
    """Run every applicable check (or only ``checks``) of ``case`` against the parser."""
    resources = resources if resources is not None else Resources()
    wanted = applicable_checks(case, grammar=resources.grammar) if checks is None else checks
    return [run_check(parser_class, case, check, resources) for check in wanted]


def run_check(
    parser_class: type[Parser], case: Case, check: str, resources: Resources | None = None
) -> CheckResult:
    """Run one check; an exception from the parser is a failure that names it."""
    resources = resources if resources is not None else Resources()
    name = parser_class.name
    try:
        if check == "parse":
            detail = _check_parse(parser_class, case)
        elif check in STREAM_CHECKS:
            detail = _check_stream(parser_class, case, check)
        elif check in GRAMMAR_CHECKS:
            detail = _check_grammar(parser_class, case, check, resources)
        else:
            msg = f"unknown check {check!r} (choose from {', '.join(CHECKS)})"
            raise ValueError(msg)
    except CaseDataError as error:
        detail = f"case data: {error}"
    except GrammarUnavailable as error:
        detail = f"not run: {error}"
    except Exception as error:
        detail = f"raised {_describe(error)}"
    return CheckResult(case.id, name, check, detail is None, detail or "")


# -- parse and streams --------------------------------------------------------------------


def _check_parse(parser_class: type[Parser], case: Case) -> str | None:
    parsed = build_parser(parser_class, case).parse(case.text)
    difference = first_difference(case.expected, parsed)
    return None if difference is None else f"parse() differs from expected: {difference}"


def _check_stream(parser_class: type[Parser], case: Case, check: str) -> str | None:
    splits = case_splits(case, check)
    parser = build_parser(parser_class, case)
    for split in splits:
        problem = _replay(parser, case, split)
        if problem is not None:
            where = f" in {split.describe()}" if len(splits) > 1 else ""
            return f"{problem}{where}"
    return None


def _replay(parser: Parser, case: Case, split: Split) -> str | None:
    token_ids = [list(ids) for ids in split.token_ids] if split.token_ids is not None else None
    # DESIGN §6: "a recovered call may be emitted whole when it closes", so clause 6
    # (promptness) is not held against a case that expects a recovery.
    promptness = not case.expected.recoveries
    parsed, violations = check_stream(
        parser, list(split.steps), token_ids=token_ids, promptness=promptness
    )
    problems: list[str] = []
    difference = first_difference(case.expected, parsed)
    if difference is not None:
        problems.append(f"stream differs from expected: {difference}")
    if violations:
        problems.append(_describe_violations(violations))
    return "; ".join(problems) if problems else None


def _describe_violations(violations: Sequence[Violation]) -> str:
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    return f"delta contract {violations[0]}{more}"


def case_splits(case: Case, check: str) -> list[Split]:
    """The step sequences a stream check feeds (one for most checks, 20 for random)."""
    if check == "stream-recorded":
        return [_recorded_split(case)]
    if check == "stream-char":
        return [Split("one character per step", tuple(case.text))]
    units = _token_units(case)
    if check == "stream-token":
        return [_join("one token per step", [[unit] for unit in units])]
    if check == "stream-random":
        return [_random_split(case.id, units, number) for number in range(RANDOM_SPLITS)]
    msg = f"not a stream check: {check!r}"
    raise ValueError(msg)


def _recorded_split(case: Case) -> Split:
    steps = tuple(step.text for step in case.steps)
    if any(step.token_ids is not None for step in case.steps):
        ids = tuple(tuple(step.token_ids or ()) for step in case.steps)
        return Split("the recorded steps", steps, ids)
    return Split("the recorded steps", steps)


@dataclass(frozen=True)
class _Unit:
    text: str
    token_id: int | None


def _token_units(case: Case) -> list[_Unit]:
    """The output as single tokens: (text the detokenizer releases, id)."""
    steps = case.steps
    if all(step.token_ids is not None and len(step.token_ids) == 1 for step in steps):
        return [_Unit(step.text, step.token_ids[0]) for step in steps if step.token_ids]
    if case.tokenizer is None:
        # A text-only case: its free chunks stand in for tokens.
        return [_Unit(step.text, None) for step in steps]
    ids = [token_id for step in steps for token_id in (step.token_ids or ())]
    texts = get_tokenizer(case.tokenizer).decode_steps(ids)
    decoded = "".join(texts)
    if decoded != case.text:
        at = next(
            (i for i, (a, b) in enumerate(zip(decoded, case.text, strict=False)) if a != b),
            min(len(decoded), len(case.text)),
        )
        msg = (
            f"the {case.tokenizer} tokenizer decodes the case's token ids to a text that "
            f"differs from the steps' text at character {at}: "
            f"{decoded[at : at + 20]!r} vs {case.text[at : at + 20]!r}"
        )
        raise CaseDataError(msg)
    return [_Unit(text, token_id) for text, token_id in zip(texts, ids, strict=True)]


def _join(name: str, groups: Sequence[Sequence[_Unit]]) -> Split:
    steps = tuple("".join(unit.text for unit in group) for group in groups)
    if all(unit.token_id is not None for group in groups for unit in group):
        ids = tuple(
            tuple(unit.token_id for unit in group if unit.token_id is not None) for group in groups
        )
        return Split(name, steps, ids)
    return Split(name, steps)


def _random_split(case_id: str, units: Sequence[_Unit], number: int) -> Split:
    # A string seed is hashed with SHA-512 by random.seed: the same split on every run.
    seed = f"{case_id}#{number}"
    rng = random.Random(seed)
    groups: list[Sequence[_Unit]] = []
    position = 0
    while position < len(units):
        size = rng.randint(1, MAX_TOKENS_PER_STEP)
        groups.append(units[position : position + size])
        position += size
    return _join(f"random split {number} (seed {seed!r})", groups)


# -- grammar ----------------------------------------------------------------------------------


def _check_grammar(
    parser_class: type[Parser], case: Case, check: str, resources: Resources
) -> str | None:
    if case.tokenizer is None:
        msg = "the grammar check needs token ids from a real tokenizer; this case has none"
        raise CaseDataError(msg)
    request = case.request_view()
    parser = build_parser(parser_class, case)
    if check == "grammar":
        plan = resolve_plan(
            request,
            strict_level=StrictLevel.PARAMETER,
            default_level=parser_class.default_strict_level,
        )
        want = case.expected.grammar
        level_note = "strict level raised to parameter"
    else:
        own = case.request.get("strict_level")
        plan = resolve_plan(
            request,
            strict_level=StrictLevel.from_name(own) if isinstance(own, str) else None,
            default_level=parser_class.default_strict_level,
        )
        want = "accept"
        level_note = f"strict level {plan.level.name.lower()} (the request's own)"
    if not plan.grammar:
        msg = (
            f"no grammar applies to this request ({level_note}): tool_choice "
            f"{request.tool_choice!r} with {len(request.tools)} tool(s)"
        )
        raise CaseDataError(msg)
    tag = parser.structural_tag(plan)
    if tag is None:
        return f"the parser builds no structural tag for a plan that needs one ({level_note})"
    tokenizer = get_tokenizer(case.tokenizer)
    ids = [token_id for step in case.steps for token_id in (step.token_ids or ())]
    if not ids:
        raise CaseDataError("the case has no token ids to feed the grammar")
    stops = list(case.stop_token_ids) or list(tokenizer.stop_token_ids)
    compiled = resources.session.compile(tag, tokenizer)
    outcome = resources.session.match(compiled, [*ids, stops[0]], stops)
    if want == "accept":
        if outcome.refused is not None:
            refused = _token_at(tokenizer, ids, stops, outcome.refused)
            return f"grammar ({level_note}) refused {refused}"
        if not outcome.terminated:
            return (
                f"grammar ({level_note}) accepted all {len(ids)} tokens and the stop token "
                f"{stops[0]} but did not terminate"
            )
        return None
    if outcome.refused is None:
        return (
            f"grammar ({level_note}) accepted all {len(ids)} tokens and the stop token "
            f"{stops[0]}, but the case expects it to refuse one"
        )
    return None


def _token_at(tokenizer: Any, ids: Sequence[int], stops: Sequence[int], position: int) -> str:
    if position >= len(ids):
        before = tokenizer.decode(ids)[-40:]
        return f"the stop token {stops[0]} after all {len(ids)} tokens (output ends {before!r})"
    token_text = tokenizer.decode([ids[position]])
    before = tokenizer.decode(ids[:position])[-40:]
    return f"token #{position} id={ids[position]} {token_text!r} after {before!r}"


def _describe(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}{where}" if text else f"{type(error).__name__}{where}"
