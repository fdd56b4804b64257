"""A response template derived from a chat template, by comparing renderings.

The chat template says how the model writes a tool call: it renders an assistant
message's ``tool_calls`` into text. :func:`derive` renders probe conversations (one
call, two calls, zero, one and two arguments, each JSON type, text before a call, two
tools), takes the model's output as the rendered turn less the generation prompt, and
compares the outputs: what changes with the name is where the name goes, what changes
with the arguments is where and how they go, and what stays is markup. The template it
writes is then checked by parsing every probe's output with it: a probe whose calls do
not come back is a :class:`Refusal` naming that probe and the difference.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import regex

from toolcall_hf_response_template.probes import (
    ALPHA,
    BETA,
    REASON,
    TEXT,
    TOOLS,
    USER,
    VALUES,
    Call,
    Renderer,
    RenderError,
    chat_template_of_text,
    loads_or_text,
    read_chat_template,
)

__all__ = ["Derived", "Refusal", "chat_template_of_text", "derive", "read_chat_template"]

#: A tool name written before its arguments: no blank and no markup.
NAME_CLASS: Final = r"[^\s<>\[\]{}()\"',;=\\`|\uff5c]+"
_DECODER: Final = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class Derived:
    """The response template (the hf engine's format) and the renderings it came from."""

    template: dict[str, Any]
    encoding: str
    renderings: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "response_template": self.template,
            "summary": f"derived from the chat template ({self.encoding})",
            "notes": list(self.notes),
            "renderings": dict(self.renderings),
        }


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no template: the probe and the difference that could not be explained."""

    probe: str
    reason: str
    renderings: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"probe {self.probe!r}: {self.reason}"


class _Refused(Exception):
    def __init__(self, probe: str, reason: str) -> None:
        super().__init__(probe, reason)
        self.probe = probe
        self.reason = reason


def _args(**values: Any) -> dict[str, Any]:
    return dict(values)


ONE_ARG: Final = _args(k_first="probe value")
TWO_ARGS: Final = _args(k_first="probe value", k_second="second value")
#: The probes: name -> (content, calls).
CALL_PROBES: Final[Mapping[str, tuple[str | None, tuple[Call, ...]]]] = {
    "one call, no arguments": (None, (Call(ALPHA, {}, "a1b2c3d4e"),)),
    "one call, one argument": (None, (Call(ALPHA, ONE_ARG, "a1b2c3d4e"),)),
    "one call, two arguments": (None, (Call(ALPHA, TWO_ARGS, "a1b2c3d4e"),)),
    "the other tool": (None, (Call(BETA, ONE_ARG, "a1b2c3d4e"),)),
    **{
        f"one {kind} argument": (None, (Call(ALPHA, {f"k_{kind}": value}, "a1b2c3d4e"),))
        for kind, value in VALUES.items()
    },
    "text before a call": (TEXT, (Call(ALPHA, ONE_ARG, "a1b2c3d4e"),)),
}
TWO_CALLS: Final = "two calls"
TWO_CALL_PROBE: Final = (
    None,
    (Call(ALPHA, ONE_ARG, "a1b2c3d4e"), Call(BETA, ONE_ARG, "f5g6h7i8j")),
)


def derive(
    chat_template: str, special_tokens: Mapping[str, str] | None = None
) -> Derived | Refusal:
    """Derive the response template of ``chat_template`` (a Jinja chat template);
    ``special_tokens`` are the tokenizer's ``bos_token``, ``eos_token``... as
    transformers passes them to the template."""
    try:
        renderer = Renderer(chat_template, special_tokens)
    except RenderError as error:
        return Refusal("compile", str(error))
    failures: list[Refusal] = []
    for content, as_string in ((None, False), ("", False), (None, True), ("", True)):
        attempt = _Attempt(renderer, empty=content, as_string=as_string)
        try:
            return attempt.run()
        except _Refused as error:
            failures.append(Refusal(error.probe, error.reason, dict(attempt.renderings)))
    # The first way of passing the calls that rendered tells the most.
    for failure in failures:
        if not failure.reason.startswith("the template raised"):
            return failure
    return failures[0]


# -- the analysis ------------------------------------------------------------------------


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _after(out: str, rest: str) -> str:
    """``out`` after the text of ``rest`` (what the prompt writes beyond the turn's start,
    such as a generation prompt the turn writes with other blanks), blanks aside; ``out``
    whole when it does not start with that text."""
    i = 0
    for char in rest:
        if char.isspace():
            continue
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out) or out[i] != char:
            return out
        i += 1
    return out[i:]


def _spellings(whole: str, each: str, *, first: bool) -> list[str]:
    """The delimiters of a call with the wrapper of all calls (``whole``, as rendered;
    and without the blanks between, which templates write where models do not) and of
    a call alone (``each``): ``first`` for an opener (the wrapper before), else a closer."""
    if first and whole.endswith(each):
        compact = whole[: len(whole) - len(each)].strip() + each
    elif not first and whole.startswith(each):
        compact = each + whole[len(each) :].strip()
    else:
        compact = whole
    return list(dict.fromkeys((whole, compact, each)))


def _literal(text: str) -> str:
    """A pattern for ``text`` in which each run of blanks may be any run of blanks."""
    parts = regex.split(r"(\s+)", text)
    return "".join(r"\s*" if part.isspace() else regex.escape(part) for part in parts if part)


def _find_path(
    value: Any, wanted: Callable[[Any], bool], path: tuple[str, ...] = ()
) -> tuple[str, ...] | None:
    if wanted(value) and path:
        return path
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_path(item, wanted, (*path, str(key)))
            if found is not None:
                return found
    return None


def _json_values(text: str) -> list[tuple[int, int, Any]]:
    """Every JSON object or list in ``text`` that starts at a ``{`` or ``[``: (start,
    end, value), outermost first."""
    found: list[tuple[int, int, Any]] = []
    for i, char in enumerate(text):
        if char in "{[":
            try:
                value, end = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            found.append((i, end, value))
    return found


@dataclass(slots=True)
class _Attempt:
    renderer: Renderer
    empty: str | None
    as_string: bool
    renderings: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    prompt: str = ""
    end_of_turn: str = ""
    lead: str = ""

    # -- rendering -----------------------------------------------------------------------

    def _render(self, probe: str, messages: Sequence[Mapping[str, Any]], gen: bool) -> str:
        try:
            text = self.renderer.render(messages, add_generation_prompt=gen)
        except RenderError as error:
            raise _Refused(probe, f"the template raised: {error}") from None
        return text

    def output(
        self, probe: str, content: str | None, calls: Sequence[Call], reasoning: str | None = None
    ) -> str:
        """The model's output for one assistant turn: the rendered turn less the prompt
        (the conversation up to it with the generation prompt) and the end of turn."""
        user = self.renderer.user()
        turn = self.renderer.assistant(
            content, calls, as_string=self.as_string, reasoning=reasoning
        )
        full = self._render(probe, [user, turn], False)
        start = _common_prefix(self.prompt, full)
        rest, out = self.prompt[start:], full[start:]
        if USER in out:  # the turn renders the user's message otherwise when answered
            out = out[out.rfind(USER) + len(USER) :]
            rest = self.prompt[self.prompt.rfind(USER) + len(USER) :]
        out = _after(out, rest)
        if self.end_of_turn and out.endswith(self.end_of_turn):
            out = out[: len(out) - len(self.end_of_turn)]
        if self.lead.strip() and out.startswith(self.lead):
            # What every answer starts with (GLM's empty <think></think>): not the call's.
            out = out[len(self.lead) :]
        self.renderings[probe] = full
        self.outputs[probe] = out
        return out

    def run(self) -> Derived:
        user = [self.renderer.user()]
        self.prompt = self._render("prompt", user, True)
        self.renderings["prompt"] = self.prompt
        self.end_of_turn = ""
        text_out = self.output("text only", TEXT, ())
        at = text_out.find(TEXT)
        if at < 0:
            raise _Refused("text only", f"the answer {TEXT!r} is not in the rendered turn")
        self.end_of_turn = text_out[at + len(TEXT) :]
        self.lead = text_out[:at]
        self.outputs["text only"] = text_out[: at + len(TEXT)]
        anchor = self.anchor()
        thinking = self.thinking()
        if thinking is not None and anchor and thinking["open"] in anchor:
            anchor = anchor[: anchor.index(thinking["open"])]
        for probe, (content, calls) in CALL_PROBES.items():
            self.output(probe, self.empty if content is None else content, calls)
        try:
            self.output(TWO_CALLS, self.empty, TWO_CALL_PROBE[1])
        except _Refused as error:
            self.notes.append(f"two calls do not render ({error.reason}): one call per message")
        self.check_name()
        encoding, tool_calls = self.tool_calls()
        template: dict[str, Any] = {"version": 1}
        if anchor:
            template["start_anchor"] = anchor
        template["defaults"] = {"role": "assistant"}
        fields: dict[str, Any] = {}
        if thinking is not None:
            fields["thinking"] = thinking
        fields["tool_calls"] = tool_calls
        template["fields"] = fields
        self.verify(template)
        return Derived(template, encoding, dict(self.renderings), tuple(self.notes))

    def anchor(self) -> str:
        """The generation prompt: what the prompt adds to the conversation."""
        try:
            bare = self.renderer.render([self.renderer.user()], add_generation_prompt=False)
        except RenderError:
            return ""
        if self.prompt.startswith(bare) and len(self.prompt) > len(bare):
            return self.prompt[len(bare) :]
        # No generation prompt: the markup that ends the user's turn starts the answer.
        tail = self.prompt[self.prompt.rfind(USER) + len(USER) :] if USER in self.prompt else ""
        if not tail.strip():
            raise _Refused(
                "prompt",
                "the prompt ends with the user's text: nothing marks where the answer starts",
            )
        self.notes.append(
            "the generation prompt adds nothing: the start anchor is the end of the user's "
            f"turn {tail!r}"
        )
        return tail.lstrip()

    def thinking(self) -> dict[str, Any] | None:
        probe = "reasoning"
        try:
            out = self.output(probe, TEXT, (), reasoning=REASON)
        except _Refused:
            return None
        at, text_at = out.find(REASON), out.find(TEXT)
        if at < 0 or text_at < at:
            empty = regex.fullmatch(r"(<(\w+)>)(</\2>)|(\[(\w+)\])(\[/\5\])", self.lead.strip())
            if empty:
                # Every answer starts with an empty pair (GLM's <think></think>): reasoning.
                opener, closer = (empty[1], empty[3]) if empty[1] else (empty[4], empty[6])
                self.notes.append(f"every answer starts with {self.lead.strip()!r}: reasoning")
                return {"open": opener, "close": closer}
            self.notes.append("the template does not write reasoning_content: no thinking field")
            return None
        opener = out[:at].strip()
        closer = out[at + len(REASON) : text_at].strip()
        if not opener and self.prompt.rstrip().endswith(("<think>", "[THINK]")):
            opener = (
                self.prompt.rstrip()[-7:] if self.prompt.rstrip().endswith("<think>") else "[THINK]"
            )
        if not opener or not closer:
            self.notes.append(
                f"reasoning is written without markup ({out[:text_at]!r}): no thinking field"
            )
            return None
        return {"open": opener, "close": closer}

    def check_name(self) -> None:
        one = self.outputs["one call, one argument"]
        if one.count(ALPHA) != 1:
            raise _Refused(
                "one call, one argument", f"the name {ALPHA!r} is written {one.count(ALPHA)} times"
            )
        other = self.outputs["the other tool"]
        if other != one.replace(ALPHA, BETA):
            raise _Refused(
                "the other tool",
                "the rendering changes with the tool's name beyond where the name is written",
            )

    # -- the tool calls ------------------------------------------------------------------

    def tool_calls(self) -> tuple[str, dict[str, Any]]:
        probe = "one call, two arguments"
        out = self.outputs[probe]
        values = _json_values(out)
        for start, end, value in values:
            if isinstance(value, list) and value and isinstance(value[0], dict):
                paths = self._call_paths(value[0], TWO_ARGS)
                if paths is not None:
                    return "a JSON list of calls", self._json_list(out, start, end, paths)
            if isinstance(value, dict):
                paths = self._call_paths(value, TWO_ARGS)
                if paths is not None:
                    return "a JSON call object", self._json_object(out, start, end, paths)
        for _, _, value in values:
            listed = value if isinstance(value, list) else [value]
            if any(isinstance(v, dict) and ALPHA in v for v in listed):
                raise _Refused(
                    probe,
                    "the name is a key of a JSON object (a transform reads a name at a path, "
                    "not a key)",
                )
        name_at = out.index(ALPHA)
        for start, end, value in values:
            if value == TWO_ARGS and start >= name_at + len(ALPHA):
                return "a name, then JSON arguments", self._name_then_json(out, start, end)
        if regex.search(regex.escape(ALPHA) + r"\(\s*k_first\s*=", out):
            raise _Refused(
                probe,
                f"a Python call ({ALPHA}(k_first=...)): no content kind reads keyword arguments",
            )
        if self.as_string:
            raise _Refused(
                probe, "the arguments, passed as a JSON string, are neither JSON nor tags"
            )
        return "per-parameter tags", self._tags()

    @staticmethod
    def _call_paths(value: dict[str, Any], arguments: Mapping[str, Any]) -> tuple[str, str] | None:
        name = _find_path(value, lambda v: v == ALPHA)
        args = _find_path(value, lambda v: v == arguments)
        if name is None or args is None:
            return None
        return ".".join(name), ".".join(args)

    @staticmethod
    def _transform(name: str, arguments: str) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "arguments": arguments}}

    def _units(self) -> tuple[str, str, str]:
        """Split the markup around one call into what wraps all the calls and what each
        call repeats, by the two-call rendering: (wrapper's opener, each call's
        opener text before the name, wrapper's closer)."""
        one = self.outputs["one call, one argument"]
        at = one.index(ALPHA)
        before_name, after_name = one[:at], one[at + len(ALPHA) :]
        two = self.outputs.get(TWO_CALLS)
        if two is None:
            return "", before_name, ""
        if two.count(ALPHA) != 1 or two.count(BETA) != 1 or two.index(ALPHA) > two.index(BETA):
            raise _Refused(TWO_CALLS, "the two names are not written once each, in order")
        first = two.index(ALPHA)
        second = two.index(BETA)
        if two[:first] != before_name:
            raise _Refused(
                TWO_CALLS,
                f"the text before the first call {two[:first]!r} differs from one call's "
                f"{before_name!r}",
            )
        if two[second + len(BETA) :] != after_name:
            raise _Refused(TWO_CALLS, "the text after the last call differs from one call's")
        between = two[first + len(ALPHA) : second]
        longest = _common_suffix(between, before_name)
        # The longest repeat may take the end of the closer with it where the closer and
        # the opener end alike (DeepSeek's "call end" and "calls begin" markers both end in
        # a bar and ">"): a call's opener starts as the first call's markup does, if a
        # split allows it.
        lead = before_name.lstrip()[:1]
        for each in [
            *(n for n in range(longest, 0, -1) if before_name[-n:].lstrip()[:1] == lead),
            longest,
        ]:
            rest = between[: len(between) - each]
            kept = _common_prefix(rest, after_name)
            if not rest[kept:].strip():
                break
        if rest[kept:].strip():
            raise _Refused(
                TWO_CALLS,
                f"the text between two calls {rest[kept:]!r} is neither a call's markup nor blank",
            )
        return (
            before_name[: len(before_name) - each],
            before_name[len(before_name) - each :],
            after_name[kept:],
        )

    def _json_object(
        self, out: str, start: int, end: int, paths: tuple[str, str]
    ) -> dict[str, Any]:
        name_at = out.index(ALPHA)
        _, each_open, wrapper_close = self._units()
        inside = name_at - start  # the object's text before the name
        if len(each_open) < inside:
            raise _Refused(
                TWO_CALLS, "a call's repeated markup does not hold its whole JSON object"
            )
        opener = each_open[: len(each_open) - inside]
        tail = out[end:]
        if wrapper_close and not tail.endswith(wrapper_close):
            raise _Refused(TWO_CALLS, "the closer of all calls is not at the end of one call")
        closer = tail[: len(tail) - len(wrapper_close)].strip()
        field_: dict[str, Any] = {}
        self._delimiters(field_, out[:start].strip(), opener.strip(), tail.strip(), closer, "{")
        if not closer and opener.strip() and TWO_CALLS in self.outputs:
            # No closer of its own: a call ends where the next one opens.
            ahead = "(?=" + regex.escape(opener.strip()) + ")"
            last = field_.pop("close", None)
            field_["close_pattern"] = regex.escape(last) + "|" + ahead if last else ahead
        field_.update(
            content="json",
            repeats=True,
            transform=self._transform(f"{{content.{paths[0]}}}", f"{{content.{paths[1]}}}"),
        )
        return field_

    def _json_list(self, out: str, start: int, end: int, paths: tuple[str, str]) -> dict[str, Any]:
        two = self.outputs.get(TWO_CALLS)
        if two is not None:
            in_one = [v for s, e, v in _json_values(two) if isinstance(v, list) and len(v) == 2]
            if not in_one:
                raise _Refused(TWO_CALLS, "the two calls are not one JSON list")
        field_: dict[str, Any] = {}
        self._delimiters(field_, out[:start].strip(), "", out[end:].strip(), "", "[")
        field_.update(
            content="json",
            transform=self._transform(f"{{{paths[0]}}}", f"{{{paths[1]}}}"),
            transform_each=True,
        )
        return field_

    @staticmethod
    def _delimiters(  # noqa: PLR0917 - the four texts a region's delimiters come from
        field_: dict[str, Any],
        whole_open: str,
        opener: str,
        whole_close: str,
        closer: str,
        body: str,
    ) -> None:
        """The opener and closer: each call's own, and, where the calls have a wrapper,
        the text the first call opens with and the last one closes with (verbatim)."""
        if not whole_open:
            # No markup: a call is a JSON value at the start of the output.
            field_["open_pattern"] = r"^\s*(?=" + regex.escape(body) + ")"
        elif opener and opener != whole_open:
            field_["open"] = _spellings(whole_open, opener, first=True)
        else:
            field_["open"] = whole_open
        if closer and whole_close != closer:
            field_["close"] = _spellings(whole_close, closer, first=False)
        elif whole_close:
            field_["close"] = whole_close

    def _name_then_json(self, out: str, start: int, end: int) -> dict[str, Any]:
        name_at = out.index(ALPHA)
        wrapper_open, each_open, wrapper_close = self._units()
        between = out[name_at + len(ALPHA) : start]
        tail = out[end:]
        if wrapper_close and not tail.endswith(wrapper_close):
            raise _Refused(TWO_CALLS, "the closer of all calls is not at the end of one call")
        closer = tail[: len(tail) - len(wrapper_close)].strip()
        each = each_open.strip()
        if not each:
            raise _Refused("one call, two arguments", "nothing marks where a call's name starts")
        head = _literal(each)
        if wrapper_open.strip():
            head = "(?:" + _literal(wrapper_open.strip()) + r")?\s*" + head
        name = f"(?P<name>{NAME_CLASS}?)"
        if between.strip():
            pattern = head + name + r"\s*" + _literal(between.strip())
        else:
            pattern = head + name + r"(?=\s*[\{\[])"
        field_: dict[str, Any] = {"open_pattern": pattern}
        if closer:
            field_["close"] = (
                _spellings(tail.strip(), closer, first=False) if wrapper_close.strip() else closer
            )
        else:
            ahead = "(?=" + regex.escape(each) + ")"
            field_["close_pattern"] = (
                (regex.escape(wrapper_close.strip()) + "|" + ahead)
                if wrapper_close.strip()
                else ahead
            )
        field_.update(
            content="json", repeats=True, transform=self._transform("{name}", "{content}")
        )
        return field_

    def _tags(self) -> dict[str, Any]:
        zero = self.outputs["one call, no arguments"]
        one = self.outputs["one call, one argument"]
        two = self.outputs["one call, two arguments"]
        probe = "one call, two arguments"
        if zero.count(ALPHA) != 1:
            raise _Refused("one call, no arguments", f"the name {ALPHA!r} is not written once")
        name_end = one.index(ALPHA) + len(ALPHA)
        k1, v1 = one.find("k_first", name_end), one.find("probe value", name_end)
        if k1 < 0 or v1 < k1:
            raise _Refused(
                "one call, one argument",
                "the arguments are neither JSON nor a key followed by its value",
            )
        k2 = two.find("k_second", name_end)
        v2 = two.find("second value", k2)
        if k2 < 0 or v2 < 0:
            raise _Refused(probe, "the second argument's key and value are not found in order")
        head = one[name_end:k1]  # the rest of the call's header, then a tag's start
        key_value = one[k1 + len("k_first") : v1]
        if two[k2 + len("k_second") : v2] != key_value:
            raise _Refused(probe, "the two arguments' tags differ between key and value")
        between = two[v1 + len("probe value") : k2]  # a tag's end, then the next tag's start
        after = two[v2 + len("second value") :]  # a tag's end, then the call's end
        empty = zero[zero.index(ALPHA) + len(ALPHA) :]  # the header's rest, then the call's end
        tag_open_len = _common_suffix(between, head)
        header = head[: len(head) - tag_open_len]
        if not empty.startswith(header):
            raise _Refused(
                "one call, no arguments",
                f"the call's header {header!r} is not in the call without arguments",
            )
        footer = empty[len(header) :]
        if not after.endswith(footer) or len(after) - len(footer) > len(between) - tag_open_len:
            raise _Refused(
                probe, f"the end of the call {footer!r} does not follow the last argument"
            )
        tag_close = after[: len(after) - len(footer)]
        if not between.startswith(tag_close):
            raise _Refused(probe, "the text between two arguments does not start with a tag's end")
        tag_open = head[len(header) :]
        # One markup can be read two ways where a tag's start begins as the header's end
        # does: move the shared characters to the header so that a tag starts at its markup.
        shift = 0
        limit = min(len(tag_open), _common_prefix(tag_open, footer))
        while shift < limit and (tag_open[shift].isspace() or tag_open[shift] in ">]}|"):
            shift += 1
        if shift and shift <= limit:
            header += tag_open[:shift]
            tag_close += tag_open[:shift]
            footer = footer[shift:]
            tag_open = tag_open[shift:]
        if not tag_open.strip() or not tag_close.strip():
            raise _Refused(probe, "an argument's key or value is not between markup")
        value_open = _literal(key_value.rstrip()) + (r"\n?" if key_value.endswith("\n") else "")
        value_close = (r"\n?" if tag_close.startswith("\n") else "") + _literal(tag_close.strip())
        tag_pattern = (
            _literal(tag_open.strip())
            + "(?P<key>.*?)"
            + value_open
            + "(?P<value>.*?)"
            + value_close
        )
        wrapper_open, each_open, wrapper_close = self._units()
        close = footer.strip()
        if wrapper_close:
            if not close.endswith(wrapper_close.strip()):
                raise _Refused(TWO_CALLS, "the closer of all calls is not at the end of one call")
            close = close[: len(close) - len(wrapper_close.strip())].strip()
        if not each_open.strip() or not close:
            raise _Refused(probe, "a call with tags has no markup before its name or after it")
        head_pattern = _literal(each_open.strip())
        if wrapper_open.strip():
            head_pattern = "(?:" + _literal(wrapper_open.strip()) + r")?\s*" + head_pattern
        ahead = (
            r"(?=\s*"
            + regex.escape(tag_open.strip())
            + r"|\s*"
            + regex.escape(close.split()[0] if close.split() else close)
            + ")"
        )
        open_pattern = (
            head_pattern
            + f"(?P<name>{NAME_CLASS})"
            + (_literal(header.strip()) if header.strip() else ahead)
        )
        close_pattern = _literal(close) + (
            r"(?:\s*" + _literal(wrapper_close.strip()) + ")?" if wrapper_close.strip() else ""
        )
        content_args: dict[str, Any] = {"tag_pattern": tag_pattern}
        # A raw value written with Jinja's |string (Qwen3-Coder): Python's True, not true.
        boolean = regex.search(tag_pattern, self.outputs.get("one boolean argument", ""))
        if boolean is not None and boolean.group("value").strip() == "True":
            content_args["python_literals"] = True
        return {
            "open_pattern": open_pattern,
            "close_pattern": close_pattern,
            "content": "xml-inline",
            "repeats": True,
            "content_args": content_args,
            "transform": self._transform("{name}", "{content}"),
        }

    # -- the check -----------------------------------------------------------------------

    def verify(self, template: dict[str, Any]) -> None:
        """Every probe's output, parsed with ``template``, gives the probe's calls."""
        from toolcall import ParserContext, Request  # noqa: PLC0415
        from toolcall_hf_response_template.parser import template_parser  # noqa: PLC0415
        from toolcall_hf_response_template.template import TemplateError  # noqa: PLC0415

        try:
            parser_class = template_parser("derived", {"response_template": template})
        except TemplateError as error:
            raise _Refused("template", f"the derived template is refused: {error}") from None
        context = ParserContext(
            request=Request.from_openai({"tools": [dict(t) for t in TOOLS]}), prompt=self.prompt
        )
        probes = dict(CALL_PROBES)
        if TWO_CALLS in self.outputs:
            probes[TWO_CALLS] = TWO_CALL_PROBE
        for probe, (content, calls) in probes.items():
            message = parser_class(context).parse(self.outputs[probe]).to_openai()
            got = [
                (c["function"]["name"], loads_or_text(c["function"]["arguments"]))
                for c in message.get("tool_calls") or []
            ]
            want = [(c.name, dict(c.arguments)) for c in calls]
            if got != want:
                kind = probe.removeprefix("one ").removesuffix(" argument")
                key = f"k_{kind}"
                if (
                    kind in VALUES
                    and kind != "string"
                    and len(got) == 1
                    and got[0][0] == ALPHA
                    and isinstance(got[0][1], dict)
                    and list(got[0][1]) == [key]
                    and isinstance(got[0][1][key], str)
                ):
                    # The template writes the value so (Python's True): a model trained on
                    # it writes it so too, and the schema's typing decides what it reads.
                    self.notes.append(f"a {kind} value comes back as {got[0][1]!r}")
                    continue
                raise _Refused(
                    probe, f"the derived template reads {got!r} where the probe wrote {want!r}"
                )
            text = (message.get("content") or "").strip()
            if content and content not in self.outputs[probe]:
                self.notes.append(f"probe {probe!r}: the template drops the text before a call")
            elif text != (content or ""):
                raise _Refused(
                    probe,
                    f"the derived template reads content {text!r} where the probe wrote "
                    f"{content!r}",
                )
