"""What a region's text means: content parsers, value parsers and schema typing.

The content parsers are transformers' (``text``, ``int``, ``float``, ``bool``,
``json`` with its dialect, ``xml-inline``, ``kv-lines``), used here for one raw
value (a tag's value, a line's value) and for a region read whole. Raw values of a
call's arguments are then typed by the tool's schema, as transformers does: a value
whose parser gave a string is typed by its parameter's declared type
(:mod:`toolcall.schema_types`); undeclared parameters, and values a parser already
typed (``json``), keep what the parser gave.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import regex

from toolcall.schema_types import ParameterTypes, Typed
from toolcall.types import Tool

__all__ = ["UnreadableValue", "parameter_types", "parse_content", "parse_value", "typed"]

_SENTINEL_OPEN: Final = "\x01"
_SENTINEL_CLOSE: Final = "\x02"
_BARE_KEY: Final = regex.compile(r"(?<=[{,])(\w+):")


class UnreadableValue(ValueError):
    """A value its parser cannot read (transformers raises here)."""


def _text(text: str, args: Mapping[str, Any]) -> str:
    return text.strip() if args.get("strip", True) else text


def _json(text: str, args: Mapping[str, Any]) -> Any:
    delims = args.get("string_delims", [])
    working = text
    if delims:
        if _SENTINEL_OPEN in text or _SENTINEL_CLOSE in text:
            msg = "json: the text holds the characters \\x01 or \\x02"
            raise UnreadableValue(msg)
        captured: list[str] = []

        def capture(match: Any) -> str:
            captured.append(match.group(1))
            return f"{_SENTINEL_OPEN}{len(captured) - 1}{_SENTINEL_CLOSE}"

        for opener, closer in delims:
            pattern = regex.escape(opener) + r"(.*?)" + regex.escape(closer)
            working = regex.sub(pattern, capture, working, flags=regex.DOTALL)
        if args.get("unquoted_keys"):
            working = _BARE_KEY.sub(r'"\1":', working)
        for index, value in enumerate(captured):
            working = working.replace(
                f"{_SENTINEL_OPEN}{index}{_SENTINEL_CLOSE}", json.dumps(value)
            )
    elif args.get("unquoted_keys"):
        working = _BARE_KEY.sub(r'"\1":', working)
    try:
        return json.loads(working)
    except (json.JSONDecodeError, RecursionError) as error:
        if args.get("allow_non_json"):
            return _text(text, args)
        msg = f"json: not JSON ({error})"
        raise UnreadableValue(msg) from None


def _xml_inline(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    merge = bool(args.get("merge_duplicates", False))
    out: dict[str, Any] = {}
    for match in regex.finditer(args["tag_pattern"], text, flags=regex.DOTALL):
        groups = match.groupdict()
        key = groups.get("key")
        if key is None:
            msg = "xml-inline: a tag without a key"
            raise UnreadableValue(msg)
        value = parse_value(groups.get("value") or "", args.get("value_parser"))
        if key in out and merge:
            if not isinstance(out[key], list):
                out[key] = [out[key]]
            out[key].append(value)
        else:
            out[key] = value
    return out


def _kv_lines(text: str, args: Mapping[str, Any]) -> dict[str, Any]:
    line_sep = args.get("line_sep", "\n")
    kv_sep = args.get("kv_sep", ":")
    out: dict[str, Any] = {}
    for raw in text.split(line_sep):
        line = _text(raw, args)
        if not line or kv_sep not in line:
            continue
        key, value = line.split(kv_sep, 1)
        out[_text(key, args)] = parse_value(_text(value, args), args.get("value_parser"))
    return out


def parse_content(kind: str, args: Mapping[str, Any], text: str) -> Any:
    """The value of ``text`` read by the content parser ``kind`` (transformers')."""
    try:
        if kind == "text":
            return _text(text, args)
        if kind == "int":
            return int(_text(text, args))
        if kind == "float":
            return float(_text(text, args))
        if kind == "bool":
            return _text(text, args).lower() in ("true", "1")
        if kind == "json":
            return _json(text, args)
        if kind == "xml-inline":
            return _xml_inline(text, args)
        return _kv_lines(text, args)
    except UnreadableValue:
        raise
    except ValueError as error:
        raise UnreadableValue(f"{kind}: {error}") from None


def parse_value(raw: str, parser: Mapping[str, Any] | None) -> Any:
    """One raw value read by a ``value_parser`` (none: the text itself)."""
    if parser is None:
        return raw
    return parse_content(parser.get("name", "text"), parser.get("args", {}), raw)


def parameter_types(tool: Tool | None) -> ParameterTypes | None:
    """The declared parameter types of ``tool`` (``None`` for an undeclared tool)."""
    return None if tool is None else ParameterTypes.from_parameters(tool.parameters)


def typed(
    value: Any, key: str, types: ParameterTypes | None, *, python_literals: bool = False
) -> Typed:
    """``value`` (as its parser gave it) typed by ``key``'s declared type: only a
    string for a declared parameter is typed (transformers' rule). ``python_literals``:
    the template writes ``True``, ``False`` and ``None`` for JSON's literals."""
    if not isinstance(value, str) or types is None or key not in types.properties:
        return Typed(value)
    return types.of(key).read(value, python_literals=python_literals)
