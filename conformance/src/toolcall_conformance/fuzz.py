"""Adversarial outputs, and the properties every parser keeps on any of them.

The conformance cases say what a parser must return for outputs somebody thought
of; this module checks what must hold for every output: the corpus outputs of a
parser's format, mutated (markers of every installed parser spliced in, pieces
cut, repeated, truncated, characters that mean something to some format
inserted), each fed one-shot and under several splits. Per output
(:func:`check_output`):

* nothing escapes ``feed``/``finish`` but the stream's deltas;
* the delta contract (clauses 1-6, :mod:`toolcall.contract`) holds for each split;
* streamed content equals one-shot content, character for character;
* the arguments of every call without a ``malformed-arguments`` or ``truncated``
  event are a strict JSON object, encodable as UTF-8
  (:func:`toolcall.scanning.json_object_problem`);
* **nothing lost**, by an oracle that does not read the parser's framing: every
  word of the output (a run of letters, case-folded; text inside backslash
  escapes and the parser's own markers aside, and a marker cut off by the end of
  the output, which a family may read as its call's framing, DESIGN §6
  ``missing-end``) occurs at least as often in what
  the parse returned (content, names, arguments) as in the output, unless the
  parse records that it ignored something (``ignored-member``, ``duplicate-key``,
  ``ignored-text``).
  Words of the formats' own structure (:data:`STRUCTURE_WORDS`) are exempt.

and per parser (:func:`check_stream_api`): ``feed`` after ``finish`` raises a clear
error, and ``feed`` of anything but ``str`` raises ``TypeError`` naming the type.

:func:`outputs` is the hypothesis strategy and :func:`search` runs it with a budget,
seeded with a parser's cases (:func:`seeds_from_cases`) and the markers of every
installed parser (:func:`installed_markers`) in the alphabet. Three places run it:
``conformance/tests/test_fuzz.py`` for every installed parser with a shipped corpus (its
budget from ``TOOLCALL_FUZZ_EXAMPLES``), the pytest plugin's ``ConformanceSuite`` for the
suite's parser on the suite's own cases, and the scorecard (``toolcall conformance``).
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex
from hypothesis import HealthCheck, Verbosity, given, settings
from hypothesis import strategies as st

from toolcall import EventName, Parsed, Parser
from toolcall.contract import check_stream
from toolcall.scanning import json_object_problem
from toolcall_conformance.checks import build_parser

if TYPE_CHECKING:
    from toolcall.registry import Registry
    from toolcall_conformance.cases import Case

__all__ = [
    "STRUCTURE_WORDS",
    "Example",
    "Finding",
    "Searched",
    "Seed",
    "check_output",
    "check_stream_api",
    "installed_markers",
    "lost_words",
    "outputs",
    "search",
    "seeds_from_cases",
]

#: Words a format writes as structure, which a parse does not return: call-object
#: keys, literal names a format converts (``True`` → ``true``), tag names.
STRUCTURE_WORDS = frozenset(
    {
        "name",
        "arguments",
        "parameters",
        "type",
        "function",
        "id",
        "true",
        "false",
        "null",
        "none",
        "nan",
        "infinity",
        "tool",
        "call",
        "calls",
        "arg",
        "key",
        "value",
        "args",
        "python",
        "tag",
        "start",
        "end",
        "function_calls",
        "parameter",
        # DeepSeek's tool separator and V3's ```json fence: they follow the name inside a
        # template's pattern opener, whose markers are its literal starts
        "sep",
        "json",
    }
)

_WORD = regex.compile(r"[^\W\d_]+")
#: A Python string's prefix (``f'...'``, ``r"..."``): syntax of the literal, not a word.
_STRING_PREFIX = regex.compile(r"(?<![^\W_])(?:[rRbBfF]{1,2}|[uU])(?=['\"])")
_ESCAPE = regex.compile(r"\\(?:u[0-9a-fA-F]{0,4}|x[0-9a-fA-F]{0,2}|N\{[^}]*\}|U[0-9a-fA-F]{0,8}|.)")
#: Characters that mean something to some format.
_SYNTAX = [*"{}[]()<>:,;=\"'\\/|.`#", "\n", "\t", " ", "  ", "\r\n"]
_TEXT = ["é", "東京", "🗼", "\u00a0", "\u2028", "x", "Paris", "42", "-1e400", "null", "True"]
#: Events after which a parser may have dropped text on purpose (and said so).
_DROPS = frozenset({EventName.IGNORED_MEMBER, EventName.DUPLICATE_KEY, EventName.IGNORED_TEXT})
_DEFECTS = frozenset({EventName.MALFORMED_ARGUMENTS, EventName.TRUNCATED})


@dataclass(frozen=True)
class Seed:
    """A starting output and the parser built for its request."""

    text: str
    make_parser: Callable[[], Parser]


def _mutation(markers: Sequence[str]) -> st.SearchStrategy[tuple[str, int, int, str]]:
    """``(kind, position, length, text)``; positions are fractions of the output, in
    thousandths, so a mutation applies to any output."""
    pieces = (
        st.sampled_from([*markers, *_SYNTAX, *_TEXT])
        if markers
        else st.sampled_from([*_SYNTAX, *_TEXT])
    )
    inserted = st.one_of(pieces, st.lists(pieces, min_size=1, max_size=4).map("".join))
    return st.tuples(
        st.sampled_from(["insert", "delete", "repeat", "truncate", "replace", "marker-prefix"]),
        st.integers(0, 1000),
        st.integers(1, 40),
        inserted,
    )


def _apply(text: str, mutation: tuple[str, int, int, str]) -> str:
    kind, where, length, piece = mutation
    at = where * len(text) // 1000
    if kind == "insert":
        return text[:at] + piece + text[at:]
    if kind == "delete":
        return text[:at] + text[at + length :]
    if kind == "repeat":
        return text[:at] + text[at : at + length] * 2 + text[at + length :]
    if kind == "truncate":
        return text[:at]
    if kind == "replace":
        return text[:at] + piece + text[at + len(piece) :]
    # A marker's start, then the rest of the output: the parser must not wait forever.
    cut = max(1, len(piece) - 1)
    return text[:at] + piece[:cut] + text[at:]


@st.composite
def outputs(draw: st.DrawFn, seeds: Sequence[Seed], markers: Sequence[str]) -> Example:
    """A seed and a mutated output of it (see :class:`Example` for its splits)."""
    seed = draw(st.sampled_from(seeds))
    text = seed.text
    for mutation in draw(st.lists(_mutation(markers), max_size=4)):
        text = _apply(text, mutation)
    return Example(seed, text, draw(st.integers(0, 2**32 - 1)))


@dataclass(frozen=True)
class Example:
    """One fuzzed output; ``splits`` are random cuts (from ``split_seed``), one
    character per step, and one delta."""

    seed: Seed
    text: str
    split_seed: int

    def splits(self) -> list[list[str]]:
        text = self.text
        rng = random.Random(self.split_seed)
        cuts = sorted({rng.randrange(1, max(2, len(text))) for _ in range(rng.randint(1, 12))})
        bounds = [0, *cuts, len(text)]
        random_split = [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]
        return [random_split, list(text), [text]]

    def __repr__(self) -> str:
        return f"Example(text={self.text!r}, split_seed={self.split_seed})"


def lost_words(text: str, parsed: Parsed, markers: Sequence[str]) -> list[str]:
    """Words of ``text`` that the parse does not return as often as the output has
    them (see the module docstring): the nothing-lost oracle.

    A word of the output counts as returned as often as it occurs (as a substring,
    case-folded) in the content, the reasoning, the names and ids and the arguments, both
    as written and as their JSON strings decode, so that a format which escapes or
    re-serialises values is not blamed for it."""
    returned = [parsed.content or "", parsed.reasoning or ""]
    for call in parsed.tool_calls:
        # A model-written id may stand right after the name (Mistral's NAME + id).
        returned += [call.name + call.id, call.arguments, *_strings(call.arguments)]
    have = "\n".join(returned).casefold()
    want = _words(text, markers)
    return sorted(word for word, count in want.items() if have.count(word) < count)


def _strings(arguments: str) -> list[str]:
    """The keys and string values of a JSON text (none if it does not parse)."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return []
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found += [key for key in item if isinstance(key, str)]
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return found


def _words(text: str, markers: Sequence[str]) -> Counter[str]:
    for marker in markers:
        cut = next((n for n in range(len(marker) - 1, 0, -1) if text.endswith(marker[:n])), 0)
        text = text[: len(text) - cut]
    for marker in sorted(markers, key=len, reverse=True):  # a marker may hold another
        text = text.replace(marker, " ")
    text = _ESCAPE.sub(" ", text)
    text = _STRING_PREFIX.sub(" ", text)
    return Counter(
        word
        for word in (match.casefold() for match in _WORD.findall(text))
        if word not in STRUCTURE_WORDS
    )


def check_output(parser: Parser, text: str, splits: Sequence[Sequence[str]]) -> list[str]:
    """Every property of one output; returns one line per problem."""
    problems: list[str] = []
    try:
        one_shot = parser.parse(text)
    except Exception as error:
        return [f"parse() raised {type(error).__name__}: {error}"]
    recovered = any(event.is_recovery for event in one_shot.events)
    for number, steps in enumerate(splits):
        try:
            streamed, violations = check_stream(parser, steps, promptness=not recovered)
        except Exception as error:
            problems.append(f"split {number}: the stream raised {type(error).__name__}: {error}")
            continue
        problems += [f"split {number}: {violation}" for violation in violations]
        mine, theirs = streamed.content, one_shot.content
        if mine != theirs:
            problems.append(
                f"split {number}: streamed content {mine!r} differs from one-shot {theirs!r}"
            )
    defective = {event.call_index for event in one_shot.events if event.name in _DEFECTS}
    for index, call in enumerate(one_shot.tool_calls):
        if index in defective:
            continue
        problem = json_object_problem(call.arguments)
        if problem is not None:
            problems.append(
                f"call {index} ({call.name!r}) has no defect event but its arguments are "
                f"{problem}: {call.arguments[:80]!r}"
            )
    if not any(event.name in _DROPS for event in one_shot.events):
        lost = lost_words(text, one_shot, parser.markers)
        if lost:
            problems.append(f"words of the output that the parse does not return: {lost[:10]}")
    return problems


def check_stream_api(parser: Parser | Callable[[], Parser]) -> list[str]:
    """``feed`` after ``finish`` and ``feed`` of a non-``str`` are clear errors; returns
    one line per problem (an exception where none belongs is one, never raised).

    ``parser`` may be a function that builds it (a :class:`Seed`'s, for a parser that
    needs a request or a tokenizer): an exception from it is a problem too."""
    if not isinstance(parser, Parser):
        try:
            parser = parser()
        except Exception as error:
            return [f"building the parser raised {type(error).__name__}: {error}"]
    problems: list[str] = []
    for bad in (None, b"x", 1, ["x"]):
        try:
            stream = parser.stream()
        except Exception as error:
            return [f"stream() raised {type(error).__name__}: {error}"]
        try:
            stream.feed(bad)  # type: ignore[arg-type]
        except TypeError as error:
            if type(bad).__name__ not in str(error):
                problems.append(
                    f"feed({bad!r}) raised TypeError without naming {type(bad).__name__}: {error}"
                )
        except Exception as error:
            problems.append(f"feed({bad!r}) raised {type(error).__name__}, not TypeError")
        else:
            problems.append(f"feed({bad!r}) was accepted")
    try:
        stream = parser.stream()
        stream.feed("x")
        stream.finish()
    except Exception as error:
        return [*problems, f"feed('x') then finish() raised {type(error).__name__}: {error}"]
    try:
        stream.feed("y")
    except RuntimeError:
        pass
    except Exception as error:
        problems.append(f"feed() after finish() raised {type(error).__name__}, not RuntimeError")
    else:
        problems.append("feed() after finish() was accepted")
    return problems


# -- running the search -----------------------------------------------------------------------


def seeds_from_cases(parser_class: type[Parser], cases: Iterable[Case]) -> list[Seed]:
    """One seed per case: its output, and the parser built for its request."""
    seeds = []
    for case in cases:

        def make(case: Case = case) -> Parser:
            return build_parser(parser_class, case)

        seeds.append(Seed(case.text, make))
    return seeds


def installed_markers(registry: Registry, *also: type[Parser]) -> list[str]:
    """The markers of every parser the registry serves (and of ``also``), sorted: the
    fuzzing alphabet, so that a format meets the markers of the others. A parser that
    does not load adds none (the registry reports it: ``toolcall list``)."""
    markers = {marker for parser_class in also for marker in parser_class.markers}
    for name in registry.names():
        try:
            markers.update(registry.get(name).markers)
        except Exception:  # a broken plugin is the registry's to report
            continue
    return sorted(markers)


@dataclass(frozen=True)
class Finding:
    """An output (shrunk by hypothesis) on which a property fails, and what fails."""

    text: str
    split_seed: int
    problems: tuple[str, ...]

    def __str__(self) -> str:
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        return f"the output {self.text!r} (split seed {self.split_seed}):\n{lines}"


@dataclass(frozen=True)
class Searched:
    """What :func:`search` did: how many outputs it checked before it stopped (the budget,
    fewer when hypothesis ran out of distinct outputs, or up to the first failure), and
    the failure it found, shrunk, if any."""

    examples: int
    finding: Finding | None = None

    @property
    def ok(self) -> bool:
        return self.finding is None


class _Found(Exception):
    def __init__(self, finding: Finding) -> None:
        super().__init__(str(finding))
        self.finding = finding


def search(
    seeds: Sequence[Seed],
    markers: Sequence[str],
    *,
    examples: int,
    randomize: bool = False,
) -> Searched:
    """Try up to ``examples`` mutated outputs of ``seeds`` (:func:`outputs`) against every
    property of :func:`check_output`; stops at the first failure, which hypothesis shrinks.

    Derandomized unless ``randomize``: the same seeds, markers and budget try the same
    outputs on every run. Nothing is printed (a finding is in the return value)."""
    if not seeds:
        msg = "no seed outputs to mutate"
        raise ValueError(msg)
    if examples < 1:
        msg = f"the budget must be at least one output, not {examples}"
        raise ValueError(msg)
    tried = 0
    failed = False

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=not randomize,
        database=None,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(outputs(seeds, markers))
    def run(example: Example) -> None:
        nonlocal tried, failed
        if not failed:  # shrinking re-runs outputs already counted
            tried += 1
        problems = check_output(example.seed.make_parser(), example.text, example.splits())
        if problems:
            failed = True
            raise _Found(Finding(example.text, example.split_seed, tuple(problems)))

    try:
        run()
    except _Found as found:
        return Searched(tried, found.finding)
    return Searched(tried)
