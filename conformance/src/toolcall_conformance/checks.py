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

A check that would feed a parser exactly what another check of the same case feeds it
proves nothing more, so it is *not applicable* (:func:`plan_checks`): recorded steps that
hold one token each are the ``stream-token`` split, and so are a text-only case's chunks;
``grammar-constrained`` repeats ``grammar`` when the request's own strict level yields the
same structural tag and the case expects ``accept``. Such a check is reported as not
applicable (never as passed) and is not run.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolcall import Parser, ParserContext, StrictLevel
from toolcall.contract import Violation, check_stream
from toolcall.strictness import Plan, resolve_plan
from toolcall_conformance.cases import case_tokenizer
from toolcall_conformance.compare import first_difference
from toolcall_conformance.grammar import GrammarSession, GrammarUnavailable

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case, GrammarRefusal

__all__ = [
    "CHECKS",
    "GRAMMAR_CHECKS",
    "RANDOM_SPLITS",
    "STREAM_CHECKS",
    "CheckResult",
    "PlannedCheck",
    "Resources",
    "Split",
    "applicable_checks",
    "build_parser",
    "case_splits",
    "corpus_of",
    "plan_checks",
    "run_case",
    "run_check",
    "token_spans",
]

STREAM_CHECKS = ("stream-recorded", "stream-token", "stream-char", "stream-random")
GRAMMAR_CHECKS = ("grammar", "grammar-constrained")
#: Every check, in the order :func:`run_case` runs them.
CHECKS = ("parse", *STREAM_CHECKS, *GRAMMAR_CHECKS)
#: How many seeded random multi-token splits ``stream-random`` tries.
RANDOM_SPLITS = 20
#: The largest number of tokens one random step holds.
MAX_TOKENS_PER_STEP = 8


#: What a check came to: it ran and passed, it ran and failed, or it was not run because
#: it would repeat another check of the same case (``detail`` says which).
PASSED = "passed"
FAILED = "failed"
NOT_APPLICABLE = "not applicable"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check of one case against one parser.

    A check that was not run because it repeats another (``applicable=False``) is neither
    passed nor failed: ``passed`` is false and ``failed`` is false.
    """

    case: str
    parser: str
    check: str
    passed: bool
    detail: str = ""
    applicable: bool = True

    @property
    def outcome(self) -> str:
        if not self.applicable:
            return NOT_APPLICABLE
        return PASSED if self.passed else FAILED

    @property
    def failed(self) -> bool:
        return self.applicable and not self.passed

    def __str__(self) -> str:
        verdict = {PASSED: "passed", FAILED: "FAILED", NOT_APPLICABLE: "not applicable"}
        tail = f": {self.detail}" if self.detail else ""
        return f"{self.case} [{self.parser}] {self.check} {verdict[self.outcome]}{tail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "parser": self.parser,
            "check": self.check,
            "outcome": self.outcome,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class PlannedCheck:
    """A check of one case, and whether it would only repeat another check of the case."""

    check: str
    #: The check of the same case that feeds the parser the same input, if any.
    repeats: str | None = None
    reason: str = ""

    @property
    def applicable(self) -> bool:
        return self.repeats is None

    def not_applicable(self, case: Case, parser: str) -> CheckResult:
        detail = f"repeats {self.repeats}: {self.reason}"
        return CheckResult(case.id, parser, self.check, False, detail, applicable=False)


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


def plan_checks(
    case: Case, *, grammar: bool = True, parser_class: type[Parser] | None = None
) -> tuple[PlannedCheck, ...]:
    """The checks the case asks for, each marked where it would repeat another check of the
    case (see the module docstring). Grammar checks appear only where the case asks for
    them and ``grammar`` is true; ``grammar-constrained`` is compared with ``grammar`` only
    when the parser class is given."""
    planned = [PlannedCheck("parse"), *_plan_streams(case)]
    if grammar and case.expected.grammar is not None:
        planned.append(PlannedCheck("grammar"))
    if grammar and case.request.get("constrained") is True:
        same = (
            parser_class is not None
            and case.expected.grammar == "accept"
            and _same_tag_at_both_levels(parser_class, case)
        )
        planned.append(
            PlannedCheck(
                "grammar-constrained",
                "grammar" if same else None,
                "the request's own strict level gives the structural tag of the parameter "
                "level, and the case expects it to accept"
                if same
                else "",
            )
        )
    return tuple(planned)


#: Which stream check keeps a split that several would feed: the first in this order.
_STREAM_PRIORITY = ("stream-token", "stream-char", "stream-recorded", "stream-random")


def _plan_streams(case: Case) -> list[PlannedCheck]:
    owners: dict[tuple[tuple[str, ...], object], str] = {}
    repeats: dict[str, str | None] = {}
    for check in _STREAM_PRIORITY:
        try:
            keys = [(split.steps, split.token_ids) for split in case_splits(case, check)]
        except Exception:  # the check itself will report the problem when it runs
            repeats[check] = None
            continue
        earlier = [owners.get(key) for key in keys]
        if earlier and all(owner is not None for owner in earlier):
            repeats[check] = earlier[0]  # every split it feeds, an earlier check feeds
        else:
            repeats[check] = None
            for key in keys:
                owners.setdefault(key, check)
    planned = []
    for check in STREAM_CHECKS:
        owner = repeats[check]
        planned.append(PlannedCheck(check, owner, _repeat_reason(case, check, owner)))
    return planned


def _repeat_reason(case: Case, check: str, owner: str | None) -> str:
    if owner is None:
        return ""
    if check == "stream-recorded" and owner == "stream-token":
        if case.tokenizer is None:
            return "a text-only case's chunks stand in for its tokens"
        return "the recorded steps hold one token each"
    return f"every split it feeds is one that {owner} feeds"


def _same_tag_at_both_levels(parser_class: type[Parser], case: Case) -> bool:
    try:
        parser = build_parser(parser_class, case)
        tags = [parser.structural_tag(plan) for plan in _grammar_plans(parser_class, case)]
    except Exception:  # the grammar checks report it when they run
        return False
    return tags[0] is not None and tags[0] == tags[1]


def applicable_checks(
    case: Case, *, grammar: bool = True, parser_class: type[Parser] | None = None
) -> tuple[str, ...]:
    """The checks to run for ``case``: those it asks for that repeat no other."""
    planned = plan_checks(case, grammar=grammar, parser_class=parser_class)
    return tuple(entry.check for entry in planned if entry.applicable)


def run_case(
    parser_class: type[Parser],
    case: Case,
    resources: Resources | None = None,
    *,
    checks: Iterable[str] | None = None,
    not_applicable: bool = False,
) -> list[CheckResult]:
    """Run every check of ``case`` that repeats no other (or only ``checks``) against the
    parser. ``not_applicable=True`` also lists the checks left out as repeats, each as a
    result that is neither passed nor failed."""
    resources = resources if resources is not None else Resources()
    if checks is not None:
        return [run_check(parser_class, case, check, resources) for check in checks]
    results = []
    for entry in plan_checks(case, grammar=resources.grammar, parser_class=parser_class):
        if entry.applicable:
            results.append(run_check(parser_class, case, entry.check, resources))
        elif not_applicable:
            results.append(entry.not_applicable(case, parser_class.name))
    return results


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
    texts = case_tokenizer(case).decode_steps(ids)
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


def _grammar_plans(parser_class: type[Parser], case: Case) -> tuple[Plan, Plan]:
    """The plans of the two grammar checks: the request with the strict level raised to
    ``parameter``, and the request at its own strict level (else the parser's default)."""
    request = case.request_view()
    raised = resolve_plan(
        request,
        strict_level=StrictLevel.PARAMETER,
        default_level=parser_class.default_strict_level,
    )
    own = case.request.get("strict_level")
    constrained = resolve_plan(
        request,
        strict_level=StrictLevel.from_name(own) if isinstance(own, str) else None,
        default_level=parser_class.default_strict_level,
    )
    return raised, constrained


def _check_grammar(
    parser_class: type[Parser], case: Case, check: str, resources: Resources
) -> str | None:
    if case.tokenizer is None:
        msg = "the grammar check needs token ids from a real tokenizer; this case has none"
        raise CaseDataError(msg)
    request = case.request_view()
    parser = build_parser(parser_class, case)
    raised, constrained = _grammar_plans(parser_class, case)
    if check == "grammar":
        plan = raised
        want = case.expected.grammar
        level_note = "strict level raised to parameter"
    else:
        plan = constrained
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
    tokenizer = case_tokenizer(case)
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
    refusal = case.expected.grammar_refusal
    if refusal is None:
        return None
    return _misplaced(
        case,
        refusal=refusal,
        refused=outcome.refused,
        ids=ids,
        stops=stops,
        tokenizer=tokenizer,
        level_note=level_note,
    )


def _misplaced(
    case: Case,
    *,
    refusal: GrammarRefusal,
    refused: int,
    ids: Sequence[int],
    stops: Sequence[int],
    tokenizer: Any,
    level_note: str,
) -> str | None:
    """Whether the refused token is the one that holds the defect the case places."""
    text = case.text
    spans = token_spans([unit.text for unit in _token_units(case)])
    start, end = spans[refused] if refused < len(spans) else (len(text), len(text))
    at = refusal.offset
    if (start <= at < end) or (start == end == at == len(text)):
        return None
    where = "the stop token" if refused >= len(ids) else f"characters {start}-{end}"
    side = "earlier" if end <= at else "later"
    return (
        f"grammar ({level_note}) refused {_token_at(tokenizer, ids, stops, refused)} "
        f"({where}): {side} than the defect the case places at character {at} "
        f"({refusal.reason}: {text[at : at + 20]!r})"
    )


def token_spans(texts: Sequence[str]) -> list[tuple[int, int]]:
    """The character span of the output that each token's text covers, in order; a token
    that releases no text (part of a character) shares the span of the token that
    completes it, and one at the very end an empty span at the end."""
    spans: list[tuple[int, int]] = []
    position = 0
    pending = 0
    for text in texts:
        if not text:
            pending += 1
            continue
        span = (position, position + len(text))
        spans += [span] * (pending + 1)
        pending = 0
        position += len(text)
    spans += [(position, position)] * pending
    return spans


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
