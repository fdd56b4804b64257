"""Reading and validating a ``response_template`` (the transformers region spec).

:func:`load_template` checks everything transformers' loader and vLLM 0.33's
serving check refuse, and more that would only fail later (while parsing, or in
vLLM as a dropped call), each as a :class:`TemplateError` naming the field and the
reason:

* the shape: ``version`` 1, known keys, a non-empty ``fields`` object, a
  ``start_anchor`` or ``start_anchor_pattern``, at most one field without an opener;
* what vLLM serves: the fields ``thinking``, ``content`` and ``tool_calls``, the
  default ``role``; ``thinking`` and ``content`` read as ``text`` without a transform;
* each delimiter: a non-empty literal or list of literals, or a pattern that
  compiles and searches in linear time (:func:`~.patterns.linear_time_problem`);
* each ``content_args``: the arguments its content parser reads, of their types;
* the transform: whole-string placeholders only, named captures used, and for
  ``tool_calls`` a name and arguments for every call (:func:`~.transform.call_shape`).

As vLLM does when it serves a template, a template whose every field has an opener
gets an implicit ``content`` field: text outside the regions is content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import regex

from toolcall.types import WHITESPACE
from toolcall_hf_response_template.markup import literal_pieces
from toolcall_hf_response_template.patterns import (
    Delimiter,
    linear_time_problem,
    lookahead_starts,
)
from toolcall_hf_response_template.transform import (
    PLACEHOLDER,
    CallShape,
    ShapeError,
    call_shape,
    placeholders,
)

__all__ = [
    "CONTENT",
    "THINKING",
    "TOOL_CALLS",
    "Field",
    "Template",
    "TemplateError",
    "load_template",
    "markers_of",
    "template_from_json",
    "unmarked_starts_of",
]

THINKING: Final = "thinking"
CONTENT: Final = "content"
TOOL_CALLS: Final = "tool_calls"
_FIELDS: Final = (THINKING, CONTENT, TOOL_CALLS)
_TOP_KEYS: Final = frozenset(
    {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
)
_FIELD_KEYS: Final = frozenset(
    {
        "open",
        "open_pattern",
        "close",
        "close_pattern",
        "content",
        "content_args",
        "repeats",
        "join",
        "optional",
        "transform",
        "transform_each",
    }
)
_KINDS: Final = ("text", "int", "float", "bool", "json", "xml-inline", "kv-lines")
#: The ``content_args`` each content parser reads, and their JSON types.
_ARGS: Final[Mapping[str, Mapping[str, str]]] = {
    "text": {"strip": "bool"},
    "int": {"strip": "bool"},
    "float": {"strip": "bool"},
    "bool": {"strip": "bool"},
    "json": {
        "unquoted_keys": "bool",
        "string_delims": "pairs",
        "allow_non_json": "bool",
        "strip": "bool",
    },
    "xml-inline": {
        "tag_pattern": "str",
        "value_parser": "parser",
        "merge_duplicates": "bool",
        "python_literals": "bool",
    },
    "kv-lines": {
        "line_sep": "str",
        "kv_sep": "str",
        "value_parser": "parser",
        "strip": "bool",
        "python_literals": "bool",
    },
}


class TemplateError(ValueError):
    """A template that cannot be served: ``where`` (a path such as
    ``fields.tool_calls.open_pattern``) and ``reason``."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"response_template {where}: {reason}" if where else reason)


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a template, validated."""

    name: str
    open: Delimiter | None
    close: Delimiter | None
    content: str
    content_args: Mapping[str, Any]
    repeats: bool = False
    join: str | None = None
    transform: object = None
    transform_each: bool = False
    shape: CallShape | None = None  # tool_calls only

    @property
    def strip(self) -> bool:
        return bool(self.content_args.get("strip", True))

    @property
    def ends_at_eos(self) -> bool:
        """Whether the end of the output is a normal end of this field's region: it has
        no closer, or its closer may be a look-ahead at what follows (Mistral's calls end
        where the next ``[TOOL_CALLS]`` starts)."""
        close = self.close
        return close is None or (close.literals is None and "(?=" in close.pattern.pattern)


@dataclass(frozen=True, slots=True)
class Template:
    """A validated response template (see the module)."""

    fields: Mapping[str, Field]
    start_anchor: Delimiter
    implicit: str | None
    source: Mapping[str, Any]

    @property
    def tools(self) -> Field | None:
        return self.fields.get(TOOL_CALLS)

    @property
    def thinking(self) -> Field | None:
        return self.fields.get(THINKING)

    def field_names(self) -> tuple[str, ...]:
        return tuple(self.fields)


def template_from_json(text: str, where: str) -> Template:
    """A template from JSON text (a file's): the template itself, or an object with a
    ``response_template`` key (a ``tokenizer_config.json``)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise TemplateError("", f"{where} is not JSON: {error}") from error
    if isinstance(data, Mapping) and "response_template" in data and "fields" not in data:
        data = data["response_template"]
    return load_template(data)


def load_template(spec: object) -> Template:
    """Validate ``spec`` (a ``response_template`` value); raises :class:`TemplateError`."""
    if not isinstance(spec, Mapping):
        raise TemplateError("", f"must be a JSON object, not {type(spec).__name__}")
    version = spec.get("version", 1)
    if version != 1:
        raise TemplateError("version", f"is {version!r}; only version 1 exists")
    unknown = sorted(set(spec) - _TOP_KEYS)
    if unknown:
        raise TemplateError("", f"unknown keys {unknown} (known: {sorted(_TOP_KEYS)})")
    defaults = spec.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise TemplateError("defaults", "must be an object")
    if set(defaults) - {"role"}:
        extra = sorted(set(defaults) - {"role"})
        raise TemplateError("defaults", f"holds {extra}; a served message takes only 'role'")
    raw_fields = spec.get("fields")
    if not isinstance(raw_fields, Mapping) or not raw_fields:
        raise TemplateError("fields", "must be a non-empty object")
    for name in raw_fields:
        if name not in _FIELDS:
            raise TemplateError(
                f"fields.{name}",
                f"is not a field vLLM serves (the fields are {', '.join(_FIELDS)})",
            )
    fields = {name: _field(name, raw_fields[name]) for name in raw_fields}
    _check_overlap(fields)
    implicit = [name for name, field in fields.items() if field.open is None]
    if len(implicit) > 1:
        raise TemplateError(
            "fields",
            f"{' and '.join(implicit)} have no open/open_pattern; at most one field may "
            "(it takes the text outside the other fields' regions)",
        )
    if not implicit and CONTENT not in fields:
        fields[CONTENT] = Field(CONTENT, None, None, "text", {})
        implicit = [CONTENT]
    anchor = _delimiter("", spec, "start_anchor", "start_anchor_pattern")
    if anchor is None:
        raise TemplateError("", "needs a start_anchor or a start_anchor_pattern")
    return Template(
        fields=fields, start_anchor=anchor, implicit=implicit[0] if implicit else None, source=spec
    )


def _check_overlap(fields: Mapping[str, Field]) -> None:
    """Two fields that open on the same literal text would overlap: which region the text
    opens could not be told from the template."""
    seen: dict[str, str] = {}
    for name, field in fields.items():
        for literal in field.open.literals or () if field.open is not None else ():
            other = seen.setdefault(literal, name)
            if other != name:
                raise TemplateError(
                    f"fields.{name}.open",
                    f"{literal!r} also opens {other}: two fields cannot open on the same text",
                )


def _field(name: str, raw: object) -> Field:
    where = f"fields.{name}"
    if not isinstance(raw, Mapping):
        raise TemplateError(where, "must be an object")
    unknown = sorted(set(raw) - _FIELD_KEYS)
    if unknown:
        raise TemplateError(where, f"unknown keys {unknown} (known: {sorted(_FIELD_KEYS)})")
    kind = raw.get("content", "text")
    if kind not in _KINDS:
        raise TemplateError(f"{where}.content", f"is {kind!r}; known: {', '.join(_KINDS)}")
    opener = _delimiter(where, raw, "open", "open_pattern")
    closer = _delimiter(where, raw, "close", "close_pattern")
    content_args = raw.get("content_args", {})
    _check_args(f"{where}.content_args", kind, content_args)
    repeats = raw.get("repeats", False)
    if not isinstance(repeats, bool):
        raise TemplateError(f"{where}.repeats", "must be true or false")
    for key in ("optional", "transform_each"):
        if key in raw and not isinstance(raw[key], bool):
            raise TemplateError(f"{where}.{key}", "must be true or false")
    join = raw.get("join")
    if join is not None and not isinstance(join, str):
        raise TemplateError(f"{where}.join", "must be a string")
    if join is not None and not repeats:
        raise TemplateError(f"{where}.join", "needs 'repeats': true")
    transform = raw.get("transform")
    each = bool(raw.get("transform_each", False))
    if each and transform is None:
        raise TemplateError(f"{where}.transform_each", "is set, but there is no transform")
    captures = opener.groups if opener is not None else ()
    close_groups = closer.groups if closer is not None else ()
    if transform is not None:
        _check_transform(f"{where}.transform", transform, captures, close_groups, each)
    elif captures or close_groups:
        raise TemplateError(
            where,
            f"the open/close pattern names groups {sorted({*captures, *close_groups})}, "
            "which only a transform can use; add one or remove the names",
        )
    shape = None
    if name in (THINKING, CONTENT):
        if kind != "text" or transform is not None:
            raise TemplateError(
                where, f"{name} must read as text, without a transform (it streams as text)"
            )
    else:
        if kind in ("int", "float", "bool"):
            raise TemplateError(
                f"{where}.content", f"is {kind!r}: a call's arguments can never be an object"
            )
        try:
            shape = call_shape(transform, each=each, captures=captures)
        except ShapeError as error:
            raise TemplateError(f"{where}.transform", str(error)) from None
        if kind == "text" and shape.name.kind == "content" and shape.name.path:
            raise TemplateError(
                f"{where}.transform",
                f"reads {shape.name.describe()} as the name, but text content has no keys",
            )
    return Field(
        name=name,
        open=opener,
        close=closer,
        content=kind,
        content_args=dict(content_args),
        repeats=repeats,
        join=join,
        transform=transform,
        transform_each=each,
        shape=shape,
    )


def _delimiter(
    where: str, raw: Mapping[str, Any], literal_key: str, pattern_key: str
) -> Delimiter | None:
    prefix = f"{where}." if where else ""
    if literal_key in raw and pattern_key in raw:
        raise TemplateError(f"{prefix}{literal_key}", f"cannot be given with {pattern_key}")
    if literal_key in raw:
        value = raw[literal_key]
        literals = [value] if isinstance(value, str) else value
        if not isinstance(literals, list) or not literals:
            raise TemplateError(f"{prefix}{literal_key}", "must be a string or a non-empty list")
        if not all(isinstance(item, str) and item for item in literals):
            raise TemplateError(f"{prefix}{literal_key}", "must hold non-empty strings only")
        return Delimiter(literals=literals)
    if pattern_key in raw:
        pattern = raw[pattern_key]
        _check_pattern(f"{prefix}{pattern_key}", pattern)
        return Delimiter(pattern=pattern)
    return None


def _check_pattern(where: str, pattern: object) -> None:
    if not isinstance(pattern, str) or not pattern:
        raise TemplateError(where, "must be a non-empty string")
    try:
        regex.compile(pattern, regex.DOTALL)
    except regex.error as error:
        raise TemplateError(where, f"is not a valid regular expression: {error}") from None
    problem = linear_time_problem(pattern)
    if problem is not None:
        raise TemplateError(where, f"{pattern!r} is refused: {problem}")


def _check_args(where: str, kind: str, args: object) -> None:
    if not isinstance(args, Mapping):
        raise TemplateError(where, "must be an object")
    known = _ARGS[kind]
    for key, value in args.items():
        expected = known.get(key)
        if expected is None:
            raise TemplateError(
                f"{where}.{key}",
                f"is not an argument of the {kind} parser (it reads {sorted(known) or 'none'})",
            )
        _check_arg(f"{where}.{key}", expected, value)
    if kind == "xml-inline":
        pattern = args.get("tag_pattern")
        if pattern is None:
            raise TemplateError(where, "xml-inline needs a tag_pattern")
        _check_pattern(f"{where}.tag_pattern", pattern)
        if "key" not in regex.compile(pattern, regex.DOTALL).groupindex:
            raise TemplateError(f"{where}.tag_pattern", "needs a named group 'key'")


def _check_arg(where: str, expected: str, value: object) -> None:
    if expected == "bool" and not isinstance(value, bool):
        raise TemplateError(where, "must be true or false")
    if expected == "str" and not (isinstance(value, str) and value):
        raise TemplateError(where, "must be a non-empty string")
    if expected == "pairs":
        ok = isinstance(value, list) and all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(s, str) and s for s in pair)
            for pair in value
        )
        if not ok:
            raise TemplateError(where, "must be a list of [open, close] pairs of non-empty strings")
    if expected == "parser":
        if not isinstance(value, Mapping) or not isinstance(value.get("name", "text"), str):
            raise TemplateError(where, "must be an object {name, args}")
        name = value.get("name", "text")
        if name not in _KINDS:
            raise TemplateError(f"{where}.name", f"is {name!r}; known: {', '.join(_KINDS)}")
        if set(value) - {"name", "args"}:
            raise TemplateError(where, f"unknown keys {sorted(set(value) - {'name', 'args'})}")
        _check_args(f"{where}.args", name, value.get("args", {}))


def _check_transform(
    where: str,
    transform: object,
    captures: tuple[str, ...],
    close_groups: tuple[str, ...],
    each: bool,
) -> None:
    stack: list[object] = [transform]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and PLACEHOLDER.search(item) and not PLACEHOLDER.fullmatch(item):
            raise TemplateError(
                where,
                f"{item!r} mixes a placeholder with literal text; use a whole-string "
                'placeholder ("{content}") or a literal',
            )
    for path in placeholders(transform):
        root = path.split(".", 1)[0]
        if root in close_groups and root not in captures:
            raise TemplateError(
                where,
                f"{{{path}}} names a group of the close pattern; only the open pattern's "
                "captures reach the transform",
            )
        if not each and root != "content" and root not in captures:
            raise TemplateError(
                where,
                f"{{{path}}} is neither content nor a named group of the open pattern "
                f"(groups: {', '.join(captures) or 'none'})",
            )


def unmarked_starts_of(template: Template) -> tuple[str, ...]:
    """Where a call may begin with no marker of its own: the text a tool opener's
    look-ahead requires (llama3's ``{``)."""
    found: list[str] = []
    for field in template.fields.values():
        if field.shape is not None and field.open is not None:
            found.extend(lookahead_starts(field.open))
    return tuple(dict.fromkeys(found))


def markers_of(template: Template) -> tuple[str, ...]:
    """The template's delimiters as literal text: every opener and closer (a pattern by
    each run of literal text it consumes: qwen3_coder's closer gives ``</function>`` and
    ``</tool_call>``, mistral_v11's opener ``[TOOL_CALLS]`` and ``[ARGS]``), blanks at
    either end left out. A single character (llama3's ``;``) is punctuation, not a marker."""
    found: list[str] = []
    for field in template.fields.values():
        for delimiter in (field.open, field.close):
            if delimiter is not None:
                found.extend(text.strip(WHITESPACE) for text in literal_pieces(delimiter))
    return tuple(dict.fromkeys(marker for marker in found if len(marker) > 1))
