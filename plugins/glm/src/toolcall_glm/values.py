"""How a raw GLM argument value becomes a JSON value: typing by the tool's schema.

GLM writes values raw: a string verbatim (no quotes), anything else as JSON text.
The text alone cannot tell ``123`` the string from ``123`` the number, so the
declared type decides:

* the schema's candidate types are taken in order (``type``, a list of types,
  ``anyOf``/``oneOf`` branches, ``enum``/``const`` members' types, ``nullable``);
* the first candidate that fits wins: ``string`` always fits (the text verbatim),
  any other type fits when the text parses as JSON to a value of that type;
* if none fits, or nothing is declared (an undeclared key, an unknown tool, a
  schema without a type), the value is the parsed JSON when the text parses,
  else the text verbatim.

So a value whose first candidate is ``string`` is known to be a string before it
is complete, and can be streamed (:attr:`ValueType.streams`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ANY", "ToolTypes", "ValueType", "read_json", "value_type"]

#: A candidate that fits every text: its JSON value when it parses, else the text.
_ANY = "any"
_JSON_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
#: How deep ``$ref`` chains and nested ``anyOf`` are followed before giving up.
_MAX_DEPTH = 32


class _NotJson(ValueError):
    pass


def _reject_constant(name: str) -> object:
    # NaN and Infinity parse in Python but are not JSON, and json.dumps would
    # write them back as invalid JSON text.
    raise _NotJson(name)


def read_json(text: str) -> tuple[bool, object]:
    """``(True, value)`` if ``text`` is one JSON value (whitespace around it
    allowed), else ``(False, None)``. Never raises."""
    try:
        return True, json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        # ValueError covers JSONDecodeError, NaN/Infinity and integers past
        # Python's digit limit; RecursionError very deep nesting.
        return False, None


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


@dataclass(frozen=True)
class ValueType:
    """The ordered candidate types of one parameter (empty: undeclared)."""

    candidates: tuple[str, ...] = ()

    @property
    def streams(self) -> bool:
        """Whether every value is the text verbatim, so it can stream as it arrives."""
        return bool(self.candidates) and self.candidates[0] == "string"

    def read(self, text: str) -> object:
        """The JSON value of the raw text ``text``."""
        parsed: tuple[bool, object] | None = None
        for kind in self.candidates:
            if kind == "string":
                return text
            if parsed is None:
                parsed = read_json(text)
            ok, value = parsed
            if kind == _ANY:
                return value if ok else text
            if ok and _fits(kind, value):
                return value
        ok, value = parsed if parsed is not None else read_json(text)
        return value if ok else text


ANY = ValueType((_ANY,))


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


@dataclass(frozen=True)
class ToolTypes:
    """The value types of one tool's declared parameters."""

    properties: Mapping[str, ValueType]

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any] | None) -> ToolTypes:
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
        """The type of ``key``; undeclared keys are read as JSON when they parse."""
        return self.properties.get(key, ANY)
