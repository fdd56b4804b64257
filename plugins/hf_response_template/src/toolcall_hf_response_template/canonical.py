"""The canonical JSON of a value read token by token (``json.dumps(..., ensure_ascii=False)``).

For arguments written in a JSON dialect (unquoted keys, delimited strings), the
arguments a call gets are the canonical JSON of the value the dialect means
(DESIGN §4.3, "other formats"), emitted value by value as the tokens arrive: an
object's ``{`` at once, each key when it is read, each scalar and string when it
ends. A key given twice keeps its first value; the repeat is skipped (the caller
records ``duplicate-key``). What JSON cannot hold (a bare word as a value, a
malformed number, ``NaN``, a string whose escapes are not JSON) is a defect: the
emitter stops and says where.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

import regex

from toolcall_hf_response_template.jsontokens import SCALAR, STRING, Token

__all__ = ["Canonical", "Step"]

_KEY: Final = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(slots=True)
class _Container:
    kind: str  # "{" or "["
    expect: str  # "first", "key", "colon", "value", "next"
    keys: set[str] = field(default_factory=set)
    members: int = 0


@dataclass(frozen=True, slots=True)
class Step:
    """What one token gave: canonical ``text``; ``done`` when the value ended with it;
    ``defect`` why the token cannot be read (nothing was emitted for it);
    ``duplicate`` a repeated key whose value is skipped."""

    text: str = ""
    done: bool = False
    defect: str = ""
    duplicate: str = ""


def _scalar(raw: str) -> str | None:
    """The canonical text of a JSON number or literal, or ``None``."""
    if raw in ("true", "false", "null"):
        return raw
    try:
        value = json.loads(raw, parse_constant=_reject)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return None
    return json.dumps(value)


def _reject(name: str) -> object:
    raise ValueError(name)


class Canonical:
    """Canonical JSON of one value, fed token by token."""

    __slots__ = ("_bare_keys", "_skip", "_stack", "done")

    def __init__(self, *, bare_keys: bool = False) -> None:
        self._bare_keys = bare_keys
        self._stack: list[_Container] = []
        self._skip = -1  # nesting inside a skipped (repeated) member's value; -1: none
        self.done = False

    def token(self, token: Token) -> Step:
        if self._skip >= 0:
            return self._skipping(token)
        stack = self._stack
        top = stack[-1] if stack else None
        kind = token.kind
        if top is None or (top.expect in ("value", "first") and top.kind == "["):
            if top is not None and top.expect == "first" and kind == "]":
                return self._close()
            return self._value(token, top)
        if top.kind == "{":
            if top.expect in ("first", "key"):
                if kind == "}" and top.expect == "first":
                    return self._close()
                key = self._key(token)
                if key is None:
                    return Step(defect=f"{token.raw!r} where a key belongs")
                top.expect = "colon"
                if key in top.keys:
                    self._skip = 0
                    return Step(duplicate=key)
                top.keys.add(key)
                separator = ", " if top.members else ""
                top.members += 1
                return Step(separator + json.dumps(key, ensure_ascii=False) + ": ")
            if top.expect == "colon":
                if kind != ":":
                    return Step(defect=f"{token.raw!r} where ':' belongs")
                top.expect = "value"
                return Step()
            if top.expect == "value":
                return self._value(token, top)
        # expect "next"
        assert top is not None
        closer = "}" if top.kind == "{" else "]"
        if kind == ",":
            top.expect = "key" if top.kind == "{" else "value"
            return Step(", " if top.kind == "[" else "")
        if kind == closer:
            return self._close()
        return Step(defect=f"{token.raw!r} where ',' or {closer!r} belongs")

    def _key(self, token: Token) -> str | None:
        if token.kind == STRING:
            return token.value
        if token.kind == SCALAR and self._bare_keys and _KEY.fullmatch(token.raw):
            return token.raw
        return None

    def _value(self, token: Token, top: _Container | None) -> Step:
        kind = token.kind
        if kind in ("{", "["):
            if top is not None and top.kind == "[":
                top.members += 1
            self._after(top)
            self._stack.append(_Container(kind, "first"))
            return Step(kind)
        if kind == STRING:
            if token.value is None:
                return Step(defect=f"the string {token.raw!r} is not JSON")
            text = json.dumps(token.value, ensure_ascii=False)
        elif kind == SCALAR:
            scalar = _scalar(token.raw)
            if scalar is None:
                return Step(defect=f"{token.raw!r} is not a JSON value")
            text = scalar
        else:
            return Step(defect=f"{token.raw!r} where a value belongs")
        if top is not None and top.kind == "[":
            top.members += 1
        self._after(top)
        return Step(text, done=not self._stack)

    def _after(self, top: _Container | None) -> None:
        if top is not None:
            top.expect = "next"

    def _close(self) -> Step:
        container = self._stack.pop()
        text = "}" if container.kind == "{" else "]"
        if not self._stack:
            self.done = True
        return Step(text, done=not self._stack)

    def _skipping(self, token: Token) -> Step:
        """The value of a repeated key: skip it whole."""
        kind = token.kind
        if self._skip == 0 and kind == ":":
            return Step()
        if kind in ("{", "["):
            self._skip += 1
            return Step()
        if kind in ("}", "]"):
            if self._skip == 0:
                self._skip = -1  # no value: the object ends
                return self.token(token)
            self._skip -= 1
            if self._skip == 0:
                self._skip = -1
                self._stack[-1].expect = "next"
            return Step()
        if self._skip == 0 and kind in (STRING, SCALAR):
            self._skip = -1
            self._stack[-1].expect = "next"
        return Step()
