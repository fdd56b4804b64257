"""Reading the body of a tool region into calls, as it arrives.

A body reader gets the region's text (after its opener) piece by piece, and its end
(the closer, the end of the output, or another region's opener). Every character of
the region is held by the stream until the reader decides it: framing (the call's
markup and body), content (a region that holds no readable call, text after the
call's value), or a call's arguments. Which reader reads a region depends on its
``content`` and on where its transform takes the name and the arguments
(:class:`~.transform.CallShape`):

* :class:`JsonBody`: ``json``; the name at a path of the value (or from the opener),
  the arguments the model's own text of the value at a path, streamed as it arrives;
  in a JSON dialect (``unquoted_keys``, ``string_delims``) their canonical JSON,
  value by value; one call per element with ``transform_each``;
* :class:`TagsBody` (``xml-inline``) and :class:`LinesBody` (``kv-lines``): the name
  from the opener, the arguments the canonical JSON of the tags or lines, member by
  member as each value ends, typed by the tool's schema;
* :class:`TextBody`: ``text``; the arguments the region's text, trimmed;
* :class:`WholeBody`: every other shape: the region is read whole when it ends, as
  transformers reads it, and its calls come then.

The policy (DESIGN §6): a call is committed once its name is known; a region that
never gives a name is content, verbatim with its markup (``unparsed-markup``);
arguments that are not a JSON object give ``malformed-arguments``; a region cut off
by the end of output keeps the arguments emitted so far (``truncated``), or, complete
but without its closer, ``missing-end``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import regex

from toolcall.scanning import UNDECODED, JsonEmitter, name_problem
from toolcall.types import WHITESPACE, EventName
from toolcall_hf_response_template.canonical import Canonical
from toolcall_hf_response_template.jsontokens import SCALAR, STRING, JsonTokens, Token
from toolcall_hf_response_template.patterns import Delimiter
from toolcall_hf_response_template.tags import Tags
from toolcall_hf_response_template.transform import Source, apply
from toolcall_hf_response_template.values import (
    UnreadableValue,
    parameter_types,
    parse_content,
    parse_value,
    typed,
)

if TYPE_CHECKING:
    from toolcall.schema_types import ParameterTypes
    from toolcall_hf_response_template.stream import HfStream
    from toolcall_hf_response_template.template import Field

__all__ = ["Body", "End", "make_body"]

End = Literal["close", "eos", "open"]

_BLANK_END: Final = regex.compile(r"[ \t\r\n]*\Z")
_IDENTIFIER: Final = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_BLANK: Final = regex.compile(r"[^ \t\r\n]")


def make_body(stream: HfStream, field: Field, captures: Mapping[str, str], start: int) -> Body:
    """The reader for a tool region of ``field`` whose body starts at ``start``."""
    shape = field.shape
    assert shape is not None
    name = _known(shape.name, captures)
    arguments = shape.arguments
    whole_arguments = arguments is not None and arguments.kind == "content" and not arguments.path
    if field.content == "json":
        return JsonBody(stream, field, captures, start)
    if shape.name_at_open and whole_arguments and not shape.each:
        if field.content == "xml-inline":
            tags = Tags.split(field.content_args)
            if tags is not None and not field.content_args.get("merge_duplicates"):
                return TagsBody(stream, field, name, start, tags)
        elif field.content == "kv-lines":
            return LinesBody(stream, field, name, start)
        elif field.content == "text":
            return TextBody(stream, field, name, start)
    return WholeBody(stream, field, captures, start)


def _known(source: Source, captures: Mapping[str, str]) -> str | None:
    """The name a source gives before the body is read (``None``: from the body, or
    an opener whose capture is missing)."""
    if source.kind == "literal":
        return source.value if isinstance(source.value, str) else None
    if source.kind == "capture":
        value = captures.get(source.name)
        return value if value else None
    return None


class Body:
    """The common part of the readers: what is held, the call, the end."""

    def __init__(self, stream: HfStream, field: Field, start: int) -> None:
        self.stream = stream
        self.field = field
        self.end = start  # just past the region text fed so far
        self.calls = 0  # calls this region committed
        self.in_call = False
        self.trailing = False  # the rest of the region is content

    # -- what a reader does ----------------------------------------------------------------

    def feed(self, text: str, start: int) -> None:
        """Body text at ``start`` (already held by the stream)."""
        raise NotImplementedError

    def close(self, text: str, start: int, how: End) -> None:
        """The region ends: its closer ``text`` at ``start`` (held; empty for the end of
        output or another opener)."""
        raise NotImplementedError

    def inside(self) -> bool:
        """Whether the text read so far ends inside the value, where the region's closer
        is text (a JSON string of the call object)."""
        return False

    def in_string(self) -> str | None:
        """Whether the body's next text, up to a ``"`` that is not escaped, an escape or
        a blank at its end, is string text of the open call's arguments, streamed as it
        stands (the stream's fast path; :meth:`skip_string` then accounts for it):
        ``None`` if not, else the blanks read and not streamed yet, which go first."""
        return None

    def skip_string(self, size: int) -> None:
        """``size`` characters of the string :meth:`in_string` stood in were streamed as
        argument text without the reader, after the blanks it returned."""
        raise NotImplementedError

    def string_text(self, text: str, start: int) -> None:
        """Text of the string :meth:`in_string` stands in that the fast path stopped at
        for a blank at its end only, read without the tokenizer."""
        raise NotImplementedError

    # -- shared steps ----------------------------------------------------------------------

    def stopped(self) -> bool:
        """Whether the rest of the region is content (a method: readers ask it after
        steps that may change it)."""
        return self.trailing

    def held(self, text: str, start: int) -> None:
        """Body text arrives: held until decided, or content after the call's value."""
        self.end = start + len(text)
        if self.trailing:
            self.stream.content(text, start)
        else:
            self.stream.hold(text, start)

    def commit(self, name: str, arguments: str = "") -> None:
        self.stream.open_call(name, arguments)
        self.calls += 1
        self.in_call = True

    def finish_call(self) -> None:
        if self.in_call:
            self.stream.close_call()
            self.in_call = False

    def decide(self, end: int) -> None:
        """The region text before ``end`` is framing (once a call is committed)."""
        if self.calls:
            self.stream.settle(end)

    def start_trailing(self, at: int, what: str) -> None:
        """The text from ``at`` to the end of the region is content."""
        stream = self.stream
        stream.end_arguments()
        self.decide(at)
        rest = stream.held  # while a body reads, the stream holds only its region's text
        if rest.strip(WHITESPACE):
            stream.event(EventName.TRAILING_TEXT, f"{what}: {rest.strip()[:40]!r}", None)
        stream.release(self.end)
        self.trailing = True

    def closing(self, text: str, start: int, how: End, *, complete: bool) -> None:
        """Wind up: settle the region (or return it as content if it made no call),
        record how the last call ended."""
        stream = self.stream
        if self.calls == 0:
            stream.event(EventName.UNPARSED_MARKUP, "a tool region with no readable call", None)
            stream.release(start + len(text))
            return
        if self.in_call and how == "eos" and not stream.has_event(EventName.TRUNCATED):
            if not complete:
                stream.event(EventName.TRUNCATED, "the output ended inside the call")
            elif not self.field.ends_at_eos:
                stream.event(EventName.MISSING_END, "no closer at the end of output")
        if self.trailing:
            stream.settle(start + len(text))
        else:
            self.decide(start + len(text))
        self.finish_call()


# -- json -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Frame:
    """An object or array being read for its structure."""

    kind: str  # "{" or "["
    path: tuple[str | int, ...]
    expect: str = "first"  # first, key, colon, value, next
    key: str | None = None
    index: int = 0
    keys: set[str] = field(default_factory=set)
    member: int = -1  # where the current member's key starts
    start: int = -1  # where the frame's value starts


class JsonBody(Body):
    """A ``json`` region: calls at the paths the transform names (see the module)."""

    def __init__(
        self, stream: HfStream, field: Field, captures: Mapping[str, str], start: int
    ) -> None:
        super().__init__(stream, field, start)
        shape = field.shape
        assert shape is not None
        args = field.content_args
        self.each = shape.each
        self.name_path = shape.name.path if shape.name.kind == "content" else None
        self.known_name = _known(shape.name, captures)
        arguments = shape.arguments
        assert arguments is not None
        self.args_path = arguments.path if arguments.kind == "content" else None
        self.known_args = ""
        if arguments.kind == "capture":
            self.known_args = captures.get(arguments.name, "")
        elif arguments.kind == "literal":
            value = arguments.value
            self.known_args = (
                value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            )
        self.canonical = bool(args.get("unquoted_keys") or args.get("string_delims"))
        self.bare_keys = bool(args.get("unquoted_keys"))
        self.tokens = JsonTokens(args.get("string_delims", ()), start)
        self.stack: list[_Frame] = []
        self.root_seen = False
        self.root_open = False  # the root is an object or a list
        self.skip = -1  # nesting inside a skipped value; -1: none
        self.broken = False  # the structure cannot be read any further
        # The current call (the root, or an element with transform_each).
        self.name: str | None = None
        self.args_state = "none"  # none, open, done
        self.pending: list[str] = []  # argument text that came before the name
        # Raw argument text: kept from `cursor` until emitted.
        self.raw: list[tuple[str, int]] = []
        self.cursor = start
        self.depth = 0  # the raw argument value's nesting
        self.blank = 0  # the length of the whitespace that ends the text fed so far
        self.canon: Canonical | None = None
        self.canon_end = start  # just past the last token the canonical arguments took
        self.no_call = False  # the current element cannot make a call
        self.root_end = -1
        if not self.each and self.known_name is not None:
            self.commit(self.known_name, self._initial_args())
            if self.args_path is None:
                self.stream.end_arguments()

    # -- input --------------------------------------------------------------------------------

    def feed(self, text: str, start: int) -> None:
        self.held(text, start)
        if self.trailing:
            return
        if not self.canonical:
            self.raw.append((text, start))
            kept = text.rstrip(WHITESPACE)
            self.blank = self.blank + len(text) if not kept else len(text) - len(kept)
        if not self._read(self.tokens.feed(text)):
            return
        self._flush_raw(final=False)
        decided = self.tokens.token_start
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind == "{" and top.expect in ("colon", "value"):
            decided = min(decided, top.member)  # a key without its value is not framing yet
        element = self._element()
        if element is not None and not self.in_call:
            decided = min(decided, element.start)  # an element with no call yet
        self.decide(decided)

    def inside(self) -> bool:
        # A string of the root object or list, while it is read (a root that is a string
        # is no call object: its closer is the closer).
        return self.root_open and self.root_end < 0 and not self.trailing and self.tokens.in_string

    def in_string(self) -> str | None:
        # Raw arguments (their text as the model wrote it), streamed up to the blanks
        # that end it (held: they would be trimmed if the closer came next).
        if (
            self.args_state != "open"
            or not self.in_call
            or self.canonical
            or self.trailing
            or not self.tokens.plain_string
            or self.end - self.cursor != self.blank
        ):
            return None
        return "".join(text for text, _ in self.raw)[-self.blank :] if self.blank else ""

    def skip_string(self, size: int) -> None:
        self.tokens.skip(size)
        self._take_raw(self.end)  # the held blanks went out before the skipped text
        self.end += size
        self.cursor = self.end
        self.blank = 0

    def string_text(self, text: str, start: int) -> None:
        self.held(text, start)
        self.tokens.skip(len(text))
        self.raw.append((text, start))
        kept = text.rstrip(WHITESPACE)
        self.blank = self.blank + len(text) if not kept else len(text) - len(kept)
        self._flush_raw(final=False)

    def close(self, text: str, start: int, how: End) -> None:
        self.stream.hold(text, start)
        # A string the region ends in (a closer inside it, the end of output).
        open_string = self.tokens.token_start if self.tokens.in_string else -1
        if not self.trailing:
            self._read(self.tokens.finish())
        top = self.stack[-1] if self.stack else None
        member = top is not None and top.kind == "{" and top.expect in ("colon", "value")
        dialect_open = self.canon is not None and self.args_state == "open"
        if not self.trailing and self.calls and dialect_open:
            # Dialect arguments the region ends in: what was emitted stands, the text
            # after the last token they took is content.
            self.start_trailing(self.canon_end, "an unfinished value")
            cut = True
        elif (
            not self.trailing
            and not self.broken
            and self.calls
            and self.args_state != "open"
            and self.skip < 0
            and (member or open_string >= 0)
        ):
            # A member the region ends in: no member, and its text (from its key) is
            # content, not dropped.
            at = top.member if member and top is not None else open_string
            self.start_trailing(self._cut(at), "an unfinished member")
            cut = how == "eos"
        else:
            cut = False
        complete = not cut
        if not self.stopped() and self.args_state == "open":
            self._flush_raw(final=True)
            complete = False
        elif (
            not self.trailing
            and self.in_call
            and self.args_state == "none"
            and self.args_path is not None
        ):
            complete = self.stack == [] and self.root_seen
            if (complete or how != "eos") and not self.broken:
                self._arguments("{}")
        self.closing(text, start, how, complete=complete)

    # -- the call --------------------------------------------------------------------------------

    def _initial_args(self) -> str:
        return self.known_args if self.args_path is None else ""

    def _arguments(self, text: str, value: object = UNDECODED) -> None:
        """Argument text; ``value``: ``text`` decoded already (for the stream's check)."""
        if not text:
            return
        if self.in_call:
            self.stream.arguments(text, value)
        else:
            self.pending.append(text)

    def _named(self, name: str) -> None:
        if self.no_call:
            return
        args = "".join(self.pending) if self.args_path is not None else self.known_args
        self.pending = []
        self.name = name
        self.commit(name, args)
        if self.args_state == "done" or self.args_path is None:
            self.stream.end_arguments()

    def _new_element(self) -> None:
        self.finish_call()
        self.name = None
        self.args_state = "none"
        self.pending = []
        self.no_call = False
        if self.known_name is not None:
            self.commit(self.known_name, self._initial_args())
            if self.args_path is None:
                self.stream.end_arguments()

    def _cut(self, at: int) -> int:
        """Where the content starts when the region's reading stops at ``at``: an element
        that made no call goes with it whole."""
        element = self._element()
        if element is not None and not self.in_call:
            return min(at, element.start)
        return at

    def _element(self) -> _Frame | None:
        """The element being read (``transform_each``), if it is an object."""
        if self.each and len(self.stack) > 1 and len(self.stack[1].path) == 1:
            return self.stack[1]
        return None

    def _end_element(self, at: int) -> None:
        if self.in_call and self.args_state == "none" and self.args_path is not None:
            self._arguments("{}")
        if self.in_call:
            self.stream.end_arguments()
        else:
            self.stream.event(EventName.IGNORED_MEMBER, "an element with no name", None)
        self.finish_call()
        self.decide(at)

    # -- tokens ---------------------------------------------------------------------------------

    def _read(self, tokens: Iterator[Token]) -> bool:
        """Read the tokens; ``False`` if the rest of the region turned content (the
        tokens after that are scanned, not read)."""
        for token in tokens:
            self._token(token)
            if self.stopped():
                for _ in tokens:
                    pass
                return False
        return True

    def _token(self, token: Token) -> None:
        if self.args_state == "open":
            self._argument_token(token)
            return
        if self.skip >= 0:
            self._skipped(token)
            return
        if self.broken:
            return
        stack = self.stack
        if not stack:
            if self.root_seen:
                self.start_trailing(token.start, "text after the value")
                return
            self.root_seen = True
            self.root_open = token.kind in ("{", "[")
            self._value((), token)
            return
        top = stack[-1]
        kind = token.kind
        if top.kind == "{":
            if top.expect in ("first", "key"):
                if kind == "}" and top.expect == "first":
                    self._pop(token)
                    return
                key = self._key(token)
                if key is None:
                    self._break(token.start, f"{token.raw!r} where a key belongs")
                    return
                top.key = key
                top.member = token.start
                top.expect = "colon"
                return
            if top.expect == "colon":
                if kind != ":":
                    # The key is no member: it goes with the rest.
                    self._break(top.member, f"{token.raw!r} where ':' belongs")
                    return
                top.expect = "value"
                return
            if top.expect == "value":
                key = top.key
                assert isinstance(key, str)
                duplicate = key in top.keys
                top.keys.add(key)
                top.expect = "next"
                self._value((*top.path, key), token, duplicate=duplicate)
                return
            if kind == ",":
                top.expect = "key"
            elif kind == "}":
                self._pop(token)
            else:
                self._break(token.start, f"{token.raw!r} where ',' or '}}' belongs")
            return
        # an array
        if top.expect in ("first", "value"):
            if kind == "]" and top.expect == "first":
                self._pop(token)
                return
            top.expect = "next"
            index = top.index
            top.index += 1
            self._value((*top.path, index), token)
            return
        if kind == ",":
            top.expect = "value"
        elif kind == "]":
            self._pop(token)
        else:
            self._break(token.start, f"{token.raw!r} where ',' or ']' belongs")

    def _key(self, token: Token) -> str | None:
        if token.kind == STRING:
            return token.value
        if token.kind == SCALAR and self.bare_keys and _IDENTIFIER.fullmatch(token.raw):
            return token.raw
        return None

    def _relative(self, path: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
        """``path`` relative to the current call's root (``None``: above it)."""
        if not self.each:
            return path
        return path[1:] if path else None

    def _value(self, path: tuple[str | int, ...], token: Token, *, duplicate: bool = False) -> None:
        kind = token.kind
        if self.each and not path:
            if kind != "[":
                self._break(token.start, "transform_each needs a list of calls")
                return
            self.stack.append(_Frame("[", path))
            return
        if self.each and len(path) == 1:
            self._new_element()
            if kind != "{":
                self.no_call = True
                self.stream.event(EventName.IGNORED_MEMBER, "an element that is no object", None)
                self._begin_skip(token)
                return
            self.stack.append(_Frame("{", path, start=token.start))
            return
        relative = self._relative(path)
        assert relative is not None
        if relative == self.args_path:
            if duplicate or self.args_state != "none":
                self.stream.event(EventName.DUPLICATE_KEY, f"{relative!r} given again", None)
                self._begin_skip(token)
                return
            self._begin_arguments(token)
            return
        if relative == self.name_path:
            if duplicate or self.name is not None:
                self.stream.event(EventName.DUPLICATE_KEY, f"{relative!r} given again", None)
            elif kind == STRING and token.value is not None and not name_problem(token.value):
                self._named(token.value)
                if self.args_state == "done":
                    self._after_arguments()
                self._end_value(token.end)
                return
            else:
                self.no_call = True
            self._begin_skip(token)
            return
        wanted = [p for p in (self.name_path, self.args_path) if p is not None]
        if kind == "{" and any(p[: len(relative)] == relative for p in wanted):
            self.stack.append(_Frame("{", path))
            return
        if relative:
            self.stream.event(EventName.IGNORED_MEMBER, f"{relative!r} ignored", None)
        self._begin_skip(token)

    def _begin_skip(self, token: Token) -> None:
        if token.kind in ("{", "["):
            self.skip = 1
        elif token.kind in ("}", "]", ",", ":"):
            top = self.stack[-1] if self.stack else None
            at = top.member if top is not None and top.kind == "{" else token.start
            self._break(at, f"{token.raw!r} where a value belongs")
        else:
            self._end_value(token.end)

    def _skipped(self, token: Token) -> None:
        if token.kind in ("{", "["):
            self.skip += 1
        elif token.kind in ("}", "]"):
            self.skip -= 1
            if self.skip == 0:
                self.skip = -1
                self._end_value(token.end)

    def _pop(self, token: Token) -> None:
        frame = self.stack.pop()
        if self.each and len(frame.path) == 1:
            self._end_element(token.end)
        self._end_value(token.end)

    def _end_value(self, end: int) -> None:
        """A value ended; if it was the root, the rest of the region is trailing."""
        if not self.stack:
            if self.in_call and self.args_state == "none" and not self.each:
                if self.args_path is not None:
                    self._arguments("{}")  # a call object without arguments
                self.args_state = "done"
                self.stream.end_arguments()
            self.root_end = end

    def _break(self, at: int, why: str) -> None:
        """The structure cannot be read further at ``at``. Once the region committed a
        call, the current call ends where its arguments are and the rest of the region
        is content, verbatim (as the JSON families do: nothing is lost); before that,
        the region is content as a whole when it ends (:meth:`closing`)."""
        self.broken = True
        at = self._cut(at)
        if self.calls:
            self.start_trailing(at, f"after a break in the structure ({why})")
        else:
            # No call can come of the region any more: it is content from now on (the
            # region still ends at its closer; see closing).
            self.stream.release(self.end)
            self.trailing = True

    # -- the arguments --------------------------------------------------------------------------

    def _begin_arguments(self, token: Token) -> None:
        self.args_state = "open"
        if self.canonical:
            self.canon = Canonical(bare_keys=self.bare_keys)
            self._argument_token(token)
            return
        self.cursor = token.start
        self._drop_raw(token.start)
        self.depth = 0
        whole = self.tokens.whole(token) if token.kind in ("{", "[") else None
        if whole is not None:
            # Decoded once, here: the stream's check at the call's close takes the value.
            value, end = whole
            self._arguments(self._take_raw(end), value)
            self._arguments_done(end)
            return
        self._argument_token(token)

    def _argument_token(self, token: Token) -> None:
        if self.canon is not None:
            step = self.canon.token(token)
            self.canon_end = token.end
            if step.duplicate:
                self.stream.event(EventName.DUPLICATE_KEY, f"{step.duplicate!r} given again")
            if step.defect:
                self._defect(token.start, step.defect)
                return
            self._arguments(step.text)
            if step.done:
                self._arguments_done(token.end)
            return
        kind = token.kind
        if kind in ("{", "["):
            self.depth += 1
        elif kind in ("}", "]"):
            self.depth -= 1
        if self.depth <= 0:
            self._emit_raw(token.end)
            self._arguments_done(token.end)

    def _arguments_done(self, end: int) -> None:
        self.args_state = "done"
        self.canon = None
        if self.in_call:
            self._after_arguments()
        self._end_value(end)

    def _after_arguments(self) -> None:
        self.stream.end_arguments()

    def _defect(self, at: int, why: str) -> None:
        """A dialect value JSON cannot hold: the arguments stay as emitted, and the rest
        of the region is content (DESIGN §6, formats whose arguments are not JSON)."""
        self.args_state = "done"
        self.canon = None
        if not self.in_call:
            self._break(at, why)  # no call has these arguments: the region is content
            return
        self.stream.event(EventName.MALFORMED_ARGUMENTS, why)
        self.start_trailing(at, "after a defect")

    # -- raw argument text -----------------------------------------------------------------

    def _drop_raw(self, before: int) -> None:
        raw = self.raw
        while raw and raw[0][1] + len(raw[0][0]) <= before:
            raw.pop(0)
        # A piece that starts before it stays whole (the text is read from the cursor on:
        # a one-shot parse slices its arguments out of the region's text once).
        self.cursor = max(self.cursor, before)

    def _take_raw(self, end: int) -> str:
        raw = self.raw
        cursor = self.cursor
        parts: list[str] = []
        while raw and raw[0][1] < end:
            text, at = raw[0]
            skip = max(cursor - at, 0)
            if at + len(text) <= end:
                parts.append(text[skip:] if skip else text)
                raw.pop(0)
            else:
                parts.append(text[skip : end - at])
                break
        self.cursor = max(cursor, end)
        return "".join(parts)

    def _emit_raw(self, end: int) -> None:
        self._arguments(self._take_raw(end))

    def _flush_raw(self, *, final: bool) -> None:
        """Stream the raw argument text read so far, holding back whitespace at its end
        outside strings (not the value's if the value never closes); drop text that
        is read and no argument."""
        if self.canonical:
            return
        if self.args_state != "open":
            self._drop_raw(self.tokens.token_start)
            return
        limit = self.end if final else self.tokens.position
        if limit >= self.end:
            # Blanks at the end wait, inside a string too: if the closer comes next, the
            # value never closed and runs to it with its trailing blanks trimmed.
            limit = self.end - self.blank
        if limit > self.cursor:
            self._emit_raw(limit)


# -- xml-inline --------------------------------------------------------------------------------


class _Members(Body):
    """Arguments written as key/value members: canonical JSON, member by member."""

    def __init__(self, stream: HfStream, field: Field, name: str | None, start: int) -> None:
        super().__init__(stream, field, start)
        self.emitter = JsonEmitter()
        self.keys: set[str] = set()
        tool = stream.request.tool(name) if name else None
        self.types: ParameterTypes | None = parameter_types(tool)
        self.value_parser: Mapping[str, Any] | None = field.content_args.get("value_parser")
        self.python_literals = bool(field.content_args.get("python_literals", False))
        self.defective = False
        if name:
            self.commit(name, self.emitter.open())

    def member(self, key: str, raw: str, at: int) -> bool:
        """One member read; ``False`` when its value is a defect (the region's rest, from
        ``at``, is then content)."""
        if not self.member_key(key):
            return True
        return self.member_value(key, raw, at)

    def member_key(self, key: str) -> bool:
        """A member's key: emitted (``True``), or a repeated key whose member is dropped
        (``False``, recorded: the first is kept)."""
        if key in self.keys:
            self.stream.event(EventName.DUPLICATE_KEY, f"{key!r} given again; the first is kept")
            return False
        self.keys.add(key)
        self.stream.arguments(self.emitter.key(key))
        return True

    def member_value(self, key: str, raw: str, at: int) -> bool:
        """The value of the member whose key was emitted; ``False`` when it is a defect."""
        try:
            value = parse_value(raw, self.value_parser)
        except UnreadableValue as error:
            self.stream.event(EventName.MALFORMED_ARGUMENTS, f"the value of {key!r}: {error}")
            self.defective = True
            self.start_trailing(at, "after a value its parser cannot read")
            return False
        result = typed(value, key, self.types, python_literals=self.python_literals)
        if result.problem:
            self.stream.event(EventName.UNREPRESENTABLE_VALUE, f"{key!r}: {result.problem}")
        self.stream.arguments(self.emitter.value(result.value))
        return True

    def ignored(self, text: str) -> None:
        if text.strip(WHITESPACE):
            self.stream.event(EventName.IGNORED_TEXT, f"{text.strip()[:40]!r}")

    def wind_up(self, text: str, start: int, how: End, *, complete: bool) -> None:
        if self.in_call and not self.defective and complete:
            self.stream.arguments(self.emitter.close())
        self.closing(text, start, how, complete=complete)


class TagsBody(_Members):
    """``xml-inline`` with the name from the opener: one member per tag."""

    def __init__(
        self, stream: HfStream, field: Field, name: str | None, start: int, tags: Tags
    ) -> None:
        super().__init__(stream, field, name, start)
        self.tags = tags
        # Undecided text from `base`: a possible tag head, or (inside a value) what may
        # still be the start of the tag's tail; the value's earlier text is in `value`.
        self.buffer = ""
        self.base = start
        self.key: str | None = None
        self.tail: Delimiter | None = None
        self.value: list[str] = []
        self.value_start = start
        self.head_start = start
        self.repeated = False  # the open member repeats a key: its value is dropped

    def feed(self, text: str, start: int) -> None:
        self.held(text, start)
        if self.trailing or not self.in_call:
            return
        self.buffer += text
        self._scan(eos=False)

    def _scan(self, *, eos: bool) -> None:
        while not self.trailing:
            if self.key is None:
                found = self.tags.head.find(self.buffer, 0, eos=eos)
                if found is None or found.pending:
                    self._skip(len(self.buffer) if found is None else found.start)
                    return
                self._skip(found.start)
                self.head_start = self.base
                self.key = (found.groups or {}).get("key", "")
                self.tail = self.tags.tail_for(self.key)
                self._advance(found.end - found.start)
                self.value = []
                self.value_start = self.base
                # The key is emitted with its head (a repeated key's member is dropped).
                self.repeated = not self.member_key(self.key)
                self.decide(self.base)
                continue
            assert self.tail is not None
            found = self.tail.find(self.buffer, 0, eos=eos)
            if found is None or found.pending:
                cut = len(self.buffer) if found is None else found.start
                self.value.append(self.buffer[:cut])
                self._advance(cut)
                return
            raw = "".join(self.value) + self.buffer[: found.start]
            if not self.repeated and not self.member_value(self.key, raw, self.value_start):
                return
            self._advance(found.end)
            self.decide(self.base)
            self.key = None

    def _skip(self, end: int) -> None:
        """Text before a tag: no member (framing, ``ignored-text`` if not blank)."""
        if end > 0:
            self.ignored(self.buffer[:end])
            self._advance(end)
            self.decide(self.base)

    def _advance(self, size: int) -> None:
        self.buffer = self.buffer[size:]
        self.base += size

    def close(self, text: str, start: int, how: End) -> None:
        self.stream.hold(text, start)
        complete = True
        if not self.trailing and self.in_call:
            if how == "eos" and self.key is None and self.buffer:
                found = self.tags.head.find(self.buffer, 0)
                if found is not None and found.pending:
                    # Cut off inside a tag's head: what was emitted stands; the head's
                    # literal start, when whole, is framing (as GLM's own parser reads
                    # `<arg_key>` at the end); the rest of the head is content.
                    self._skip(found.start)
                    prefix = self.tags.head.prefix
                    if prefix and self.buffer.startswith(prefix):
                        self._advance(len(prefix))
                        self.decide(self.base)
                    self.stream.event(EventName.TRUNCATED, "the output ended inside a tag")
                    self.defective = True
                    self.start_trailing(self.base, "an unfinished tag")
                    self.wind_up(text, start, how, complete=False)
                    return
            self._scan(eos=True)
            if self.key is not None and not self.stopped():
                # A tag whose value never ended: the arguments stay as emitted (with the
                # key), and the value (never emitted) is content, verbatim.
                complete = False
                if how == "eos":
                    self.stream.event(EventName.TRUNCATED, "the output ended inside a value")
                else:
                    self.stream.event(
                        EventName.MALFORMED_ARGUMENTS, f"the value of {self.key!r} never ends"
                    )
                self.defective = True
                self.start_trailing(self.value_start, "an unfinished value")
        self.wind_up(text, start, how, complete=complete)


class LinesBody(_Members):
    """``kv-lines`` with the name from the opener: one member per line."""

    def __init__(self, stream: HfStream, field: Field, name: str | None, start: int) -> None:
        super().__init__(stream, field, name, start)
        args = field.content_args
        self.line_sep: str = args.get("line_sep", "\n")
        self.kv_sep: str = args.get("kv_sep", ":")
        self.strip = bool(args.get("strip", True))
        self.parts: list[str] = []  # the line so far, but for `carry`
        self.carry = ""  # the end of the line that may start a separator
        self.line_start = start

    def feed(self, text: str, start: int) -> None:
        self.held(text, start)
        if self.trailing or not self.in_call:
            return
        buffer = self.carry + text
        offset = start - len(self.carry)
        at = 0
        while not self.trailing:
            stop = buffer.find(self.line_sep, at)
            if stop < 0:
                break
            self._line("".join(self.parts) + buffer[at:stop], self.line_start)
            self.parts = []
            at = stop + len(self.line_sep)
            self.line_start = offset + at
            self.decide(self.line_start)
        if self.stopped():
            return
        keep = max(at, len(buffer) - len(self.line_sep) + 1)
        self.parts.append(buffer[at:keep])
        self.carry = buffer[keep:]

    def _line(self, raw: str, at: int) -> None:
        line = raw.strip() if self.strip else raw
        if not line or self.kv_sep not in line:
            self.ignored(line)
            return
        key, value = line.split(self.kv_sep, 1)
        if self.strip:
            key, value = key.strip(), value.strip()
        self.member(key, value, at)

    def close(self, text: str, start: int, how: End) -> None:
        self.stream.hold(text, start)
        if not self.trailing and self.in_call:
            self._line("".join(self.parts) + self.carry, self.line_start)
            self.parts, self.carry = [], ""
        self.wind_up(text, start, how, complete=True)


class TextBody(Body):
    """``text`` with the name from the opener: the arguments are the region's text,
    trimmed (``strip``), as the model wrote it."""

    def __init__(self, stream: HfStream, field: Field, name: str | None, start: int) -> None:
        super().__init__(stream, field, start)
        self.strip = field.strip
        self.started = not self.strip
        self.blank: list[str] = []
        if name:
            self.commit(name)

    def feed(self, text: str, start: int) -> None:
        self.held(text, start)
        if not self.in_call:
            return
        if not self.started:
            first = _NOT_BLANK.search(text)
            if first is None:
                return
            self.started = True
            text = text[first.start() :]
        body = "".join(self.blank) + text
        self.blank = []
        kept = body.rstrip(WHITESPACE) if self.strip else body
        if len(kept) < len(body):
            self.blank = [body[len(kept) :]]
        self.stream.arguments(kept)
        self.decide(self.end)

    def close(self, text: str, start: int, how: End) -> None:
        self.stream.hold(text, start)
        self.stream.end_arguments()
        self.closing(text, start, how, complete=True)


# -- whole --------------------------------------------------------------------------------------


class WholeBody(Body):
    """Any other shape: the region is read whole when it ends, as transformers reads it
    (content parser, then transform), and its calls are emitted then."""

    def __init__(
        self, stream: HfStream, field: Field, captures: Mapping[str, str], start: int
    ) -> None:
        super().__init__(stream, field, start)
        self.captures = dict(captures)
        self.parts: list[str] = []

    def feed(self, text: str, start: int) -> None:
        self.held(text, start)
        self.parts.append(text)

    def close(self, text: str, start: int, how: End) -> None:
        self.stream.hold(text, start)
        field = self.field
        calls: list[tuple[str, str]] = []
        try:
            value = parse_content(field.content, field.content_args, "".join(self.parts))
            calls = self._calls(value)
        except (UnreadableValue, KeyError, ValueError, TypeError) as error:
            self.stream.event(EventName.UNPARSED_MARKUP, f"the tool region: {error}", None)
        for name, arguments in calls:
            self.commit(name, arguments)
            self.stream.end_arguments()
            self.finish_call()
        self.closing(text, start, how, complete=True)

    def _calls(self, value: Any) -> list[tuple[str, str]]:
        field = self.field
        if field.transform is None:
            values = value
        elif field.transform_each:
            if not isinstance(value, list):
                msg = "transform_each needs a list"
                raise ValueError(msg)
            values = [apply(field.transform, {**self.captures, **item}) for item in value]
        else:
            values = apply(field.transform, {**self.captures, "content": value})
        out: list[tuple[str, str]] = []
        for item in values if isinstance(values, list) else [values]:
            function = item.get("function") if isinstance(item, Mapping) else None
            if not isinstance(function, Mapping):
                continue
            name = function.get("name")
            arguments = function.get("arguments")
            if not isinstance(name, str) or not name or arguments is None:
                continue
            if isinstance(arguments, Mapping) and field.content in ("xml-inline", "kv-lines"):
                types = parameter_types(self.stream.request.tool(name))
                python = bool(field.content_args.get("python_literals", False))
                arguments = {
                    k: typed(v, k, types, python_literals=python).value
                    for k, v in arguments.items()
                }
            text = (
                arguments
                if isinstance(arguments, str)
                else json.dumps(arguments, ensure_ascii=False)
            )
            out.append((name, text))
        return out
