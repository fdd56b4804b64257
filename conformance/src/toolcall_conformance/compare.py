"""Comparing a parse with a case's ``expected``, naming the first difference.

The rules are the case format's (``case.schema.json``):

* content is compared after stripping leading and trailing whitespace; ``null`` and
  ``""`` are equal; so is reasoning, where the case gives ``expected.reasoning``;
* calls are compared in order: the name exactly, the arguments by JSON value when
  ``expected`` gives an object, or as the exact text when it gives a string (a truncated
  call, or arguments that are not valid JSON);
* the named recoveries are compared as **sets**: ``expected.recoveries`` names the
  tolerances the parse must apply, and the parse must apply no other. A case carries no
  call index for a recovery, so neither the order in which a parser detects them nor how
  often one applies (once per call, or once per output) is something a case can state
  without depending on one parser's bookkeeping.

JSON values are compared as JSON, not as Python: ``true`` is not ``1`` and ``1`` is not
``"1"``; ``1`` and ``1.0`` are the same number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from toolcall import Parsed

__all__ = ["ExpectedLike", "first_difference", "json_difference", "text_difference"]

_CONTEXT = 24


class ExpectedCallLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> Mapping[str, Any] | str: ...


class ExpectedLike(Protocol):
    """What :func:`first_difference` reads of a case's ``expected``."""

    @property
    def content(self) -> str | None: ...

    @property
    def tool_calls(self) -> Sequence[ExpectedCallLike]: ...

    @property
    def recoveries(self) -> Sequence[str]: ...


def first_difference(
    expected: ExpectedLike, parsed: Parsed, *, recoveries: bool = True
) -> str | None:
    """The first way ``parsed`` differs from ``expected``, or ``None`` if it matches.

    ``recoveries=False`` leaves the named recoveries out (for parsers that record no
    events, such as vLLM's built-ins).
    """
    want = (expected.content or "").strip()
    got = (parsed.content or "").strip()
    if want != got:
        return f"content: {text_difference(want, got)}"
    if getattr(expected, "reasoning_checked", False):
        want = (getattr(expected, "reasoning", None) or "").strip()
        got = (parsed.reasoning or "").strip()
        if want != got:
            return f"reasoning: {text_difference(want, got)}"
    calls = parsed.tool_calls
    if len(calls) != len(expected.tool_calls):
        names = [call.name for call in calls]
        want_names = [call.name for call in expected.tool_calls]
        return (
            f"tool_calls: expected {len(want_names)} call(s) {want_names}, got {len(names)} {names}"
        )
    for index, (want_call, call) in enumerate(zip(expected.tool_calls, calls, strict=True)):
        where = f"tool_calls[{index}]"
        if want_call.name != call.name:
            return f"{where}.name: expected {want_call.name!r}, got {call.name!r}"
        want_args = want_call.arguments
        if isinstance(want_args, str):
            if want_args != call.arguments:
                return (
                    f"{where}.arguments (exact text): {text_difference(want_args, call.arguments)}"
                )
            continue
        try:
            value = json.loads(call.arguments)
        except ValueError as error:
            return (
                f"{where}.arguments: expected a JSON object, got text that does not parse "
                f"({error.args[0] if error.args else error}): {_clip(call.arguments)!r}"
            )
        difference = json_difference(dict(want_args), value)
        if difference is not None:
            return f"{where}.arguments{difference}"
    if not recoveries:
        return None
    # str(): an EventName member (a StrEnum) prints as its name, not as its repr.
    want_recoveries = {str(name) for name in expected.recoveries}
    got_recoveries = {str(name) for name in parsed.recoveries}
    if want_recoveries != got_recoveries:
        missing = sorted(want_recoveries - got_recoveries)
        extra = sorted(got_recoveries - want_recoveries)
        parts = []
        if missing:
            parts.append(f"missing {missing}")
        if extra:
            parts.append(f"unexpected {extra}")
        return (
            f"recoveries: expected {sorted(want_recoveries)}, got {sorted(got_recoveries)} "
            f"({', '.join(parts)})"
        )
    return None


def text_difference(want: str, got: str) -> str:
    """Where two texts first differ, with a little context on both sides."""
    limit = min(len(want), len(got))
    at = next((i for i in range(limit) if want[i] != got[i]), limit)
    start = max(0, at - _CONTEXT)
    return (
        f"first difference at character {at}: expected {_excerpt(want, start, at)!r}, "
        f"got {_excerpt(got, start, at)!r} (lengths {len(want)} and {len(got)})"
    )


def json_difference(want: object, got: object, path: str = "") -> str | None:
    """The first place two JSON values differ (``path`` in JSONPath-like notation)."""
    here = path or " (top level)"
    if _json_kind(want) != _json_kind(got):
        return f"{here}: expected {_show(want)}, got {_show(got)}"
    if isinstance(want, dict):
        assert isinstance(got, dict)
        if set(want) != set(got):
            missing = [key for key in want if key not in got]
            extra = [key for key in got if key not in want]
            parts = []
            if missing:
                parts.append(f"missing key(s) {missing}")
            if extra:
                parts.append(f"unexpected key(s) {extra}")
            return f"{here}: {', '.join(parts)}"
        for key in want:
            difference = json_difference(want[key], got[key], f"{path}[{json.dumps(key)}]")
            if difference is not None:
                return difference
        return None
    if isinstance(want, list):
        assert isinstance(got, list)
        if len(want) != len(got):
            return f"{here}: expected a list of {len(want)}, got {len(got)}: {_show(got)}"
        for index, (a, b) in enumerate(zip(want, got, strict=True)):
            difference = json_difference(a, b, f"{path}[{index}]")
            if difference is not None:
                return difference
        return None
    if want != got:
        return f"{here}: expected {_show(want)}, got {_show(got)}"
    return None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _show(value: object) -> str:
    return _clip(json.dumps(value, ensure_ascii=False))


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _excerpt(text: str, start: int, at: int) -> str:
    prefix = "..." if start > 0 else ""
    return prefix + text[start : at + _CONTEXT]
