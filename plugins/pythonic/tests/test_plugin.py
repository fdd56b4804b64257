"""The distribution registers both names through the ``toolcall`` entry-point group."""

from __future__ import annotations

from importlib.metadata import entry_points

from toolcall import StrictLevel
from toolcall.registry import Registry
from toolcall_pythonic import Olmo3Parser, PythonicParser


def test_both_names_point_at_the_plugin_module() -> None:
    ours = {ep.name: ep.value for ep in entry_points(group="toolcall") if ep.name in PARSERS}
    assert ours == dict.fromkeys(PARSERS, "toolcall_pythonic.plugin")


PARSERS = {"pythonic": PythonicParser, "olmo3": Olmo3Parser}


def test_the_registry_serves_both_from_this_distribution() -> None:
    registry = Registry.load()
    served = {entry.name: entry for entry in registry.entries() if entry.name in PARSERS}
    assert {name: entry.parser_class for name, entry in served.items()} == PARSERS
    assert {entry.distribution for entry in served.values()} == {"toolcall-pythonic"}


def test_what_each_parser_declares() -> None:
    assert PythonicParser.markers == ("<|python_tag|>",)
    assert Olmo3Parser.markers == ("<function_calls>", "</function_calls>")
    # vLLM 0.33's pythonic and olmo3 parsers leave the strict level at its default.
    assert PythonicParser.default_strict_level is StrictLevel.AUTO
    assert Olmo3Parser.default_strict_level is StrictLevel.AUTO
