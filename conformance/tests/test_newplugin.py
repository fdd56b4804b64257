"""``toolcall new-plugin NAME``: the example package under a new name, which passes the kit.

(The conformance session also follows docs/writing-a-parser.md: it runs the command, installs
the package it writes and runs that package's tests.)"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolcall.cli import main
from toolcall.parser import Parser
from toolcall_conformance.cases import load_cases
from toolcall_conformance.checks import Resources, run_case
from toolcall_conformance.fuzz import check_stream_api, search, seeds_from_cases
from toolcall_conformance.newplugin import NewPluginError, names_for, template_dir, write_plugin

TEMPLATE_WORDS = ("example_tags", "example-tags", "ExampleTags")


@pytest.fixture
def written(tmp_path: Path) -> Path:
    return write_plugin("demo_xml", tmp_path)


def test_the_package_is_the_example_under_the_new_name(written: Path) -> None:
    assert written.name == "toolcall-demo-xml"
    files = {p.relative_to(written).as_posix() for p in written.rglob("*") if p.is_file()}
    template = {p.relative_to(template_dir()).as_posix() for p in template_dir().rglob("*")}
    renamed = {name.replace("toolcall_example_tags", "toolcall_demo_xml") for name in template}
    assert files <= renamed
    assert {
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "src/toolcall_demo_xml/__init__.py",
        "src/toolcall_demo_xml/parser.py",
        "src/toolcall_demo_xml/plugin.py",
        "src/toolcall_demo_xml/py.typed",
        "tests/test_conformance.py",
    } <= files
    assert not [name for name in files if "__pycache__" in name]
    for path in written.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not [word for word in TEMPLATE_WORDS if word in text], path
    project = tomllib.loads((written / "pyproject.toml").read_text())["project"]
    assert project["name"] == "toolcall-demo-xml"
    assert project["entry-points"]["toolcall"] == {"demo_xml": "toolcall_demo_xml.plugin"}
    # This project's authors and URLs are not the new package's.
    assert "authors" not in project
    assert "urls" not in project
    assert 'name = "demo_xml"' in (written / "src/toolcall_demo_xml/parser.py").read_text()
    assert (
        "class DemoXmlParser(Parser):" in (written / "src/toolcall_demo_xml/parser.py").read_text()
    )


@pytest.fixture
def demo_parser(written: Path) -> Iterator[type[Parser]]:
    sys.path.insert(0, str(written / "src"))
    try:
        from toolcall_demo_xml import DemoXmlParser  # type: ignore[import-not-found]

        yield DemoXmlParser
    finally:
        sys.path.remove(str(written / "src"))
        for module in [m for m in sys.modules if m.startswith("toolcall_demo_xml")]:
            del sys.modules[module]


def test_the_written_parser_passes_its_cases(written: Path, demo_parser: type[Parser]) -> None:
    cases, errors = load_cases([written / "tests" / "cases"])
    assert errors == []
    assert len(cases) == 8
    assert {case.parser for case in cases} == {"demo_xml"}
    assert all(case.id.startswith("demo_xml/") for case in cases)
    resources = Resources()
    results = [result for case in cases for result in run_case(demo_parser, case, resources)]
    assert [str(r) for r in results if r.failed] == []
    assert sum(r.passed for r in results) >= 8 * 4


def test_the_written_parser_keeps_the_properties_on_any_output(
    written: Path, demo_parser: type[Parser]
) -> None:
    # What the package's ConformanceSuite runs as test_stream_api and test_fuzz.
    cases, _ = load_cases([written / "tests" / "cases"])
    assert check_stream_api(demo_parser()) == []
    searched = search(seeds_from_cases(demo_parser, cases), demo_parser.markers, examples=30)
    assert searched.finding is None, str(searched.finding)
    assert searched.examples >= 1


def test_names_for_a_parser() -> None:
    assert names_for("my_format") == {
        "toolcall_example_tags": "toolcall_my_format",
        "toolcall-example-tags": "toolcall-my-format",
        "example_tags": "my_format",
        "ExampleTags": "MyFormat",
    }


@pytest.mark.parametrize("name", ["My_Format", "2fast", "with-dash", "", "a b"])
def test_a_name_must_be_a_parser_and_import_name(name: str, tmp_path: Path) -> None:
    with pytest.raises(NewPluginError, match="is not a parser name"):
        write_plugin(name, tmp_path)


def test_an_installed_name_or_an_existing_folder_is_refused(written: Path) -> None:
    with pytest.raises(NewPluginError, match="'example_tags' is already the name of an installed"):
        write_plugin("example_tags", written.parent)
    with pytest.raises(NewPluginError, match="toolcall-demo-xml exists"):
        write_plugin("demo_xml", written.parent)


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-plugin", "cli_demo", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    target = tmp_path / "toolcall-cli-demo"
    assert out.startswith(f"wrote {target} (")
    assert f'pip install -e "{target}[test]"' in out
    assert f"pytest {target / 'tests'}" in out
    assert (target / "pyproject.toml").is_file()
    assert main(["new-plugin", "cli_demo", "--dir", str(tmp_path)]) == 1
    assert "exists: remove it or choose another --dir" in capsys.readouterr().err
