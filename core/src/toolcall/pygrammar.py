"""The grammar of Python tool calls, typed by each tool's JSON schema (EBNF for xgrammar).

xgrammar has no builtin structural tag for calls written in Python syntax
(``get_weather(city="Paris", days=3)``): a family that reads them with
:mod:`toolcall.pycall` builds its tag from these rules. :class:`PythonCalls` writes, for
a plan's tools, one rule per call (``NAME(`` keyword arguments ``)``) in which each
keyword argument's value is a Python literal of the type its schema declares, and
composes them into an EBNF grammar with the root a family asks for.

What a pinned schema admits, by JSON Schema keyword (anything else, and an unpinned
tool's arguments, admits any Python literal):

* ``type`` ``string``: a string literal in single or double quotes (escapes allowed,
  no line break); ``integer``, ``number``; ``boolean``: ``True``/``False``; ``null``:
  ``None``; ``array``: a list or tuple of ``items``; ``object``: a dict literal with the
  declared ``properties`` (string keys in either quote), or any dict without them; a
  list of types: any of them;
* ``enum`` and ``const``: exactly those values, written as Python literals;
* ``anyOf`` / ``oneOf``: any of the alternatives;
* the keyword arguments are the declared ``properties``, in any order. Neither
  ``required`` nor a repeated name is enforced: an EBNF grammar cannot check presence
  or uniqueness in any order without listing every order (the parser reports a repeated
  keyword, ``duplicate-key``).

The reader (:mod:`toolcall.pycall`) reads more than this (sets, implicitly joined
strings, the named recoveries); those are free to fail the grammar, which admits what
a clean parse of a declared call reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcall.strictness import ToolPlan

__all__ = ["PythonCalls", "literal"]

#: Rules every grammar shares.
_BASE = r"""
ws ::= [ \t\n\r]*
py_string ::= "'" py_single* "'" | "\"" py_double* "\""
py_single ::= [^'\\\n\r] | "\\" [^\n\r]
py_double ::= [^"\\\n\r] | "\\" [^\n\r]
py_int ::= "-"? ("0" | [1-9] [0-9]*)
py_number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
py_bool ::= "True" | "False"
py_any ::= py_string | py_number | py_bool | "None" | py_list | py_tuple | py_dict
py_list ::= "[" ws (py_any (ws "," ws py_any)* (ws ",")?)? ws "]"
py_tuple ::= "(" ws (py_any (ws "," ws py_any)* (ws ",")?)? ws ")"
py_dict ::= "{" ws (py_pair (ws "," ws py_pair)* (ws ",")?)? ws "}"
py_pair ::= py_any ws ":" ws py_any
py_identifier ::= [a-zA-Z_] [a-zA-Z0-9_]*
""".strip()


def literal(value: object) -> str:
    """The EBNF for a Python literal of ``value`` (a JSON value), strings in either quote."""
    if isinstance(value, bool):
        return _quote("True" if value else "False")
    if value is None:
        return _quote("None")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return _quote("None")  # not a value a call can carry: nothing matches it
        return _quote(json.dumps(value))
    if isinstance(value, str):
        return "(" + " | ".join(_quote(_python_string(value, q)) for q in "'\"") + ")"
    if isinstance(value, list):
        items = ' ws "," ws '.join(literal(item) for item in value)
        return '"[" ws ' + (items + " ws " if items else "") + '"]"'
    if isinstance(value, Mapping):
        pairs = ' ws "," ws '.join(
            f'{literal(str(key))} ws ":" ws {literal(item)}' for key, item in value.items()
        )
        return '"{" ws ' + (pairs + " ws " if pairs else "") + '"}"'
    return "py_any"


def _python_string(text: str, quote: str) -> str:
    """``text`` as a Python string literal in ``quote`` (escaping what must be)."""
    escaped = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r")
    return quote + escaped + quote


def _quote(text: str) -> str:
    """An EBNF string literal matching ``text`` exactly."""
    return json.dumps(text, ensure_ascii=False)


class PythonCalls:
    """The EBNF rules of calls to ``tools`` (see the module)."""

    def __init__(self, tools: Sequence[ToolPlan]) -> None:
        self._rules: list[str] = [_BASE]
        self._count = 0
        self._calls: dict[str, str] = {}
        self._arguments: dict[str, str] = {}
        for number, entry in enumerate(tools):
            name = entry.tool.name
            if name in self._calls:
                continue
            schema = entry.tool.parameters if entry.pinned else None
            arguments = f"args_{number}"
            self._rules.append(f"{arguments} ::= {self._keywords(schema)}")
            self._arguments[name] = arguments
            call = f"call_{number}"
            self._rules.append(f'{call} ::= {_quote(name + "(")} ws {arguments} ws ")"')
            self._calls[name] = call

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._calls)

    def call(self, name: str | None = None) -> str:
        """The rule of a whole call of tool ``name`` (``None``: of any of the tools)."""
        if name is not None:
            return self._calls[name]
        return "(" + " | ".join(self._calls.values()) + ")"

    def arguments(self, name: str) -> str:
        """The rule of tool ``name``'s keyword arguments (between its parentheses)."""
        return self._arguments[name]

    def grammar(self, root: str) -> str:
        """The EBNF grammar whose start is ``root`` (an expression over these rules)."""
        return "\n".join([f"root ::= {root}", *self._rules])

    # -- schemas --------------------------------------------------------------------------

    def _rule(self, body: str) -> str:
        self._count += 1
        name = f"value_{self._count}"
        self._rules.append(f"{name} ::= {body}")
        return name

    def _keywords(self, schema: Mapping[str, Any] | None) -> str:
        """Keyword arguments: the declared properties in any order (a repeated name is
        not refused), or any keywords without a schema."""
        properties = _properties(schema)
        if properties is None:
            keyword = 'py_identifier ws "=" ws py_any'
            return f'({keyword} (ws "," ws {keyword})* (ws ",")?)?'
        if not properties:
            return '""'
        alternatives = " | ".join(
            f'{_quote(key)} ws "=" ws {self._value(value)}' for key, value in properties.items()
        )
        keyword = self._rule(alternatives)
        return f'({keyword} (ws "," ws {keyword})* (ws ",")?)?'

    def _value(self, schema: object) -> str:
        """The rule of a Python literal that ``schema`` admits."""
        if not isinstance(schema, Mapping):
            return "py_any"
        if "const" in schema:
            return self._rule(literal(schema["const"]))
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self._rule(" | ".join(literal(item) for item in enum))
        for keyword in ("anyOf", "oneOf"):
            options = schema.get(keyword)
            if isinstance(options, list) and options:
                return self._rule(" | ".join(self._value(option) for option in options))
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)]
            if not kinds:
                return "py_any"
            return self._rule(" | ".join(self._typed({**schema, "type": k}, k) for k in kinds))
        if isinstance(kind, str):
            return self._typed(schema, kind)
        return "py_any"

    def _typed(self, schema: Mapping[str, Any], kind: str) -> str:
        if kind == "string":
            return "py_string"
        if kind == "integer":
            return "py_int"
        if kind == "number":
            return "py_number"
        if kind == "boolean":
            return "py_bool"
        if kind == "null":
            return '"None"'
        if kind == "array":
            item = self._value(schema.get("items"))
            items = f'({item} (ws "," ws {item})* (ws ",")?)?'
            return self._rule(f'"[" ws {items} ws "]" | "(" ws {items} ws ")"')
        if kind == "object":
            properties = _properties(schema)
            if not properties:
                return "py_dict"
            pair = self._rule(
                " | ".join(
                    f'{literal(key)} ws ":" ws {self._value(value)}'
                    for key, value in properties.items()
                )
            )
            return self._rule(f'"{{" ws ({pair} (ws "," ws {pair})* (ws ",")?)? ws "}}"')
        return "py_any"


def _properties(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The declared properties of an object schema, or ``None`` when it declares none
    (any keywords then)."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    return {str(key): value for key, value in properties.items()}
