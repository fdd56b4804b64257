"""Both names are served from the installed distribution, by the hf engine, with the
template shipped in it: one JSON file behind two entry points."""

from __future__ import annotations

import json
from importlib import metadata, resources

import pytest

from toolcall import Registry
from toolcall.cli import main

NAMES = ("qwen3_coder", "qwen3_xml")
SHIPPED = json.loads(
    resources.files("toolcall_qwen").joinpath("qwen3_coder.json").read_text(encoding="utf-8")
)
ENGINE = json.loads(
    resources.files("toolcall_hf_response_template")
    .joinpath("templates/qwen3_coder.json")
    .read_text(encoding="utf-8")
)


def test_the_entry_points_name_one_json_file() -> None:
    entries = {
        entry.name: entry.value
        for entry in metadata.distribution("toolcall-qwen").entry_points
        if entry.group == "toolcall"
    }
    assert entries == dict.fromkeys(NAMES, "toolcall_qwen:qwen3_coder.json")


@pytest.mark.parametrize("name", NAMES)
def test_the_name_is_served_from_the_distribution(name: str) -> None:
    parser_class = Registry.load({}).get(name)
    assert parser_class.name == name
    parsed = parser_class().parse(
        "Creating it.\n\n<tool_call>\n<function=run_shell_command>\n<parameter=command>\n"
        "mkdir testing\n</parameter>\n</function>\n</tool_call>"
    )
    assert parsed.content == "Creating it."
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("run_shell_command", {"command": "mkdir testing"})
    ]


def test_the_alias_reads_the_same_template() -> None:
    registry = Registry.load({})
    coder, xml = (registry.get(name)().template for name in NAMES)
    assert coder == xml
    assert coder.tools is not None


def test_the_second_name_is_an_alias_of_the_first() -> None:
    # One parser under two names: checked, benchmarked and served once (the kit's alias).
    registry = Registry.load({})
    coder, xml = (registry.get(name) for name in NAMES)
    assert issubclass(xml, coder)
    assert xml.corpus == "qwen3_coder"
    assert xml.name == "qwen3_xml"


def test_the_template_starts_from_the_engines_own() -> None:
    # A copy, not a reference to the engine's file: the family owns its format.
    assert SHIPPED["response_template"] == ENGINE
    assert SHIPPED["summary"]


def test_toolcall_list_shows_both_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"], registry=Registry.load({})) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        row = next(line for line in out.splitlines() if line.startswith(name))
        assert "toolcall-qwen" in row
