"""Every distribution follows the packaging conventions (docs/writing-a-parser.md,
"Publishing"): what PyPI shows, where the version comes from, which hatchling builds it,
how it pins our own distributions. Data-driven: a new plugin under plugins/ is checked too."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import noxfile

ROOT = Path(noxfile.__file__).parent
ROOT_PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
REPOSITORY = ROOT_PYPROJECT["tool"]["toolcall"]["repository"]
DISTRIBUTIONS = {path.relative_to(ROOT).as_posix(): path for path in noxfile.ALL_DISTRIBUTIONS}
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)")


def _pyproject(path: Path) -> dict[str, Any]:
    return tomllib.loads((path / "pyproject.toml").read_text())


def _version(path: Path) -> str:
    init = path / "src" / noxfile._import_name(path) / "__init__.py"
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and [
            t.id for t in node.targets if isinstance(t, ast.Name)
        ] == ["__version__"]:
            assert isinstance(node.value, ast.Constant)
            return str(node.value.value)
    pytest.fail(f"{init} sets no __version__")


OURS = {_pyproject(path)["project"]["name"]: path for path in DISTRIBUTIONS.values()}


def test_every_plugin_is_a_distribution_of_the_table() -> None:
    plugins = {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("plugins/*/pyproject.toml")}
    assert plugins <= set(DISTRIBUTIONS)
    assert {"core", "conformance", "conformance/replay"} <= set(DISTRIBUTIONS)


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_built_by_the_hatchling_floor(folder: str) -> None:
    build = _pyproject(DISTRIBUTIONS[folder])["build-system"]
    assert build == {
        "requires": [f"hatchling>={noxfile.HATCHLING_FLOOR}"],
        "build-backend": "hatchling.build",
    }


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_one_source_for_the_version(folder: str) -> None:
    path = DISTRIBUTIONS[folder]
    data = _pyproject(path)
    assert "version" not in data["project"]
    assert data["project"]["dynamic"] == ["version"]
    module = noxfile._import_name(path)
    assert data["tool"]["hatch"]["version"] == {"path": f"src/{module}/__init__.py"}
    Version(_version(path))  # a valid version


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_what_pypi_shows(folder: str) -> None:
    path = DISTRIBUTIONS[folder]
    project = _pyproject(path)["project"]
    assert project["requires-python"] == ">=3.11"
    assert project["readme"] == "README.md"
    assert project["description"]
    assert project["authors"]
    assert project["keywords"]
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert (path / "src" / noxfile._import_name(path) / "py.typed").is_file()
    # PEP 639: the licence is an SPDX expression, its text a file; no licence classifier.
    assert project["license"].startswith("Apache-2.0")
    assert "LICENSE" in project["license-files"]
    assert (path / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert not [c for c in classifiers if c.startswith("Private ::")]
    urls = project["urls"]
    assert urls["Homepage"] == REPOSITORY
    assert urls["Source"] == f"{REPOSITORY}/tree/main/{folder}"
    assert urls["Documentation"] == f"{REPOSITORY}/tree/main/{folder}#readme"
    assert urls["Changelog"] == f"{REPOSITORY}/blob/main/{folder}/CHANGELOG.md"
    assert urls["Issues"] == f"{REPOSITORY}/issues"


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_readme_links_work_on_pypi(folder: str) -> None:
    readme = (DISTRIBUTIONS[folder] / "README.md").read_text()
    relative = [
        target
        for target in _LINK.findall(readme)
        if not target.startswith(("https://", "http://", "#", "mailto:"))
    ]
    assert relative == [], "PyPI shows the README alone: links must be absolute URLs"


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_a_changelog_entry_for_the_version(folder: str) -> None:
    path = DISTRIBUTIONS[folder]
    changelog = (path / "CHANGELOG.md").read_text()
    assert re.search(rf"(?m)^## {re.escape(_version(path))}\b", changelog)
    sdist = _pyproject(path)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"CHANGELOG.md", "LICENSE", "README.md"} <= set(sdist)


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_our_own_distributions_are_pinned_to_a_compatible_range(folder: str) -> None:
    project = _pyproject(DISTRIBUTIONS[folder])["project"]
    declared = [*project.get("dependencies", ())]
    for extra in project.get("optional-dependencies", {}).values():
        declared += extra
    for line in declared:
        requirement = Requirement(line)
        if requirement.name not in OURS:
            continue
        current = Version(_version(OURS[requirement.name]))
        bounds = {spec.operator: Version(spec.version) for spec in requirement.specifier}
        assert set(bounds) == {">=", "<"}, f"{line}: give a lower and an upper bound"
        assert current in requirement.specifier, f"{line} excludes {current}"
        # The next breaking release is excluded: the next minor before 1.0, the next major after.
        breaking = (
            Version(f"0.{current.minor + 1}")
            if current.major == 0
            else Version(f"{current.major + 1}")
        )
        assert bounds["<"] <= breaking, f"{line} admits {breaking}"


def test_import_names_are_first_party_for_ruff() -> None:
    first_party = set(ROOT_PYPROJECT["tool"]["ruff"]["lint"]["isort"]["known-first-party"])
    assert {noxfile._import_name(path) for path in DISTRIBUTIONS.values()} <= first_party


def test_every_link_to_the_repository_uses_its_one_address() -> None:
    """The repository's address is written in the root pyproject.toml; any other
    github.com/<owner>/toolcall link in the sources is a stale copy."""
    pattern = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/toolcall\b")
    stale = {
        f"{path.relative_to(ROOT)}: {link}"
        for suffix in ("*.md", "*.py", "*.toml")
        for path in ROOT.rglob(suffix)
        if not any(
            part.startswith(".") or part in {"dist", "build"}
            for part in path.relative_to(ROOT).parts
        )
        for link in pattern.findall(path.read_text(errors="replace"))
        if link != REPOSITORY
    }
    assert stale == set()
