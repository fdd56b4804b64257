"""The regex helpers of ``toolcall.tags``, read with Python's ``re`` (the patterns use only
the syntax xgrammar's regex shares with it)."""

from __future__ import annotations

import re

import pytest

from toolcall.tags import leaving

MARKER = "<|python_tag|>"


@pytest.mark.parametrize("text", ["<b", "<|x", "<|python_ta>", "<|python_tag|x", "<|p "])
def test_text_that_departs_from_the_marker_is_matched(text: str) -> None:
    assert re.fullmatch(leaving(MARKER), text)


@pytest.mark.parametrize("text", [MARKER, "<|python", "<", "<<", "<|python_tag<", "b"])
def test_the_marker_its_prefixes_and_a_new_marker_start_are_not(text: str) -> None:
    # No match may end inside the marker or run through it, nor depart by a "<".
    assert not re.fullmatch(leaving(MARKER), text)
    assert not any(re.fullmatch(leaving(MARKER), MARKER[:n]) for n in range(len(MARKER) + 1))


def test_special_characters_are_escaped() -> None:
    assert re.fullmatch(leaving("[a]"), "[b")
    assert not re.fullmatch(leaving("[a]"), "b")
    assert re.fullmatch(leaving("^-]"), "^-x")
