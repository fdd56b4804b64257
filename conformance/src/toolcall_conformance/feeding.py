"""Feeding a parser step by step in tests, and looking at what each step released.

A family's tests ask what a stream releases, and when: :func:`feed_steps` feeds the steps
of an output one by one and keeps every step's deltas (``finish()``'s last), with the
parse they add up to; :func:`released` lists what one step's deltas carry, in order.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Delta, Parsed, Parser, assemble

__all__ = ["CALL", "feed_steps", "released"]

#: In :func:`released`: the first entry of a call (its index, id and name).
CALL = "call"


def feed_steps(parser: Parser, steps: Sequence[str]) -> tuple[list[list[Delta]], Parsed]:
    """Feed ``steps`` to a fresh stream: each step's deltas (``finish()``'s last), and the
    parse they add up to with the stream's events and framing."""
    stream = parser.stream()
    per_step = [stream.feed(step) for step in steps]
    per_step.append(stream.finish())
    every = [delta for step in per_step for delta in step]
    return per_step, assemble(every, events=stream.events, framing=stream.framing)


def released(deltas: Sequence[Delta]) -> list[tuple[str, str]]:
    """What ``deltas`` carry, in order: ``("content", text)``, ``("reasoning", text)``,
    ``(CALL, name)`` for a call's first entry (which must carry an id) and
    ``("arguments", text)``."""
    out: list[tuple[str, str]] = []
    for delta in deltas:
        if delta.reasoning:
            out.append(("reasoning", delta.reasoning))
        if delta.content:
            out.append(("content", delta.content))
        for entry in delta.tool_calls:
            if entry.name is not None:
                if not entry.id:
                    msg = f"the first entry of call {entry.index} carries no id"
                    raise AssertionError(msg)
                out.append((CALL, entry.name))
            if entry.arguments:
                out.append(("arguments", entry.arguments))
    return out
