"""Parsers made of data: an entry point naming a JSON resource, read by a plugin's hook.

A throwaway "reader" plugin makes a tag-format parser from ``{"format": "tag"}`` data; the
data distributions hold only a JSON file (a namespace package, no code).
"""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest
from plugin_dists import TAG_FORMAT, Site

from toolcall import PluginError, Registry
from toolcall.cli import main

READER = TAG_FORMAT + textwrap.dedent(
    """

    @hookimpl
    def toolcall_parsers():
        return []


    @hookimpl
    def toolcall_parser_from_data(name, data):
        if data.get("format") != "tag":
            return None
        if data.get("broken"):
            raise ValueError("the data says it is broken")
        return tag_parser(name)
    """
)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return Site(path)


def load(site: Site) -> Registry:
    return Registry.load({}, path=[str(site.path)])


def data_distribution(site: Site, distribution: str, names: dict[str, object]) -> str:
    """A distribution of JSON files only: one file per parser name."""
    package = site.module_name(distribution.replace("-", "_"))
    directory = site.path / package
    directory.mkdir()
    entries = {}
    for name, data in names.items():
        (directory / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
        entries[name] = f"{package}:{name}.json"
    site.add_distribution(distribution, entries, version="0.9")
    return package


def test_a_parser_made_of_data_is_served_and_listed(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.add_plugin("tc-reader", READER, ("_reader",))
    data_distribution(site, "tc-data-model", {"my_model": {"format": "tag"}})
    registry = load(site)
    assert registry.names() == ["my_model"]
    parser = registry.get("my_model")()
    parsed = parser.parse('hi <call>f {"a": 1}</call>')
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", '{"a": 1}')]
    [entry] = registry.entries()
    assert (entry.distribution, entry.version) == ("tc-data-model", "0.9")
    assert registry.claimed_names() == ["my_model"]
    assert main(["list"], registry=load(site)) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "my_model" in line)
    assert "tc-data-model" in row


def test_data_no_plugin_reads_fails_with_the_reason(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    data_distribution(site, "tc-data-alone", {"lonely": {"format": "tag"}})
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == []
    with pytest.raises(PluginError, match="no installed plugin reads the data"):
        registry.get("lonely")


def test_data_a_plugin_refuses_fails_with_its_error(site: Site) -> None:
    site.add_plugin("tc-reader", READER, ("_reader",))
    data_distribution(site, "tc-data-bad", {"bad": {"format": "tag", "broken": True}})
    registry = load(site)
    with pytest.raises(PluginError, match="the data says it is broken"):
        registry.get("bad")


def test_data_that_is_no_json_object_fails(site: Site) -> None:
    site.add_plugin("tc-reader", READER, ("_reader",))
    package = data_distribution(site, "tc-data-list", {"listy": {"format": "tag"}})
    (site.path / package / "listy.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(PluginError, match="not a JSON object"):
        load(site).get("listy")


def test_a_missing_data_file_fails(site: Site) -> None:
    site.add_plugin("tc-reader", READER, ("_reader",))
    package = data_distribution(site, "tc-data-gone", {"gone": {"format": "tag"}})
    (site.path / package / "gone.json").unlink()
    with pytest.raises(PluginError, match="cannot read the data"):
        load(site).get("gone")


def test_a_data_parser_and_a_code_parser_of_one_name_clash(site: Site) -> None:
    site.add_plugin("tc-reader", READER + "\nPARSERS = [tag_parser('twin')]\n", ("_reader",))
    data_distribution(site, "tc-data-twin", {"twin": {"format": "tag"}})
    site.add_plugin(
        "tc-code-twin",
        TAG_FORMAT + "\n@hookimpl\ndef toolcall_parsers():\n    return [tag_parser('twin')]\n",
        ("twin",),
    )
    with pytest.raises(PluginError, match="claimed by"):
        load(site).get("twin")
