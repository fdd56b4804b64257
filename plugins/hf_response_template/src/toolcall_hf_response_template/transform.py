"""A tool field's ``transform``: where each call's name and arguments come from.

A transform is a JSON template whose strings are either literals or whole-string
placeholders, ``"{content}"``, ``"{content.name}"``, ``"{name}"`` (a named capture
of the field's ``open_pattern``), dotted paths descending into objects. vLLM turns a
tool region's value into calls by reading ``function.name`` and
``function.arguments`` of it (or of each element of a list). Read symbolically at
start-up, that is a :class:`CallShape`: a :class:`Source` for the name and one for
the arguments, each a literal, a capture, or a path into the region's parsed
content (into each element, for ``transform_each``). A transform that yields no
name cannot make a call: the template is refused.

:func:`apply` evaluates a transform on values, as transformers does, for regions
that are read whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import regex

__all__ = [
    "PLACEHOLDER",
    "CallShape",
    "ShapeError",
    "Source",
    "apply",
    "call_shape",
    "placeholders",
]

#: A whole-string placeholder: ``{root}`` or ``{root.key.key}``.
PLACEHOLDER: Final = regex.compile(r"\{(\w+(?:\.\w+)*)\}")


class ShapeError(ValueError):
    """The transform cannot yield calls; the message says why."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value comes from.

    ``literal``: the template's own value; ``capture``: a named group of the
    opener; ``content``: the value at ``path`` in the parsed content (in each
    element with ``transform_each``; ``()`` is the content itself).
    """

    kind: Literal["literal", "capture", "content"]
    value: object = None
    name: str = ""
    path: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.kind == "literal":
            return f"the literal {self.value!r}"
        if self.kind == "capture":
            return f"the capture {{{self.name}}}"
        return "{" + ".".join(("content", *self.path)) + "}" if self.path else "{content}"


@dataclass(frozen=True, slots=True)
class CallShape:
    """Where the name and the arguments of a tool region's calls come from."""

    name: Source
    arguments: Source | None
    each: bool = False

    @property
    def name_at_open(self) -> bool:
        """Whether the name is known when the region opens."""
        return self.name.kind != "content"


def placeholders(transform: object) -> list[str]:
    """Every placeholder path of a transform, in order."""
    found: list[str] = []
    stack: list[object] = [transform]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            whole = PLACEHOLDER.fullmatch(item)
            if whole:
                found.append(whole.group(1))
    return found


# -- symbolic reading ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Ref:
    root: str
    path: tuple[str, ...]


def _symbol(value: object) -> object:
    """A transform value: a reference for a placeholder string, else itself."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole:
            root, *path = whole.group(1).split(".")
            return _Ref(root, tuple(path))
    return value


def _member(value: object, key: str, what: str) -> object:
    value = _symbol(value)
    if isinstance(value, _Ref):
        return _Ref(value.root, (*value.path, key))
    if isinstance(value, Mapping):
        if key not in value:
            msg = f"the transform has no {what!r}"
            raise ShapeError(msg)
        return _symbol(value[key])
    msg = f"the transform's value for {what.rsplit('.', 1)[0]!r} is {value!r}, not an object"
    raise ShapeError(msg)


def call_shape(transform: object, *, each: bool, captures: Sequence[str]) -> CallShape:
    """Read where calls come from; raises :class:`ShapeError` for a transform that
    yields no name, no arguments, or reads what the region cannot give it."""
    tool = _symbol(transform) if transform is not None else _Ref("content", ())
    try:
        function = _member(tool, "function", "function")
        name_symbol = _member(function, "name", "function.name")
    except ShapeError as error:
        msg = f"the transform yields no name: {error}"
        raise ShapeError(msg) from None
    name = _source(name_symbol, each, captures, "function.name")
    if name.kind == "literal" and not (isinstance(name.value, str) and name.value):
        msg = f"the transform yields no name: function.name is the literal {name.value!r}"
        raise ShapeError(msg)
    try:
        arguments_symbol = _member(function, "arguments", "function.arguments")
    except ShapeError:
        msg = "the transform yields no arguments (function.arguments): vLLM drops every call"
        raise ShapeError(msg) from None
    arguments = _source(arguments_symbol, each, captures, "function.arguments")
    if arguments.kind == "literal" and not isinstance(arguments.value, Mapping | str):
        msg = f"function.arguments is the literal {arguments.value!r}, not an object"
        raise ShapeError(msg)
    return CallShape(name=name, arguments=arguments, each=each)


def _source(symbol: object, each: bool, captures: Sequence[str], what: str) -> Source:
    if not isinstance(symbol, _Ref):
        return Source("literal", value=symbol)
    if symbol.root in captures:
        if symbol.path:
            msg = (
                f"{what} reads {{{symbol.root}.{'.'.join(symbol.path)}}}, but the capture "
                f"{symbol.root!r} is text and cannot be indexed"
            )
            raise ShapeError(msg)
        return Source("capture", name=symbol.root)
    if each:
        # transform_each: the scope is the element's keys (and the captures).
        return Source("content", path=(symbol.root, *symbol.path))
    if symbol.root != "content":
        msg = (
            f"{what} reads {{{symbol.root}}}, which is neither content nor a named group of "
            f"the open_pattern (groups: {', '.join(captures) or 'none'})"
        )
        raise ShapeError(msg)
    return Source("content", path=symbol.path)


# -- evaluation -----------------------------------------------------------------------------


def apply(transform: object, scope: Mapping[str, Any]) -> Any:
    """The value of ``transform`` in ``scope``, as transformers computes it; raises
    ``KeyError`` or ``ValueError`` where transformers does."""
    if isinstance(transform, Mapping):
        return {key: apply(value, scope) for key, value in transform.items()}
    if isinstance(transform, list):
        return [apply(value, scope) for value in transform]
    if not isinstance(transform, str):
        return transform
    whole = PLACEHOLDER.fullmatch(transform)
    if not whole:
        return transform
    root, *keys = whole.group(1).split(".")
    if root not in scope:
        msg = f"transform placeholder {{{whole.group(1)}}} is not defined"
        raise KeyError(msg)
    value = scope[root]
    for key in keys:
        if not isinstance(value, Mapping):
            msg = f"transform placeholder {{{whole.group(1)}}} cannot index into {value!r}"
            raise ValueError(msg)
        if key not in value:
            msg = f"transform placeholder {{{whole.group(1)}}} is missing key {key!r}"
            raise ValueError(msg)
        value = value[key]
    return value
