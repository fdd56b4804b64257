"""The delimiters of a response template, and how they are searched in linear time.

A template's delimiters (a field's ``open``/``close``, the ``start_anchor``, an
``xml-inline`` tag) are literals or regular expressions, matched as transformers
matches them: Python ``regex`` with ``DOTALL``, leftmost match, partial matching at
the end of the text so that a delimiter that may still complete is held back.

Two rules keep every search linear in the text, whatever the model writes:

* **at start-up**, a pattern that can backtrack catastrophically is refused
  (:func:`linear_time_problem`): an unbounded repeat inside another, an unbounded
  repeat of an alternation whose branches may start alike, a backreference, a
  conditional group; a pattern in syntax Python's ``re`` cannot read is refused
  too, since it cannot be checked;
* **at run time**, a pattern delimiter matches at most :data:`LONGEST` characters:
  the text is searched in windows of that size, so the work per character is
  bounded by a constant, and a candidate that grows longer is text.

Literal delimiters have no bound: they are searched as literals.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import regex

# The parser of Python's re (typeshed has no stubs for these private modules).
sre_constants: Any = importlib.import_module("re._constants")
sre_parser: Any = importlib.import_module("re._parser")

__all__ = [
    "LONGEST",
    "Delimiter",
    "Found",
    "linear_time_problem",
    "looks_around",
]

#: The longest text a pattern delimiter may match. Real delimiters are short (the
#: longest known, gpt-oss's ``<|channel|>commentary to=functions.NAME ...<|message|>``,
#: is under 100 characters); the bound makes a search cost O(LONGEST) per character.
LONGEST: Final = 256
#: From this length on, a literal delimiter is looked for with ``re`` first.
_LONG_TEXT: Final = 1024

_UNBOUNDED: Final = 64  # a repeat with a larger maximum counts as unbounded
_REPEATS: Final = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT)


@dataclass(frozen=True, slots=True)
class Found:
    """A delimiter at ``[start, end)`` of the searched text.

    ``pending``: it may still change with more text (a partial match, or a match
    that reaches the end of the text and could grow), so nothing from ``start`` on
    can be decided yet. ``groups`` are the named captures of a complete match,
    ``ending`` those of them that end where the match ends.
    """

    start: int
    end: int
    pending: bool = False
    groups: Mapping[str, str] | None = None
    ending: frozenset[str] = frozenset()


def looks_around(pattern: str) -> bool:
    """Whether ``pattern`` holds an anchor, a word boundary or a look-around (what a
    grammar, which writes text rather than searching it, cannot say); read with Python's
    own regex parser, so ``[^>]`` is a class, not an anchor. Unreadable: ``True``."""
    try:
        parsed = sre_parser.parse(pattern, sre_constants.SRE_FLAG_DOTALL)
    except (sre_constants.error, OverflowError, RecursionError):
        return True
    return _looks_around(list(parsed))


def _looks_around(items: Sequence[tuple[Any, Any]]) -> bool:
    for op, arg in items:
        if op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            return True
        if op == sre_constants.SUBPATTERN:
            inner = [list(arg[3])]
        elif op == sre_constants.BRANCH:
            inner = [list(branch) for branch in arg[1]]
        elif op in (*_REPEATS, sre_constants.POSSESSIVE_REPEAT):
            inner = [list(arg[2])]
        elif op == sre_constants.ATOMIC_GROUP:
            inner = [list(arg)]
        else:
            continue
        if any(_looks_around(part) for part in inner):
            return True
    return False


def linear_time_problem(pattern: str) -> str | None:
    """Why searching ``pattern`` may not take linear time, or ``None``."""
    try:
        parsed = sre_parser.parse(pattern, sre_constants.SRE_FLAG_DOTALL)
    except (sre_constants.error, OverflowError, RecursionError) as error:
        return (
            f"it uses syntax outside Python's re ({error}), which the linear-time check cannot read"
        )
    return _problem(list(parsed), inside=False)


_CHAR_OPS: Final = frozenset(
    {
        sre_constants.LITERAL,
        sre_constants.NOT_LITERAL,
        sre_constants.IN,
        sre_constants.ANY,
        sre_constants.CATEGORY,
    }
)
_STARTS: Final = frozenset({sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING})
_compiler: Any = importlib.import_module("re._compiler")


def settles_at_end(pattern: str) -> bool:
    """Whether a complete match of ``pattern`` that reaches the end of the text stays
    what it is whatever text follows: no end anchor or negative look-ahead, alternatives
    told apart by their first character, and every repeat that could take more (greedy,
    of varying count) followed by literal text it cannot start to match (``[^>]+>``,
    ``\\s*<``), so the match needs no more text to be decided (mistral's
    ``[TOOL_CALLS]NAME[ARGS]`` is a call when ``[ARGS]`` arrives).
    ``False`` when in doubt: then such a match waits for the next text or the end."""
    try:
        parsed = sre_parser.parse(pattern, sre_constants.SRE_FLAG_DOTALL)
    except (sre_constants.error, OverflowError, RecursionError):
        return False
    try:
        return _settles(list(parsed), [], parsed.state)
    except (sre_constants.error, TypeError, ValueError, RecursionError):
        return False


def _settles(items: Sequence[tuple[Any, Any]], rest: list[tuple[Any, Any]], state: Any) -> bool:
    for index, (op, arg) in enumerate(items):
        after = [*items[index + 1 :], *rest]
        if op in _CHAR_OPS:
            continue
        if op == sre_constants.SUBPATTERN:
            if not _settles(list(arg[3]), after, state):
                return False
        elif op == sre_constants.BRANCH:
            # Branches told apart by their first character (a look-ahead's counts): more
            # text cannot make an earlier branch match instead (``(?:ab|a)`` could).
            firsts = [_first(list(branch)) for branch in arg[1]]
            if not all(firsts) or len(set(firsts)) != len(firsts):
                return False
            if not all(_settles(list(branch), after, state) for branch in arg[1]):
                return False
        elif op == sre_constants.ASSERT and arg[0] == 1:
            # A look-ahead that held keeps holding as text is added, unless it looks for
            # an end (``(?=a|$)``) or for an absence.
            if not _monotone(list(arg[1])):
                return False
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if arg[0] != -1:  # a negative look-ahead may fail once more text is read
                return False
        elif op == sre_constants.AT:
            if arg not in _STARTS:
                return False
        elif op in (*_REPEATS, sre_constants.POSSESSIVE_REPEAT):
            low, high, body = arg
            if not _settles(list(body), after, state):
                return False
            if op == sre_constants.MIN_REPEAT or low == high:
                continue  # a lazy repeat stops at the first point the rest matches
            if not _takes_no_more(list(body), after, state):
                return False
        else:
            return False
    return True


def _first(items: list[tuple[Any, Any]]) -> str:
    """The character every match of ``items`` starts with, or that a leading
    look-ahead requires there ("" when none is known)."""
    if items and items[0][0] == sre_constants.ASSERT and items[0][1][0] == 1:
        return _literal_text(list(items[0][1][1]))[:1]
    return _literal_text(items)[:1]


def _monotone(items: Sequence[tuple[Any, Any]]) -> bool:
    """Whether a match of ``items`` stays a match whatever text is added after it: no
    end anchor, word boundary or negative look-around."""
    for op, arg in items:
        if op in _CHAR_OPS:
            continue
        if op == sre_constants.SUBPATTERN:
            ok = _monotone(list(arg[3]))
        elif op == sre_constants.BRANCH:
            ok = all(_monotone(list(branch)) for branch in arg[1])
        elif op in (*_REPEATS, sre_constants.POSSESSIVE_REPEAT):
            ok = _monotone(list(arg[2]))
        elif op == sre_constants.ASSERT:
            ok = _monotone(list(arg[1]))
        elif op == sre_constants.AT:
            ok = arg in _STARTS
        else:
            ok = False
        if not ok:
            return False
    return True


def _takes_no_more(body: list[tuple[Any, Any]], after: list[tuple[Any, Any]], state: Any) -> bool:
    """Whether a greedy repeat of ``body`` cannot go on into the literal text that
    must follow it."""
    if not after or sre_parser.SubPattern(state, after).getwidth()[0] == 0:
        return False
    follow = _literal_text(after)
    if not follow:
        return False
    if len(body) == 1 and body[0][0] in _CHAR_OPS:
        one = sre_parser.SubPattern(state, body)
        return _compiler.compile(one, sre_constants.SRE_FLAG_DOTALL).match(follow[0]) is None
    start = _literal_text(body)
    return bool(start) and not start.startswith(follow) and not follow.startswith(start)


def _literal_text(items: Sequence[tuple[Any, Any]]) -> str:
    """The literal text every match of ``items`` starts with."""
    out: list[str] = []
    for op, arg in items:
        if op == sre_constants.LITERAL:
            out.append(chr(arg))
        elif op == sre_constants.SUBPATTERN and not arg[1] and not arg[2]:
            inner = list(arg[3])
            text = _literal_text(inner)
            out.append(text)
            if len(text) != len(inner) or any(o != sre_constants.LITERAL for o, _ in inner):
                break
        else:
            break
    return "".join(out)


def _bounded(high: int) -> bool:
    return high != sre_constants.MAXREPEAT and high <= _UNBOUNDED


def _problem(items: Sequence[tuple[Any, Any]], *, inside: bool) -> str | None:
    """``inside``: the items are the body of an unbounded, backtracking repeat."""
    for op, arg in items:
        if op in (sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS):
            return "a backreference or conditional group can take exponential time"
        if op in _REPEATS:
            low, high, body = arg
            del low
            unbounded = not _bounded(high)
            if inside and unbounded:
                return (
                    "an unbounded repeat inside another (such as (a+)+) can take "
                    "exponential time on text that almost matches"
                )
            found = _problem(list(body), inside=inside or unbounded)
            if found:
                return found
            if unbounded and _ambiguous_branches(body):
                return (
                    "an unbounded repeat of something that can match one text in several "
                    "ways (such as (a|aa)*) can take exponential time"
                )
        elif op == sre_constants.POSSESSIVE_REPEAT:
            continue  # no backtracking into it
        elif op == sre_constants.ATOMIC_GROUP:
            continue
        elif op == sre_constants.SUBPATTERN:
            found = _problem(list(arg[3]), inside=inside)
            if found:
                return found
        elif op == sre_constants.BRANCH:
            for branch in arg[1]:
                found = _problem(list(branch), inside=inside)
                if found:
                    return found
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            found = _problem(list(arg[1]), inside=inside)
            if found:
                return found
    return None


def _ambiguous_branches(body: Any) -> bool:
    """Whether the body of an unbounded repeat may match one text in several ways: it
    holds an alternation whose branches may start alike (or be empty), or a part of
    varying length (``(a|aa)*`` is ``(aa?)*`` to Python's parser)."""
    for op, arg in body:
        if op == sre_constants.SUBPATTERN:
            if _ambiguous_branches(arg[3]):
                return True
        elif op == sre_constants.BRANCH:
            firsts: list[int] = []
            for branch in arg[1]:
                if not branch or branch[0][0] != sre_constants.LITERAL:
                    return True
                firsts.append(branch[0][1])
                if _ambiguous_branches(branch):
                    return True
            if len(set(firsts)) != len(firsts):
                return True
        elif op in _REPEATS and arg[0] != arg[1]:
            return True
    return False


class Delimiter:
    """One delimiter: literals (any of them) or a pattern, matched with ``DOTALL``."""

    __slots__ = (
        "can_extend",
        "complete",
        "groups",
        "literals",
        "longest",
        "pattern",
        "prefix",
        "probe",
        "settles",
        "source",
        "starts",
    )

    def __init__(self, *, literals: Sequence[str] | None = None, pattern: str | None = None):
        if (literals is None) == (pattern is None):
            msg = "a delimiter is literals or a pattern"
            raise ValueError(msg)
        if literals is not None:
            unique = list(dict.fromkeys(literals))
            self.literals: tuple[str, ...] | None = tuple(unique)
            ordered = sorted(unique, key=len, reverse=True)
            self.pattern = regex.compile("|".join(regex.escape(s) for s in ordered), regex.DOTALL)
            #: The same alternation for ``re``, which finds a complete match in a long
            #: text in a third of the time (``regex`` is for the partial one at its end).
            self.complete: re.Pattern[str] | None = re.compile(
                "|".join(re.escape(s) for s in ordered)
            )
            self.can_extend = any(a != b and a.startswith(b) for a in unique for b in unique)
            self.longest = max(map(len, unique))
            self.settles = not self.can_extend
            self.source = " or ".join(repr(s) for s in unique)
            #: A single literal never matches where a longer match could still start.
            self.probe = _probe(self.pattern) if len(unique) > 1 else None
        else:
            assert pattern is not None
            self.literals = None
            self.complete = None
            self.pattern = regex.compile(pattern, regex.DOTALL)
            self.can_extend = True
            self.longest = LONGEST
            #: A complete match at the end of the text is final (see settles_at_end).
            self.settles = settles_at_end(pattern)
            self.source = repr(pattern)
            self.probe = _probe(self.pattern)
        #: The characters a match can start at (see match_starts).
        self.starts = (
            frozenset(text[0] for text in self.literals)
            if self.literals is not None
            else match_starts(self.pattern.pattern)
        )
        self.groups: tuple[str, ...] = tuple(self.pattern.groupindex)
        #: The literal text every match starts with ("" when it may start otherwise).
        self.prefix = (
            self.literals[0]
            if self.literals and len(self.literals) == 1
            else (_literal_prefix(pattern) if pattern is not None else "")
        )

    def find(self, text: str, pos: int, *, eos: bool = False) -> Found | None:
        """The leftmost delimiter in ``text[pos:]``, complete or pending; at ``eos``
        only complete ones (nothing can grow)."""
        if self.literals is not None:
            return self._literal(text, pos, eos)
        return self._windowed(text, pos, eos)

    def _literal(self, text: str, pos: int, eos: bool) -> Found | None:
        complete = self.complete
        if complete is not None and len(text) - pos >= _LONG_TEXT:
            # A partial match starts within the last ``longest - 1`` characters: a complete
            # match before them is the leftmost match, and final (a longer literal there
            # would fit); else none starts before either.
            tail = max(pos, len(text) - self.longest + 1)
            found = complete.search(text, pos)
            if found is not None and found.start() < tail:
                return Found(*found.span())
            pos = tail if found is None else min(found.start(), tail)
        match = self.pattern.search(text, pos, partial=not eos)
        if match is None:
            return None
        start, end = match.span()
        if match.partial:
            return Found(start, end, pending=True) if start < len(text) else None
        if not eos:
            grows = self._grows(text, max(pos, len(text) - self.longest + 1), start)
            if grows >= 0:
                return Found(grows, len(text), pending=True)
        return Found(start, end)

    def _grows(self, text: str, low: int, start: int) -> int:
        """Where, from ``low`` up to ``start`` (a complete match's), a match could still
        start that more text would make win over it: a match from further left, or one
        that the pattern tries before this one from ``start`` (a greedy repeat or an
        earlier alternative that ran into the end of the text). -1: none can.

        ``regex`` prefers any complete match to a partial one, so the search alone
        settles ``[TOOL_CALLS]`` in ``[TOOL_CALLS][TOOL`` while the repeat of
        ``\\[TOOL_CALLS\\](?:\\[TOOL_CALLS\\])*`` may still take the rest. The probe is the
        pattern made atomic and made to fail: its partial match is where a path tried
        before the first complete match ran into the end (paths after it are not
        tried, so a lazy ``.*?`` does not make every match wait)."""
        if self.probe is None or low > start:
            return -1
        found = self.probe.search(text, low, partial=True)
        if found is None or found.start() > start:
            return -1
        return int(found.start())

    def _windowed(self, text: str, pos: int, eos: bool) -> Found | None:
        size = len(text)
        window = LONGEST
        start = pos
        while start <= size:
            stop = min(size, start + 2 * window)
            last = stop == size
            match = self.pattern.search(text, start, stop, partial=last and not eos)
            if match is None:
                if last:
                    return None
                start += window
                continue
            begin, end = match.span()
            if match.partial:
                if begin >= size:
                    return None  # the empty partial match every search reports at the end
                if size - begin > window:
                    start = begin + 1  # a candidate longer than a delimiter may be is text
                    continue
                return Found(begin, end, pending=True)
            if not last and end == stop and begin > start:
                start = begin  # the match may run on past the window: look again from it
                continue
            if begin >= start + window and not last:
                start += window
                continue
            if end - begin > window:
                start = begin + 1
                continue
            pending = not eos and end == size and not self.settles
            if last and not eos and not pending:
                # Only in the last window can a path run into the end of the text: in
                # another, a match starts in its first half and is shorter than the rest.
                grows = self._grows(text, max(start, size - window), begin)
                if grows >= 0:
                    return Found(grows, size, pending=True)
            return Found(begin, end, pending=pending, groups=_groups(match), ending=_ending(match))
        return None


def _probe(pattern: regex.Pattern[str]) -> regex.Pattern[str]:
    """``pattern`` made atomic and made to fail (see :meth:`Delimiter._grows`)."""
    source = pattern.pattern
    if pattern.flags & regex.VERBOSE:
        source += "\n"  # a trailing comment must not swallow the wrapper's end
    return regex.compile(f"(?>(?:{source}))(?!)", regex.DOTALL)


def match_starts(pattern: str) -> frozenset[str] | None:
    """The characters that can stand where a match of ``pattern`` starts (its first
    character, or the one a leading look-ahead looks at), so that text with none of
    them holds no match, nor the start of one. ``None`` when they cannot be told, or
    when a match depends on the text before it (a look-behind, an anchor, a word
    boundary), or may be empty."""
    try:
        parsed = sre_parser.parse(pattern, sre_constants.SRE_FLAG_DOTALL)
    except (sre_constants.error, OverflowError, RecursionError):
        return None
    if parsed.state.flags & sre_constants.SRE_FLAG_IGNORECASE or _looks_behind(list(parsed)):
        return None
    found = _sequence_starts(list(parsed))
    if found is None or found[1]:
        return None
    return frozenset(found[0])


#: ``(characters, may match empty)`` of a part of a pattern; ``None``: unknown.
_Starts = tuple[set[str], bool] | None
#: The widest character class read as a set (a larger one is "unknown").
_WIDEST_CLASS: Final = 1024


def _sequence_starts(items: Sequence[tuple[Any, Any]]) -> _Starts:
    out: set[str] = set()
    for op, arg in items:
        found = _item_starts(op, arg)
        if found is None:
            return None
        out |= found[0]
        if not found[1]:
            return out, False
    return out, True


def _item_starts(op: Any, arg: Any) -> _Starts:
    if op == sre_constants.LITERAL:
        return {chr(arg)}, False
    if op == sre_constants.IN:
        chars = _class_chars(arg)
        return None if chars is None else (chars, False)
    if op == sre_constants.SUBPATTERN:
        if arg[1] & sre_constants.SRE_FLAG_IGNORECASE:
            return None
        return _sequence_starts(list(arg[3]))
    if op == sre_constants.ATOMIC_GROUP:
        return _sequence_starts(list(arg))
    if op == sre_constants.BRANCH:
        out: set[str] = set()
        empty = False
        for branch in arg[1]:
            found = _sequence_starts(list(branch))
            if found is None:
                return None
            out |= found[0]
            empty = empty or found[1]
        return out, empty
    if op in (*_REPEATS, sre_constants.POSSESSIVE_REPEAT):
        found = _sequence_starts(list(arg[2]))
        return None if found is None else (found[0], found[1] or arg[0] == 0)
    if op == sre_constants.ASSERT and arg[0] == 1:
        # A look-ahead: the character at the match's start is one its body starts with.
        return _sequence_starts(list(arg[1]))
    if op == sre_constants.ASSERT_NOT and arg[0] == 1:
        return set(), True  # a negative look-ahead only rules matches out
    return None  # a look-behind, an anchor, a word boundary, any character, ...


def _looks_behind(items: Sequence[tuple[Any, Any]]) -> bool:
    """Whether ``items`` hold a look-behind (anywhere: after the first character too,
    it may look back past the match's start)."""
    for op, arg in items:
        if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if arg[0] == -1 or _looks_behind(list(arg[1])):
                return True
        elif op == sre_constants.SUBPATTERN:
            if _looks_behind(list(arg[3])):
                return True
        elif op == sre_constants.BRANCH:
            if any(_looks_behind(list(branch)) for branch in arg[1]):
                return True
        elif op in (*_REPEATS, sre_constants.POSSESSIVE_REPEAT):
            if _looks_behind(list(arg[2])):
                return True
        elif op == sre_constants.ATOMIC_GROUP and _looks_behind(list(arg)):
            return True
    return False


def _class_chars(items: Sequence[tuple[Any, Any]]) -> set[str] | None:
    out: set[str] = set()
    for op, arg in items:
        if op == sre_constants.LITERAL:
            out.add(chr(arg))
        elif op == sre_constants.RANGE and arg[1] - arg[0] < _WIDEST_CLASS:
            out.update(map(chr, range(arg[0], arg[1] + 1)))
        elif op == sre_constants.CATEGORY and arg == sre_constants.CATEGORY_SPACE:
            out |= _spaces()
        else:
            return None
    return out


@functools.cache
def _spaces() -> frozenset[str]:
    """Every character ``\\s`` matches (in ``re`` and in ``regex``)."""
    space = regex.compile(r"\s")
    return frozenset(
        char for char in map(chr, range(0x3001)) if char.isspace() or space.match(char)
    )


_META: Final = frozenset(".^$*+?{}[]\\|()")


def _literal_prefix(pattern: str) -> str:
    """The literal text a pattern's every match starts with (escapes read; a character
    followed by a quantifier, a group, a class ends it; an alternation at the top level
    leaves none)."""
    if _top_level_alternation(pattern):
        return ""
    out: list[str] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        step = 1
        if char == "\\" and at + 1 < len(pattern) and not pattern[at + 1].isalnum():
            char = pattern[at + 1]
            step = 2
        elif char in _META:
            break
        if at + step < len(pattern) and pattern[at + step] in "*+?{":
            break
        out.append(char)
        at += step
    return "".join(out)


def literal_starts(delimiter: Delimiter) -> tuple[str, ...]:
    """The literal texts a delimiter's matches start with: its literals, or the literal
    prefix of each top-level alternative of its pattern (empty ones left out), an optional
    group of literal text right after a prefix read both ways (DeepSeek's opener, whose
    optional group holds the section marker: both marker runs, not their common start)."""
    if delimiter.literals is not None:
        return delimiter.literals
    found: list[str] = []
    for branch in _top_level_branches(delimiter.pattern.pattern):
        found.extend(_optional_literal_expansions(branch, depth=0))
    return tuple(dict.fromkeys(text for text in found if text))


def _optional_literal_expansions(branch: str, *, depth: int) -> list[str]:
    prefix = _literal_prefix(branch)
    cut = _literal_prefix_end(branch)
    if depth == _EXPANDED or not branch.startswith("(?:", cut):
        return [prefix]
    end = group_end(branch, cut)
    inner = branch[cut + 3 : end - 1]
    if not branch.startswith("?", end) or any(char in _META for char in inner):
        return [prefix]
    rest = branch[end + 1 :]
    both = (
        *_optional_literal_expansions(inner + rest, depth=depth + 1),
        *_optional_literal_expansions(rest, depth=depth + 1),
    )
    return [prefix + text for text in both]


#: At most this many optional groups are read both ways (2**4 literal starts per branch).
_EXPANDED: Final = 4


def _literal_prefix_end(pattern: str) -> int:
    """Where :func:`_literal_prefix` stops reading ``pattern``."""
    if _top_level_alternation(pattern):
        return 0
    at = 0
    while at < len(pattern):
        step = 1
        if pattern[at] == "\\" and at + 1 < len(pattern) and not pattern[at + 1].isalnum():
            step = 2
        elif pattern[at] in _META:
            break
        if at + step < len(pattern) and pattern[at + step] in "*+?{":
            break
        at += step
    return at


#: What may stand before a look-ahead and match no text of its own: anchors, blanks, a
#: look-behind.
_BEFORE_LOOKAHEAD: Final = regex.compile(
    r"(?:\^|\\A|\\[sn][*?]|\[[^\]]*\][*?]|[ \n][*?]|\(\?<[=!](?:[^()\\]|\\.)*\))*"
)


def lookahead_starts(delimiter: Delimiter) -> tuple[str, ...]:
    """The literal texts that start what the look-ahead of a pattern alternative with no
    literal start requires (llama3's ``^\\s*(?=\\{)``: ``{``): where a call begins with
    no marker of its own."""
    if delimiter.literals is not None:
        return ()
    found: list[str] = []
    for branch in _top_level_branches(delimiter.pattern.pattern):
        if _literal_prefix(branch):
            continue
        rest = branch[_BEFORE_LOOKAHEAD.match(branch).end() :]  # type: ignore[union-attr]
        if not rest.startswith("(?="):
            continue
        depth = 0
        for index, char in enumerate(rest):
            if char == "(" and (index == 0 or rest[index - 1] != "\\"):
                depth += 1
            elif char == ")" and rest[index - 1] != "\\":
                depth -= 1
                if depth == 0:
                    inner = rest[3:index]
                    inner = inner[_BEFORE_LOOKAHEAD.match(inner).end() :]  # type: ignore[union-attr]
                    found.extend(_literal_prefix(b) for b in _top_level_branches(inner))
                    break
    return tuple(dict.fromkeys(text for text in found if text))


def _top_level_branches(pattern: str) -> list[str]:
    branches: list[str] = []
    depth = 0
    in_class = False
    start = 0
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(pattern[start:at])
            start = at + 1
        at += 1
    branches.append(pattern[start:])
    return branches


def _top_level_alternation(pattern: str) -> bool:
    return len(_top_level_branches(pattern)) > 1


def group_end(pattern: str, start: int) -> int:
    """Where the group opening at ``start`` of ``pattern`` ends (-1 when it does not)."""
    depth = 0
    in_class = False
    at = start
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return -1


def group_span(pattern: str, name: str) -> tuple[int, int] | None:
    """The span of the named group ``name`` in ``pattern`` (paren-matched)."""
    start = pattern.find(f"(?P<{name}>")
    end = group_end(pattern, start) if start >= 0 else -1
    return None if end < 0 else (start, end)


def _groups(match: Any) -> dict[str, str]:
    return {key: value for key, value in match.groupdict().items() if value is not None}


def _ending(match: Any) -> frozenset[str]:
    end = match.end()
    return frozenset(key for key in match.groupdict() if match.end(key) == end)
