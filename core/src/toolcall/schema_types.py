"""Typing a raw argument value by its parameter's JSON schema.

Some formats write argument values raw: a string verbatim, without quotes, and
anything else as JSON text (GLM's ``<arg_value>``, the XML and key-value lines of
``hf`` templates). The text alone cannot tell the string ``123`` from the number,
so the parameter's schema decides (:meth:`ValueType.read`):

* the schema's **candidate types** are taken in order: ``type``, a list of types,
  ``anyOf``/``oneOf`` branches, the first typed ``allOf`` branch, ``enum``/``const``
  members' types, ``nullable: true``; local ``$ref``\\ s are followed;
* **null first**: when a candidate is ``null``, the text ``null`` (JSON whitespace
  around it allowed) is null, wherever ``null`` stands among the candidates, so a
  pydantic ``Optional[str]`` (``anyOf: [{type: string}, {type: null}]``) written
  ``null`` is ``None``, not the string ``"null"``;
* otherwise **the first candidate that fits wins**: ``string`` always fits (the
  text verbatim); any other type fits when the text is strict JSON of that type;
* if none fits, or nothing is declared (an undeclared key, an unknown tool, a
  schema without a type), the value is the JSON value when the text is strict
  JSON, else the text verbatim.

**Strict JSON** is RFC 8259 as :func:`toolcall.scanning.json_object_problem`
defines it for arguments: JSON text whose value strict JSON cannot carry (a number
beyond a float's range such as ``1e400``, an integer of more digits than Python
converts, a lone surrogate in a string, nesting too deep to read) is kept as the
model's text, a string, and :attr:`Typed.problem` says why (a family records it as
``unrepresentable-value``). ``NaN`` and ``Infinity`` are not JSON: text, like any
other text that does not parse. A surrogate code point in the raw text itself (no
UTF-8 text holds one) becomes U+FFFD, as a UTF-8 decoder would make it, again with
:attr:`Typed.problem`. So every value :meth:`ValueType.read` returns is written by
``json.dumps(value, ensure_ascii=False)`` as strict JSON.

A value whose first candidate is ``string`` is a string before it is complete,
unless it may still read as null (:class:`NullWatch` tells, piece by piece): such
a value can stream as it arrives (:attr:`ValueType.streams`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolcall.types import WHITESPACE

__all__ = [
    "ANY",
    "NullWatch",
    "ParameterTypes",
    "Typed",
    "ValueType",
    "replace_surrogates",
    "value_type",
]

#: A candidate that fits every text: its JSON value when it is strict JSON, else the text.
_ANY: Final = "any"
_JSON_TYPES: Final = frozenset(
    {"string", "integer", "number", "boolean", "null", "object", "array"}
)
#: How deep ``$ref`` chains and nested ``anyOf`` are followed before giving up.
_MAX_DEPTH: Final = 32
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_ESCAPED_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")
_REPLACEMENT: Final = "\ufffd"


@dataclass(frozen=True, slots=True)
class Typed:
    """A raw value read by its type: the JSON value, and ``problem``, why the value
    is not what the text says (``None`` when it is exactly that): JSON text kept
    as text because strict JSON cannot carry it, or a surrogate replaced."""

    value: object
    problem: str | None = None


def replace_surrogates(text: str) -> tuple[str, bool]:
    """``text`` with every surrogate code point replaced by U+FFFD, and whether
    there was one. Such a code point has no UTF-8 form: a real detokenizer never
    produces one, and strict JSON cannot carry it."""
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii() costs nothing
        return text, False
    return _SURROGATE.sub(_REPLACEMENT, text), True


class _Unrepresentable(ValueError):
    """JSON text whose value strict JSON cannot carry."""


class _NotJson(ValueError):
    pass


def _not_json(name: str) -> object:
    msg = f"{name} is not JSON"
    raise _NotJson(msg)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        msg = f"the number {text} is beyond a float's range"
        raise _Unrepresentable(msg)
    return value


def _has_surrogate(value: object) -> bool:
    """Whether a string anywhere in ``value`` holds a surrogate: its JSON text has
    no UTF-8 form."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


#: What :func:`_read_json` found: strict JSON, not JSON, or JSON strict JSON cannot carry.
_JSON, _TEXT, _UNREPRESENTABLE = 0, 1, 2


def _read_json(text: str) -> tuple[int, object, str]:
    """``(kind, value, why)`` of ``text`` read as one strict JSON value (whitespace
    around it allowed). Never raises."""
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except _Unrepresentable as error:
        return _UNREPRESENTABLE, None, str(error)
    except RecursionError:
        return _UNREPRESENTABLE, None, "nested too deeply to read"
    except (json.JSONDecodeError, _NotJson):
        return _TEXT, None, ""
    except ValueError:
        # Not a syntax error: an integer past Python's digit limit.
        return _UNREPRESENTABLE, None, "an integer of more digits than Python converts"
    if (
        _ESCAPED_SURROGATE.search(text) is not None or _SURROGATE.search(text) is not None
    ) and _has_surrogate(value):
        return _UNREPRESENTABLE, None, "a lone surrogate in a string"
    return _JSON, value, ""


def _fits(kind: str, value: object) -> bool:
    if kind == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    return False


def _as_text(text: str, why: str | None = None) -> Typed:
    """The text itself as the value (surrogates replaced)."""
    clean, replaced = replace_surrogates(text)
    if replaced:
        surrogate = "a surrogate code point replaced by U+FFFD"
        why = f"{why}; {surrogate}" if why else surrogate
    return Typed(clean, why)


_PYTHON_BOOLEANS: Final = frozenset({"True", "False"})


def _is_null(text: str) -> bool:
    return text.strip(WHITESPACE) == "null"


@dataclass(frozen=True, slots=True)
class ValueType:
    """The ordered candidate types of one parameter (empty: undeclared)."""

    candidates: tuple[str, ...] = ()

    @property
    def nullable(self) -> bool:
        """Whether the text ``null`` is null."""
        return "null" in self.candidates

    @property
    def streams(self) -> bool:
        """Whether the value is the text verbatim (a string) as soon as it cannot
        read as null any more, so it can stream as it arrives: the first candidate
        is ``string``. If the type is :attr:`nullable` too, watch the text with a
        :class:`NullWatch` until it cannot be ``null``."""
        return bool(self.candidates) and self.candidates[0] == "string"

    def read(self, text: str, *, python_literals: bool = False) -> Typed:
        """The JSON value of the raw text ``text`` (see the module). With
        ``python_literals``, a format that writes its values as Python writes them (a
        Jinja template's ``|string``): ``True`` and ``False`` fit ``boolean``, ``None``
        is null where ``null`` is a candidate, as ``true``, ``false`` and ``null`` do."""
        candidates = self.candidates
        python = text.strip(WHITESPACE) if python_literals else ""
        if "null" in candidates and (_is_null(text) or python == "None"):
            return Typed(None)
        found: tuple[int, object, str] | None = None
        for kind in candidates:
            if kind == "string":
                return _as_text(text)
            if kind == "boolean" and python in _PYTHON_BOOLEANS:
                return Typed(python == "True")
            if found is None:
                found = _read_json(text)
            if kind == _ANY:
                break
            if found[0] == _JSON and _fits(kind, found[1]):
                return Typed(found[1])
        what, value, why = found if found is not None else _read_json(text)
        if what == _JSON:
            return Typed(value)
        return _as_text(text, why or None)


#: The type of an undeclared value: its JSON value when the text is strict JSON.
ANY = ValueType((_ANY,))


class NullWatch:
    """Whether the text of a value, fed piece by piece, may still read as null
    (``null`` with JSON whitespace around it). Constant work per character.

    Feed every piece of the value's text to :meth:`feed`; once it returns
    ``False`` the value is not null, whatever follows."""

    __slots__ = ("_closed", "_seen")

    def __init__(self) -> None:
        self._seen: str | None = ""  # the non-whitespace text so far; None: not null
        self._closed = False  # whitespace followed it: nothing but whitespace may follow

    @property
    def possible(self) -> bool:
        """Whether the text so far may still read as null."""
        return self._seen is not None

    def feed(self, text: str) -> bool:
        """Take the next piece of the value's text; return :attr:`possible`."""
        seen = self._seen
        if seen is None or not text:
            return seen is not None
        core = text.strip(WHITESPACE)
        if not core:
            if seen:
                self._closed = True
                if seen != "null":
                    self._seen = None
            return self._seen is not None
        if self._closed or (seen and text[0] in WHITESPACE) or len(seen) + len(core) > 4:
            self._seen = None
            return False
        seen += core
        if not "null".startswith(seen) or any(char in WHITESPACE for char in core):
            self._seen = None
            return False
        self._seen = seen
        if text[-1] in WHITESPACE:
            self._closed = True
            if seen != "null":
                self._seen = None
        return self._seen is not None


def _kind_of(value: object) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "object" if isinstance(value, Mapping) else "array"


def _resolve_ref(ref: str, root: Mapping[str, Any]) -> object:
    if not ref.startswith("#"):
        return None
    node: object = root
    for raw in ref[1:].split("/"):
        if not raw:
            continue
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, Sequence) and not isinstance(node, str) and part.isdigit():
            index = int(part)
            node = node[index] if index < len(node) else None
        else:
            return None
    return node


def _candidates(schema: object, root: Mapping[str, Any], depth: int = 0) -> list[str]:
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return [_ANY]
    if isinstance(schema.get("$ref"), str):
        return _candidates(_resolve_ref(schema["$ref"], root), root, depth + 1)
    out: list[str] = []
    declared = schema.get("type")
    if isinstance(declared, str):
        out.append(declared)
    elif isinstance(declared, list):
        out.extend(kind for kind in declared if isinstance(kind, str))
    elif "enum" in schema or "const" in schema:
        members = schema.get("enum") if "enum" in schema else [schema.get("const")]
        if isinstance(members, list):
            out.extend(_kind_of(member) for member in members)
    else:
        for combinator in ("anyOf", "oneOf", "allOf"):
            branches = schema.get(combinator)
            if isinstance(branches, list) and branches:
                if combinator == "allOf":
                    # Every branch holds at once: the first typed one says enough.
                    typed = [
                        c
                        for c in (_candidates(b, root, depth + 1) for b in branches)
                        if c != [_ANY]
                    ]
                    out.extend(typed[0] if typed else [_ANY])
                else:
                    for branch in branches:
                        out.extend(_candidates(branch, root, depth + 1))
                break
    if schema.get("nullable") is True:
        out.append("null")
    kept = [kind for kind in out if kind in _JSON_TYPES or kind == _ANY]
    return list(dict.fromkeys(kept)) or [_ANY]


def value_type(schema: object, root: Mapping[str, Any] | None = None) -> ValueType:
    """The candidate types of a parameter schema (``root`` resolves local ``$ref``)."""
    return ValueType(tuple(_candidates(schema, root if root is not None else {})))


@dataclass(frozen=True, slots=True)
class ParameterTypes:
    """The value types of one tool's declared parameters."""

    properties: Mapping[str, ValueType]

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any] | None) -> ParameterTypes:
        """Read a tool's ``parameters`` schema (an object schema with ``properties``);
        anything else declares nothing."""
        if not isinstance(parameters, Mapping):
            return cls({})
        properties = parameters.get("properties")
        if not isinstance(properties, Mapping):
            return cls({})
        return cls(
            {
                key: value_type(schema, parameters)
                for key, schema in properties.items()
                if isinstance(key, str)
            }
        )

    def of(self, key: str) -> ValueType:
        """The type of ``key``; an undeclared key is :data:`ANY`."""
        return self.properties.get(key, ANY)
