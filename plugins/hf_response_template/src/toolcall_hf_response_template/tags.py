"""An ``xml-inline`` template's ``tag_pattern`` split around its value: a fact of the
template, which the body reader (:mod:`.bodies`) reads arguments by and the grammar
(:mod:`.grammar`) writes them by."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import regex

from toolcall_hf_response_template.patterns import Delimiter, group_span, linear_time_problem

__all__ = ["Tags"]


@dataclass(frozen=True, slots=True)
class Tags:
    """A ``tag_pattern`` split around its value: ``head`` (up to the value, with the
    ``key`` group) and ``tail`` (after it); the value is the shortest text before the
    tail, as a lazy ``(?P<value>.*?)`` reads it. ``tail`` may name the key with
    ``(?P=key)``."""

    head: Delimiter
    tail: str
    value_parser: Mapping[str, Any] | None

    @classmethod
    def split(cls, args: Mapping[str, Any]) -> Tags | None:
        pattern = args["tag_pattern"]
        value = group_span(pattern, "value")
        key = group_span(pattern, "key")
        if value is None or key is None or key[1] > value[0]:
            return None
        body = pattern[value[0] + len("(?P<value>") : value[1] - 1]
        if body not in (".*?", r"[\s\S]*?", r"(?s:.)*?", r"[\S\s]*?"):
            return None
        head = pattern[: value[0]]
        tail = pattern[value[1] :]
        if not tail or linear_time_problem(head) is not None:
            return None
        if linear_time_problem(tail.replace("(?P=key)", "k")) is not None:
            return None
        return cls(_tail(head), tail, args.get("value_parser"))

    def tail_for(self, key: str) -> Delimiter:
        if "(?P=key)" not in self.tail:
            return _tail(self.tail)
        return _tail(self.tail.replace("(?P=key)", regex.escape(key)))


@functools.lru_cache(maxsize=1024)
def _tail(pattern: str) -> Delimiter:
    """A tag's head or tail as a delimiter (built once per pattern: building one reads it)."""
    return Delimiter(pattern=pattern)
