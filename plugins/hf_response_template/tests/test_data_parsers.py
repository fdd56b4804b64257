"""A parser made of a template alone: a distribution ships JSON and an entry point, no code.

The distribution is written here as an installed one is laid out (a ``dist-info`` with
``entry_points.txt``, and a directory holding the JSON: a namespace package without code);
the registry reads it and this plugin's ``toolcall_parser_from_data`` makes the parser.
"""

from __future__ import annotations

import json
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from toolcall import PluginError, Registry
from toolcall.cli import main

GLM: dict[str, Any] = json.loads(
    resources.files("toolcall_hf_response_template")
    .joinpath("templates/glm.json")
    .read_text(encoding="utf-8")
)


def install(site: Path, distribution: str, files: dict[str, Any]) -> None:
    """Lay out ``distribution``: a package of JSON files and its entry points."""
    package = f"{distribution.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    (site / package).mkdir()
    entries = []
    for name, data in files.items():
        (site / package / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
        entries.append(f"{name} = {package}:{name}.json")
    info = site / f"{distribution.replace('-', '_')}-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.2\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[toolcall]\n" + "\n".join(entries) + "\n", "utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_template_alone_makes_a_named_parser(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(
        site,
        "my-glm-templates",
        {"my_glm": {"response_template": GLM, "summary": "My GLM fine-tune (template only)"}},
    )
    registry = Registry.load({})
    parser_class = registry.get("my_glm")
    assert parser_class.name == "my_glm"
    parsed = parser_class().parse(
        "<think>Look it up.</think><tool_call>get_weather<arg_key>city</arg_key>"
        "<arg_value>Paris</arg_value></tool_call>"
    )
    assert parsed.reasoning == "Look it up."
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert main(["list"], registry=Registry.load({})) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("my_glm"))
    assert "my-glm-templates" in row
    assert "1.2" in row


def test_the_template_itself_is_enough(site: Path) -> None:
    install(site, "bare-template", {"bare_glm": GLM})
    assert Registry.load({}).get("bare_glm")().template.tools is not None


def test_a_template_that_cannot_be_served_fails_with_field_and_reason(site: Path) -> None:
    broken = {**GLM, "fields": {**GLM["fields"], "tool_calls": {"open": "<a>", "content": "int"}}}
    install(site, "broken-template", {"broken_glm": {"response_template": broken}})
    with pytest.raises(PluginError, match=r"fields\.tool_calls\.content.*never be an object"):
        Registry.load({}).get("broken_glm")
