"""The ``xlam`` name is served from the installed distribution, by the hf engine."""

from __future__ import annotations

from importlib.metadata import distribution

from toolcall import Registry


def test_the_name_comes_from_the_installed_distribution() -> None:
    entry = next(e for e in distribution("toolcall-xlam").entry_points if e.group == "toolcall")
    assert (entry.name, entry.value) == ("xlam", "toolcall_xlam:xlam.json")
    parser_class = Registry.load({}).get("xlam")
    assert parser_class.name == "xlam"
