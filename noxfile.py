"""Every check of the monorepo, one data-driven noxfile.

Plugins are discovered from ``plugins/*/pyproject.toml``: a new family gets its
test, split and build sessions without editing this file. Virtual environments
live in a cache folder outside the checkout (``$TOOLCALL_CACHE``, default
``~/.cache/toolcall``) and are reused between runs; each session reinstalls the
project's own packages, so a run always tests the working tree, and a fresh
machine builds everything from nothing.

Every pytest run goes through :func:`_pytest`: it writes a JUnit report, prints how
many tests were collected (after ``-m`` deselection) and how many ran, and fails the
session when none was collected or one did not run (a skip, an xfail). Every test
folder is run by the session :data:`TEST_FOLDERS` names (``tests/test_noxfile.py``
checks that the table covers the repository), and the vllm session runs every folder
that holds ``vllm``-marked tests. Test runs are measured with coverage; the
``coverage`` session combines them and prints line and branch coverage per package.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import nox

nox.needs_version = ">=2024.4.15"

ROOT = Path(__file__).parent
CACHE = Path(os.environ.get("TOOLCALL_CACHE", Path.home() / ".cache" / "toolcall"))
nox.options.envdir = str(CACHE / "nox")
nox.options.reuse_venv = "yes"
nox.options.default_venv_backend = "venv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = [
    "lint",
    "types",
    "repo",
    "core",
    "plugin",
    "data",
    "conformance",
    "build",
    "vllm",
    "coverage",
]

PYTHON = "3.11"
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]
# xgrammar imports torch; the CPU wheel of 2.13.0 lies on this machine's disk,
# while a plain "torch" requirement would pull a multi-gigabyte CUDA build.
TORCH = "torch==2.13.0"
XGRAMMAR = ["xgrammar==0.2.8", "apache-tvm-ffi", "pydantic", "numpy", "ninja"]
VLLM = "vllm==0.33.0"


def _name(pyproject: Path) -> str:
    return str(tomllib.loads(pyproject.read_text())["project"]["name"])


def is_data_family(pyproject: Path) -> bool:
    """Whether a plugin is a format made of data: every ``toolcall`` entry point names a
    JSON file (a response template the ``hf`` engine reads), none a module of code."""
    entries = tomllib.loads(pyproject.read_text())["project"].get("entry-points", {})
    values = list(entries.get("toolcall", {}).values())
    return bool(values) and all(str(value).endswith(".json") for value in values)


_PLUGIN_FILES = sorted(ROOT.glob("plugins/*/pyproject.toml"))
#: Families of code: each has its own test and split sessions.
PLUGINS = [p.parent.name for p in _PLUGIN_FILES if not is_data_family(p)]
#: Families made of data (a template behind an entry point, no code): tested together, on
#: the ``hf`` engine, by the ``data`` session.
DATA_PLUGINS = [p.parent.name for p in _PLUGIN_FILES if is_data_family(p)]
HF_ENGINE = ROOT / "plugins" / "hf_response_template"
DISTRIBUTIONS = [
    ROOT / "core",
    ROOT / "conformance",
    *(ROOT / "plugins" / name for name in PLUGINS),
    *(ROOT / "plugins" / name for name in DATA_PLUGINS),
]
REPLAY = ROOT / "conformance" / "replay"
EXAMPLE = ROOT / "conformance" / "examples" / "toolcall-example-tags"
#: Every distribution of the repository: what the build session builds and checks.
ALL_DISTRIBUTIONS = [*DISTRIBUTIONS, REPLAY, EXAMPLE]

#: Every test folder, and the session that runs its tests not marked ``vllm`` (None: every
#: test there is marked ``vllm``). The vllm session runs the ``vllm`` tests of every folder
#: that has some (:func:`vllm_folders`).
TEST_FOLDERS: dict[str, str | None] = {
    "tests": "repo",
    "core/tests": "core",
    **{f"plugins/{name}/tests": f"plugin({name})" for name in PLUGINS},
    **{f"plugins/{name}/tests": "data" for name in DATA_PLUGINS},
    "conformance/tests": "conformance",
    "conformance/replay/tests": "conformance",
    "conformance/examples/toolcall-example-tags/tests": "conformance",
    "bench/tests": "conformance",
}


def _install_grammar(session: nox.Session) -> None:
    session.install(TORCH)
    session.install("--no-deps", *XGRAMMAR[:1])
    session.install(*XGRAMMAR[1:])


def _install_local(session: nox.Session, *paths: Path, editable: bool = True) -> None:
    """Install the working tree's packages (their own dependencies from PyPI)."""
    args = [arg for path in paths for arg in (("-e", str(path)) if editable else (str(path),))]
    session.install(*args)


# -- collected = ran ------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """What a JUnit report says: tests collected (after deselection) and what became of them."""

    collected: int
    passed: int
    failed: int
    skipped: int

    @property
    def ran(self) -> int:
        return self.passed + self.failed

    def problem(self) -> str | None:
        """Why the run does not count: nothing collected, or a test that did not run."""
        if self.collected == 0:
            return "no test was collected"
        if self.ran != self.collected:
            return f"{self.collected - self.ran} collected tests did not run (skipped or xfailed)"
        return None

    def __str__(self) -> str:
        return (
            f"collected {self.collected}, ran {self.ran} "
            f"(passed {self.passed}, failed {self.failed}, not run {self.skipped})"
        )


def junit_tally(report: Path) -> Tally:
    """Count the test cases of a pytest JUnit report (a skip or xfail is a ``skipped``)."""
    root = ElementTree.parse(report).getroot()
    collected = passed = failed = skipped = 0
    for case in root.iter("testcase"):
        collected += 1
        tags = {child.tag for child in case}
        if "skipped" in tags:
            skipped += 1
        elif tags & {"failure", "error"}:
            failed += 1
        else:
            passed += 1
    return Tally(collected, passed, failed, skipped)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def _pytest(
    session: nox.Session,
    label: str,
    *args: str,
    python: str | None = None,
    packages: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Tally:
    """Run pytest with a JUnit report, print its tally and fail the session unless every
    collected test ran. ``packages`` (import names) are measured with coverage; ``python``
    runs pytest outside the session's virtualenv."""
    reports = CACHE / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    report = reports / f"{_slug(session.name)}--{_slug(label)}.xml"
    report.unlink(missing_ok=True)
    command = [python or "python", "-m"]
    environment = dict(env or {})
    if packages:
        rcfile = _coverage_rc(session, packages, subprocesses=python is None)
        environment["COVERAGE_RCFILE"] = str(rcfile)
        command += ["coverage", "run", "-m"]
    command += ["pytest", *args, f"--junitxml={report}"]
    session.run(*command, env=environment, external=python is not None)
    tally = junit_tally(report)
    session.log(f"tests {label}: {tally}")
    problem = tally.problem()
    if problem is not None:
        session.error(f"tests {label}: {problem} ({tally})")
    return tally


# -- coverage -------------------------------------------------------------------------------


def _import_name(path: Path) -> str:
    packages = [p.name for p in (path / "src").iterdir() if (p / "__init__.py").exists()]
    return packages[0]


def measured_packages() -> dict[str, Path]:
    """Import name -> source folder of every distribution that coverage reports on."""
    return {_import_name(path): path / "src" / _import_name(path) for path in ALL_DISTRIBUTIONS}


def _coverage_dir(session: nox.Session) -> Path:
    return CACHE / "coverage" / _slug(session.name)


def _coverage_rc(session: nox.Session, packages: Sequence[str], *, subprocesses: bool) -> Path:
    """A coverage configuration for this session (written once per session run)."""
    directory = _coverage_dir(session)
    directory.mkdir(parents=True, exist_ok=True)
    rcfile = directory / "coveragerc"
    lines = [
        "[run]",
        "branch = True",
        "parallel = True",
        f"data_file = {directory / '.coverage'}",
        f"source_pkgs = {', '.join(sorted(packages))}",
        "disable_warnings = module-not-imported, no-data-collected",
    ]
    if subprocesses:
        # The toolcall command and pytester runs in child processes are measured too.
        lines.append("patch = subprocess")
    rcfile.write_text("\n".join(lines) + "\n")
    return rcfile


def _fresh_coverage(session: nox.Session) -> None:
    """Forget this session's coverage data of earlier runs."""
    shutil.rmtree(_coverage_dir(session), ignore_errors=True)


def coverage_rc_for_report() -> str:
    """The configuration that combines every session's data: each package's files, from
    a checkout (editable installs) or from a site-packages (wheels), map to the checkout."""
    lines = ["[run]", "branch = True", "", "[paths]"]
    for name, source in sorted(measured_packages().items()):
        lines += [f"{name} =", f"    {source}", f"    */site-packages/{name}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PackageCoverage:
    name: str
    statements: int
    covered_lines: int
    branches: int
    covered_branches: int

    @property
    def line_percent(self) -> float:
        return 100.0 * self.covered_lines / self.statements if self.statements else 100.0

    @property
    def branch_percent(self) -> float:
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0


def package_coverage(
    report: Mapping[str, object], sources: Mapping[str, Path]
) -> list[PackageCoverage]:
    """Per package, from ``coverage json`` output: lines and branches covered of its files."""
    files = report.get("files", {})
    assert isinstance(files, dict)
    result = []
    for name, source in sorted(sources.items()):
        totals = [0, 0, 0, 0]
        for path, data in files.items():
            if Path(path).resolve().is_relative_to(source.resolve()):
                summary = data["summary"]
                totals[0] += summary["num_statements"]
                totals[1] += summary["covered_lines"]
                totals[2] += summary.get("num_branches", 0)
                totals[3] += summary.get("covered_branches", 0)
        result.append(PackageCoverage(name, *totals))
    return result


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: lint and format check over the whole repository."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def types(session: nox.Session) -> None:
    """mypy --strict on core, the conformance kit and every plugin."""
    session.install("mypy>=1.11", "types-regex", "types-jsonschema", *TEST_DEPS)
    _install_local(session, *DISTRIBUTIONS)
    plugins = [*PLUGINS, *DATA_PLUGINS]
    session.run("mypy", "core/src", "conformance/src", *(f"plugins/{p}/src" for p in plugins))


COVERAGE = "coverage>=7.10"  # patch = subprocess


@nox.session(python=PYTHON)
def repo(session: nox.Session) -> None:
    """The repository's own tests (``tests/``): the noxfile's promises (every test folder
    has a session, collected = ran) and every distribution's packaging conventions."""
    session.install(*TEST_DEPS, "nox>=2024.4.15", "packaging")
    _pytest(session, "tests", "tests", *session.posargs)


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    """toolcall-core's tests (the vLLM-only ones run in the vllm session)."""
    # hatchling builds a real throwaway plugin wheel; rich draws `toolcall list`'s table.
    session.install(*TEST_DEPS, COVERAGE, "hatchling", "rich")
    _install_local(session, ROOT / "core")
    _fresh_coverage(session)
    _pytest(
        session,
        "core/tests",
        "core/tests",
        "-m",
        "not vllm",
        *session.posargs,
        packages=["toolcall"],
    )


@nox.session(python=PYTHON)
@nox.parametrize("plugin", PLUGINS, ids=PLUGINS)
def plugin(session: nox.Session, plugin: str) -> None:
    """One family's tests, with only core, the kit and that plugin installed."""
    session.install(*TEST_DEPS, COVERAGE)
    _install_grammar(session)
    path = ROOT / "plugins" / plugin
    _install_local(session, ROOT / "core", ROOT / "conformance", path)
    _fresh_coverage(session)
    folder = f"plugins/{plugin}/tests"
    measured = ["toolcall", "toolcall_conformance", _import_name(path)]
    _pytest(session, folder, folder, "-m", "not vllm", *session.posargs, packages=measured)


@nox.session(python=PYTHON)
def data(session: nox.Session) -> None:
    """The families made of data, together: core, the kit, the ``hf`` engine and every data
    distribution installed at once, each one's tests run in turn (no session of its own)."""
    if not DATA_PLUGINS:
        session.skip("no data family yet")
    session.install(*TEST_DEPS, COVERAGE)
    _install_grammar(session)
    paths = [ROOT / "plugins" / name for name in DATA_PLUGINS]
    _install_local(session, ROOT / "core", ROOT / "conformance", HF_ENGINE, *paths)
    _fresh_coverage(session)
    measured = ["toolcall", "toolcall_conformance", _import_name(HF_ENGINE)]
    measured += [_import_name(path) for path in paths]
    for name in DATA_PLUGINS:
        folder = f"plugins/{name}/tests"
        _pytest(session, folder, folder, "-m", "not vllm", *session.posargs, packages=measured)


@nox.session(python=PYTHON, default=False)
@nox.parametrize("plugin", PLUGINS, ids=PLUGINS)
def splits(session: nox.Session, plugin: str) -> None:
    """Replay a family's corpus under 100,000 random splits with the contract checker."""
    session.install(*TEST_DEPS)
    _install_local(session, ROOT / "core", ROOT / "conformance", ROOT / "plugins" / plugin)
    session.env["TOOLCALL_SPLITS"] = os.environ.get("TOOLCALL_SPLITS", "100000")
    test = f"plugins/{plugin}/tests/test_splits.py"
    _pytest(session, test, test, "-q", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The kit's tests, the replay package's tests that need no vLLM, the benchmark's tests
    that need no vLLM, the example third-party package, the guide followed command by
    command, and the scorecard."""
    session.install(*TEST_DEPS, COVERAGE)
    _install_grammar(session)
    _install_local(session, *DISTRIBUTIONS, REPLAY, EXAMPLE)
    _fresh_coverage(session)
    measured = list(measured_packages())
    for folder in ("conformance/tests", "conformance/replay/tests", "bench/tests"):
        _pytest(session, folder, folder, "-m", "not vllm", *session.posargs, packages=measured)
    folder = "conformance/examples/toolcall-example-tags/tests"
    _pytest(session, folder, folder, *session.posargs, packages=measured)
    _follow_guide(session, packages=measured)
    session.run("toolcall", "conformance")


GUIDE = ROOT / "docs" / "writing-a-parser.md"


def guide_commands(text: str) -> list[list[str]]:
    """The commands of the guide's ``console`` blocks (lines starting with ``$ ``)."""
    commands = []
    for block in re.findall(r"(?ms)^```console\n(.*?)^```", text):
        for line in block.splitlines():
            if line.startswith("$ "):
                commands.append(shlex.split(line[2:]))
    return commands


def _follow_guide(session: nox.Session, *, packages: Sequence[str]) -> None:
    """Run the guide's commands as a newcomer would, in an empty folder; pytest as
    :func:`_pytest` runs it (collected = ran), pip as this session's pip. Whatever the
    guide installs is uninstalled at the end, so that the session's environment stays
    what the kit's tests expect."""
    commands = guide_commands(GUIDE.read_text())
    if not commands:
        session.error(f"{GUIDE} has no console commands to follow")
    work = Path(session.create_tmp()) / "guide"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    installed: list[str] = []
    try:
        with session.chdir(work):
            for command in commands:
                program, *args = command
                if program == "pip":
                    session.run("python", "-m", "pip", *args)
                    installed += [
                        Path(arg.split("[")[0]).name for arg in args if arg.startswith(".")
                    ]
                elif program == "pytest":
                    _pytest(session, f"guide: {' '.join(command)}", *args, packages=packages)
                else:
                    session.run(*command)
    finally:
        if installed:
            session.run("python", "-m", "pip", "uninstall", "-q", "-y", *installed)


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """Mutated corpus outputs through every installed parser, a large budget with random
    seeds (TOOLCALL_FUZZ_EXAMPLES per parser, default 5,000). CI runs a bounded,
    derandomized budget of the same test in the conformance session."""
    session.install(*TEST_DEPS)
    _install_local(session, *DISTRIBUTIONS)
    session.env["TOOLCALL_FUZZ_EXAMPLES"] = os.environ.get("TOOLCALL_FUZZ_EXAMPLES", "5000")
    session.env["TOOLCALL_FUZZ_RANDOM"] = "1"
    test = "conformance/tests/test_fuzz.py"
    _pytest(session, test, test, *session.posargs)


@nox.session(python=PYTHON, default=False)
def scorecard(session: nox.Session) -> None:
    """The main job: every installed parser against the shipped corpus (args go to the command)."""
    _install_grammar(session)
    _install_local(session, *DISTRIBUTIONS, editable=False)
    session.run("toolcall", "conformance", *session.posargs)


#: The lowest hatchling every distribution declares (``hatchling>=1.27``): 1.24 and 1.25
#: reject PEP 639's ``license-files`` list, 1.26 builds but writes the licence as free
#: text in Metadata 2.3, without ``License-Expression`` or the licence files.
HATCHLING_FLOOR = "1.27"
#: Imports a distribution makes without declaring them, and why that is right.
UNDECLARED_IMPORTS: dict[str, dict[str, str]] = {
    "toolcall-core": {
        "xgrammar": "only the vLLM bridge imports it, inside vLLM, which brings it",
        "rich": "optional: `toolcall list` draws a table with it where it is installed",
    },
}


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build every distribution's wheel and sdist with the hatchling floor they declare (so
    the floor is proven to build), check the metadata with ``twine check --strict``, then
    install each wheel alone, import it, and compare its imports with its dependencies."""
    session.install(f"hatchling=={HATCHLING_FLOOR}.*", "twine>=6.1")
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for path in ALL_DISTRIBUTIONS:
        with session.chdir(path):
            session.run("hatchling", "build", "-d", str(dist))
    session.run("twine", "check", "--strict", *sorted(str(p) for p in dist.iterdir()))
    checker = str(ROOT / ".ci" / "dependency_check.py")
    for path in ALL_DISTRIBUTIONS:
        name = _name(path / "pyproject.toml")
        wheel = next(dist.glob(f"{name.replace('-', '_')}-*.whl"))
        venv = Path(session.create_tmp()) / f"alone-{name}"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("python", "-m", "venv", str(venv))
        python = str(venv / "bin" / "python")
        # Only our own distributions come from dist/; everything else from PyPI.
        session.run(
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--find-links",
            str(dist),
            str(wheel),
            external=True,
        )
        module = _import_name(path)
        session.run(
            python, "-c", f"import {module}; print({module}.__name__, 'imports')", external=True
        )
        if is_data_family(path / "pyproject.toml"):
            # Data imports nothing: its dependencies are what serves it. Every name it
            # registers must load, alone with them.
            names = sorted(
                tomllib.loads((path / "pyproject.toml").read_text())["project"]["entry-points"][
                    "toolcall"
                ]
            )
            load = (
                "from toolcall import Registry; registry = Registry.load(); "
                f"print([registry.get(name).name for name in {names!r}])"
            )
            session.run(python, "-c", load, external=True)
            continue
        allowed = [f"{k}={v}" for k, v in UNDECLARED_IMPORTS.get(name, {}).items()]
        # A plugin may use what toolcall-core depends on and pins (regex, pluggy).
        through = ["--through", "toolcall-core"] if name != "toolcall-core" else []
        session.run(python, checker, name, *through, *allowed, external=True)
        if name == "toolcall-core":
            session.run(str(venv / "bin" / "toolcall"), "list", external=True)
        if name == "toolcall-conformance":
            # The plugin template travels inside the wheel.
            target = Path(session.create_tmp()) / "new-plugin"
            shutil.rmtree(target, ignore_errors=True)
            session.run(
                str(venv / "bin" / "toolcall"),
                "new-plugin",
                "wheel_probe",
                "--dir",
                str(target),
                external=True,
            )


VLLM_ENV = {"VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1"}
#: The cached vLLM environment: built once, never changed afterwards (several
#: checkouts may share one through TOOLCALL_VLLM_BASE).
VLLM_BASE = Path(os.environ.get("TOOLCALL_VLLM_BASE", CACHE / VLLM.replace("==", "-")))
#: What the vLLM environment brings besides vLLM, for our tests and the benchmark.
VLLM_EXTRAS = ["hatch>=1.12", "openai", *TEST_DEPS]


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _vllm_base(session: nox.Session) -> Path:
    """The vLLM environment, built on first use (vLLM and its ~9.5 GB)."""
    python = VLLM_BASE / "bin" / "python"
    marker = VLLM_BASE / ".toolcall-ready"
    if not marker.exists():
        session.run("python3", "-m", "venv", str(VLLM_BASE), external=True)
        session.run(str(python), "-m", "pip", "install", VLLM, *VLLM_EXTRAS, external=True)
        marker.write_text(VLLM)
    # Environments made before the overlay existed had our wheels installed in them.
    ours = sorted(
        p.name.split("-")[0] for p in _site_packages(VLLM_BASE).glob("toolcall*.dist-info")
    )
    if ours:
        session.run(str(python), "-m", "pip", "uninstall", "-q", "-y", *ours, external=True)
    return VLLM_BASE


def _vllm_venv(session: nox.Session) -> Path:
    """A fresh overlay on the vLLM environment with fresh wheels of ours; returns its python.

    The overlay is a small venv whose site-packages holds our wheels (built from the
    working tree with hatch) and a ``.pth`` that puts the vLLM environment's
    site-packages after its own, so it runs the working tree on the cached vLLM
    without ever installing into it.
    """
    base = _vllm_base(session)
    overlay = CACHE / "vllm-run"
    shutil.rmtree(overlay, ignore_errors=True)
    session.run("python3", "-m", "venv", str(overlay), external=True)
    # addsitedir, not a bare path: the vLLM environment's own .pth files apply too.
    (_site_packages(overlay) / "_toolcall_vllm_base.pth").write_text(
        f"import site; site.addsitedir({str(_site_packages(base))!r})\n"
    )
    python = overlay / "bin" / "python"
    # The `vllm` command of the overlay: vLLM's own entry point, on the overlay's python. The
    # guard matters: `--api-server-count N` spawns processes that import this file again.
    command = overlay / "bin" / "vllm"
    command.write_text(
        f"#!{python}\nimport sys\nfrom vllm.entrypoints.cli.main import main\n\n"
        'if __name__ == "__main__":\n    sys.exit(main())\n'
    )
    command.chmod(0o755)
    dist = CACHE / "vllm-session-wheels"
    shutil.rmtree(dist, ignore_errors=True)
    for path in ALL_DISTRIBUTIONS:
        with session.chdir(path):
            session.run(
                str(base / "bin" / "hatch"), "build", "-t", "wheel", str(dist), external=True
            )
    wheels = sorted(str(w) for w in dist.glob("*.whl"))
    # Our wheels, then what they need that the vLLM environment does not bring.
    session.run(str(python), "-m", "pip", "install", "-q", "--no-deps", *wheels, external=True)
    session.run(
        str(python),
        "-m",
        "pip",
        "install",
        "-q",
        "--find-links",
        str(dist),
        *wheels,
        COVERAGE,
        external=True,
    )
    return python


@nox.session(python=False)
def vllm(session: nox.Session) -> None:
    """End to end inside real vLLM 0.33: fresh wheels of ours in a cached vLLM venv.

    Also the benchmarks' smoke runs (bench/tests: tiny sizes, no timing asserted): the
    per-token one and the server-level one (three replay servers, 8 streams, one round).
    """
    python = _vllm_venv(session)
    _fresh_coverage(session)
    # One pytest per folder: test modules of different packages may share a name
    # (every plugin has a test_splits.py). Only folders that hold vllm tests.
    for folder in vllm_folders():
        _pytest(
            session,
            f"{folder} -m vllm",
            "-m",
            "vllm",
            folder,
            *session.posargs,
            python=str(python),
            packages=list(measured_packages()),
            env=VLLM_ENV,
        )


def _marks_vllm(source: str) -> bool:
    """Whether a test module uses ``pytest.mark.vllm`` (in its code, not in a string)."""
    return any(
        isinstance(node, ast.Attribute)
        and node.attr == "vllm"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "pytest"
        for node in ast.walk(ast.parse(source))
    )


def vllm_folders(root: Path = ROOT) -> list[str]:
    """The test folders that hold tests marked ``vllm``."""
    return [
        folder
        for folder in TEST_FOLDERS
        if any(_marks_vllm(path.read_text()) for path in (root / folder).glob("test_*.py"))
    ]


@nox.session(python=PYTHON, default=False)
def linear(session: nox.Session) -> None:
    """Linear cost on every input shape, for every installed parser (bench/README.md)."""
    session.install(*TEST_DEPS)
    _install_local(session, *DISTRIBUTIONS)
    session.run(
        "python",
        "-m",
        "toolcall_bench.linear",
        *session.posargs,
        env={
            "PYTHONPATH": str(ROOT / "bench"),
            "TOOLCALL_BENCH_COMMAND": " ".join(["nox -s linear", *session.posargs]),
        },
    )


@nox.session(python=False, default=False)
def vllm_env(session: nox.Session) -> None:
    """Only (re)build the vLLM overlay with fresh wheels, to run tests in it by hand:
    ``VLLM_TARGET_DEVICE=cpu $TOOLCALL_CACHE/vllm-run/bin/python -m pytest -m vllm FOLDER``."""
    python = _vllm_venv(session)
    session.log(f"vLLM overlay ready: {python}")


@nox.session(python=False, default=False)
def serve_bench(session: nox.Session) -> None:
    """The API server's CPU time per streamed token under 64 concurrent streams: our parser,
    vLLM's built-in, no tool parser (three replay servers, rounds interleaved).

    Prints the table and writes a JSON under $TOOLCALL_CACHE/bench; args go to the benchmark
    (``-- --help``; ``-- --parser glm47``; ``-- --smoke``). Run it on a quiet machine.
    """
    python = _vllm_venv(session)
    session.run(
        str(python),
        "-m",
        "toolcall_bench.serve",
        *session.posargs,
        env={**VLLM_ENV, "PYTHONPATH": str(ROOT / "bench")},
        external=True,
    )


@nox.session(python=False, default=False)
def bench(session: nox.Session) -> None:
    """Our parsers against vLLM's built-ins of the same names (DESIGN §8), in the vLLM venv.

    Writes a JSON under $TOOLCALL_CACHE/bench and the table into each plugin's README;
    args go to the benchmark (``-- --help``; ``-- --smoke`` for the CI-sized run).
    """
    python = _vllm_venv(session)
    command = " ".join(["nox -s bench", *(["--", *session.posargs] if session.posargs else [])])
    session.run(
        str(python),
        "-m",
        "toolcall_bench",
        *session.posargs,
        env={
            **VLLM_ENV,
            "PYTHONPATH": str(ROOT / "bench"),
            "TOOLCALL_BENCH_COMMAND": command,
        },
        external=True,
    )


#: The least branch coverage (percent) a package must keep, measured over every session.
COVERAGE_FLOOR = {"toolcall": 90.0, "toolcall_conformance": 90.0}


@nox.session(python=PYTHON)
def coverage(session: nox.Session) -> None:
    """Combine the coverage of every test session; print line and branch coverage per
    package; fail where a package is under its floor (:data:`COVERAGE_FLOOR`)."""
    session.install(COVERAGE)
    root = CACHE / "coverage"
    runs = sorted(path for path in root.glob("*/") if any(path.glob(".coverage.*")))
    if not runs:
        session.error(f"no coverage data under {root}: run the test sessions first")
    for run in runs:
        session.log(f"coverage data of {run.name}: {len(list(run.glob('.coverage.*')))} files")
    rcfile = root / "combine.rc"
    rcfile.write_text(coverage_rc_for_report())
    data = root / ".coverage"
    data.unlink(missing_ok=True)
    env = {"COVERAGE_RCFILE": str(rcfile), "COVERAGE_FILE": str(data)}
    session.run("coverage", "combine", "--keep", "-q", *map(str, runs), env=env)
    report = root / "coverage.json"
    session.run("coverage", "json", "-q", "-o", str(report), env=env)
    packages = package_coverage(json.loads(report.read_text()), measured_packages())
    session.log("coverage per package (every test session combined):")
    session.log(f"  {'package':<24} {'lines':>16} {'branches':>16}")
    for entry in packages:
        if not entry.statements:
            session.log(f"  {entry.name:<24} {'not measured':>16}")
            continue
        lines = f"{entry.covered_lines}/{entry.statements} {entry.line_percent:5.1f}%"
        branches = f"{entry.covered_branches}/{entry.branches} {entry.branch_percent:5.1f}%"
        session.log(f"  {entry.name:<24} {lines:>16} {branches:>16}")
    measured = {entry.name: entry for entry in packages if entry.statements}
    low = [
        f"{name} {measured[name].branch_percent:.1f}% < {floor}%"
        if name in measured
        else f"{name} not measured"
        for name, floor in COVERAGE_FLOOR.items()
        if name not in measured or measured[name].branch_percent < floor
    ]
    if low:
        session.error(f"branch coverage under the floor: {', '.join(low)}")
