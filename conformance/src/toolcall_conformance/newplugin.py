"""``toolcall new-plugin NAME``: write a parser package that builds, registers and passes
the kit.

The package is the example third-party package (``conformance/examples/toolcall-example-
tags``, shipped inside this wheel as ``plugin_template``) under the new name: its parser on
:class:`toolcall.CallStream`, the ``toolcall`` entry point, the ``ConformanceSuite`` test
and its cases, a README and a CHANGELOG. Every ``example_tags`` becomes ``NAME``
(``toolcall_example_tags`` the import name ``toolcall_NAME``, ``toolcall-example-tags`` the
distribution ``toolcall-NAME``, ``ExampleTags`` the class prefix); the project's own
authors and URLs are left out, for the new package's to be written in.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from toolcall.registry import Registry

__all__ = [
    "GUIDE_URL",
    "NewPluginError",
    "add_arguments",
    "names_for",
    "run",
    "template_dir",
    "write_plugin",
]

#: The guide that takes a new package on from here.
GUIDE_URL = "https://github.com/toolcall-project/toolcall/blob/main/docs/writing-a-parser.md"

#: A parser name: what ``--tool-call-parser`` takes, and part of a Python import name.
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_TEMPLATE_NAME = "example_tags"
#: What a checkout's example folder may hold that is not part of the package.
_SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "dist", "build"}


class NewPluginError(ValueError):
    """The package cannot be written (the message says why)."""


def template_dir() -> Path:
    """The example package: inside the installed wheel, else beside the checkout's sources."""
    packaged = Path(str(resources.files("toolcall_conformance").joinpath("plugin_template")))
    if (packaged / "pyproject.toml").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "examples" / "toolcall-example-tags"
    if (checkout / "pyproject.toml").is_file():
        return checkout
    msg = "the plugin template is missing from this installation of toolcall-conformance"
    raise NewPluginError(msg)


def names_for(name: str) -> dict[str, str]:
    """What each template name becomes for the parser ``name``, longest first."""
    camel = "".join(part.capitalize() for part in name.split("_") if part)
    return {
        f"toolcall_{_TEMPLATE_NAME}": f"toolcall_{name}",
        f"toolcall-{_TEMPLATE_NAME.replace('_', '-')}": f"toolcall-{name.replace('_', '-')}",
        _TEMPLATE_NAME: name,
        "ExampleTags": camel,
    }


def _rename(text: str, names: dict[str, str]) -> str:
    pattern = re.compile("|".join(re.escape(old) for old in names))
    return pattern.sub(lambda match: names[match.group()], text)


def _without_our_project(pyproject: str) -> str:
    """The template's pyproject.toml without this project's authors and URLs."""
    pyproject = re.sub(r"(?m)^authors = .*\n", "", pyproject)
    return re.sub(r"(?ms)^\[project\.urls\]\n.*?(?:\n\n|\Z)", "", pyproject)


def _files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not any(part in _SKIPPED for part in relative.parts):
            yield relative


def write_plugin(name: str, directory: Path, *, registry: Registry | None = None) -> Path:
    """Write the package for parser ``name`` into ``directory``; returns its folder."""
    if not _NAME.fullmatch(name):
        msg = (
            f"{name!r} is not a parser name: lowercase letters, digits and '_', starting with "
            "a letter (it is also part of the package's import name)"
        )
        raise NewPluginError(msg)
    registry = registry if registry is not None else Registry.load()
    if name in registry.names():
        msg = f"{name!r} is already the name of an installed parser: choose another"
        raise NewPluginError(msg)
    names = names_for(name)
    target = directory / names[f"toolcall-{_TEMPLATE_NAME.replace('_', '-')}"]
    if target.exists():
        msg = f"{target} exists: remove it or choose another --dir"
        raise NewPluginError(msg)
    source = template_dir()
    for relative in _files(source):
        text = (source / relative).read_text(encoding="utf-8")
        if relative.as_posix() == "pyproject.toml":
            text = _without_our_project(text)
        path = target / _rename(relative.as_posix(), names)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_rename(text, names), encoding="utf-8")
    return target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the parser name (what --tool-call-parser will take)")
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path(),
        help="where to write the package folder toolcall-NAME (default: here)",
    )


def run(args: argparse.Namespace) -> int:
    """``toolcall new-plugin``: 0 when the package was written, 1 when it could not be."""
    try:
        target = write_plugin(args.name, args.dir)
    except (NewPluginError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    files = sum(1 for _ in _files(target))
    print(f"wrote {target} ({files} files): the parser {args.name!r} and its conformance tests")
    print("next:")
    print(f'  pip install -e "{target}[test]"')
    print(f"  pytest {target / 'tests'}")
    print(f"then make the format yours: {GUIDE_URL}")
    return 0
