"""Every check of the monorepo, one data-driven noxfile.

Plugins are discovered from ``plugins/*/pyproject.toml``: a new family gets its
test, split and build sessions without editing this file. Virtual environments
live in a cache folder outside the checkout (``$TOOLCALL_CACHE``, default
``~/.cache/toolcall``) and are reused between runs; each session reinstalls the
project's own packages, so a run always tests the working tree, and a fresh
machine builds everything from nothing.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import nox

nox.needs_version = ">=2024.4.15"

ROOT = Path(__file__).parent
CACHE = Path(os.environ.get("TOOLCALL_CACHE", Path.home() / ".cache" / "toolcall"))
nox.options.envdir = str(CACHE / "nox")
nox.options.reuse_venv = "yes"
nox.options.default_venv_backend = "venv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "types", "core", "plugin", "conformance", "build", "vllm"]

PYTHON = "3.11"
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]
# xgrammar imports torch; the CPU wheel of 2.13.0 lies on this machine's disk,
# while a plain "torch" requirement would pull a multi-gigabyte CUDA build.
TORCH = "torch==2.13.0"
XGRAMMAR = ["xgrammar==0.2.8", "apache-tvm-ffi", "pydantic", "numpy", "ninja"]
VLLM = "vllm==0.33.0"


def _name(pyproject: Path) -> str:
    return str(tomllib.loads(pyproject.read_text())["project"]["name"])


PLUGINS = sorted(p.parent.name for p in ROOT.glob("plugins/*/pyproject.toml"))
DISTRIBUTIONS = [
    ROOT / "core",
    ROOT / "conformance",
    *(ROOT / "plugins" / name for name in PLUGINS),
]


def _install_grammar(session: nox.Session) -> None:
    session.install(TORCH)
    session.install("--no-deps", *XGRAMMAR[:1])
    session.install(*XGRAMMAR[1:])


def _install_local(session: nox.Session, *paths: Path, editable: bool = True) -> None:
    """Install the working tree's packages (their own dependencies from PyPI)."""
    args = [arg for path in paths for arg in (("-e", str(path)) if editable else (str(path),))]
    session.install(*args)


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
    session.run("mypy", "core/src", "conformance/src", *(f"plugins/{p}/src" for p in PLUGINS))


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    """toolcall-core's tests (the vLLM-only ones run in the vllm session)."""
    # hatchling builds a real throwaway plugin wheel; rich draws `toolcall list`'s table.
    session.install(*TEST_DEPS, "hatchling", "rich")
    _install_local(session, ROOT / "core")
    session.run("pytest", "core/tests", "-m", "not vllm", *session.posargs)


@nox.session(python=PYTHON)
@nox.parametrize("plugin", PLUGINS, ids=PLUGINS)
def plugin(session: nox.Session, plugin: str) -> None:
    """One family's tests, with only core, the kit and that plugin installed."""
    session.install(*TEST_DEPS)
    _install_grammar(session)
    _install_local(session, ROOT / "core", ROOT / "conformance", ROOT / "plugins" / plugin)
    session.run("pytest", f"plugins/{plugin}/tests", "-m", "not vllm", *session.posargs)


@nox.session(python=PYTHON, default=False)
@nox.parametrize("plugin", PLUGINS, ids=PLUGINS)
def splits(session: nox.Session, plugin: str) -> None:
    """Replay a family's corpus under 100,000 random splits with the contract checker."""
    session.install(*TEST_DEPS)
    _install_local(session, ROOT / "core", ROOT / "conformance", ROOT / "plugins" / plugin)
    session.env["TOOLCALL_SPLITS"] = os.environ.get("TOOLCALL_SPLITS", "100000")
    session.run("pytest", f"plugins/{plugin}/tests/test_splits.py", "-q", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The kit's tests, the example third-party package, and the scorecard of every plugin."""
    session.install(*TEST_DEPS)
    _install_grammar(session)
    _install_local(session, *DISTRIBUTIONS)
    example = ROOT / "conformance" / "examples" / "toolcall-example-tags"
    if example.exists():
        _install_local(session, example)
    session.run("pytest", "conformance/tests", "-m", "not vllm", *session.posargs)
    # The benchmark's own tests that need no vLLM (the linear-cost shapes).
    session.run("pytest", "bench/tests", "-m", "not vllm", *session.posargs)
    if example.exists():
        session.run("pytest", str(example / "tests"))
    session.run("toolcall", "conformance")


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """Mutated corpus outputs through every installed parser, a large budget with random
    seeds (TOOLCALL_FUZZ_EXAMPLES per parser, default 5,000). CI runs a bounded,
    derandomized budget of the same test in the conformance session."""
    session.install(*TEST_DEPS)
    _install_local(session, *DISTRIBUTIONS)
    session.env["TOOLCALL_FUZZ_EXAMPLES"] = os.environ.get("TOOLCALL_FUZZ_EXAMPLES", "5000")
    session.env["TOOLCALL_FUZZ_RANDOM"] = "1"
    session.run("pytest", "conformance/tests/test_fuzz.py", *session.posargs)


@nox.session(python=PYTHON, default=False)
def scorecard(session: nox.Session) -> None:
    """The main job: every installed parser against the shipped corpus (args go to the command)."""
    _install_grammar(session)
    _install_local(session, *DISTRIBUTIONS, editable=False)
    session.run("toolcall", "conformance", *session.posargs)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build every distribution's wheel and sdist with hatch; install each wheel alone."""
    session.install("hatch>=1.12")
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for path in DISTRIBUTIONS:
        with session.chdir(path):
            session.run("hatch", "build", str(dist))
    for path in DISTRIBUTIONS:
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
        if name == "toolcall-core":
            session.run(str(venv / "bin" / "toolcall"), "list", external=True)


def _import_name(path: Path) -> str:
    packages = [p.name for p in (path / "src").iterdir() if (p / "__init__.py").exists()]
    return packages[0]


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
    # The `vllm` command of the overlay: vLLM's own entry point, on the overlay's python.
    command = overlay / "bin" / "vllm"
    command.write_text(
        f"#!{python}\nimport sys\nfrom vllm.entrypoints.cli.main import main\nsys.exit(main())\n"
    )
    command.chmod(0o755)
    dist = CACHE / "vllm-session-wheels"
    shutil.rmtree(dist, ignore_errors=True)
    replay = ROOT / "conformance" / "replay"
    example = ROOT / "conformance" / "examples" / "toolcall-example-tags"
    extras = [p for p in (replay, example) if p.exists()]
    for path in [*DISTRIBUTIONS, *extras]:
        with session.chdir(path):
            session.run(
                str(base / "bin" / "hatch"), "build", "-t", "wheel", str(dist), external=True
            )
    wheels = sorted(str(w) for w in dist.glob("*.whl"))
    # Our wheels, then what they need that the vLLM environment does not bring.
    session.run(str(python), "-m", "pip", "install", "-q", "--no-deps", *wheels, external=True)
    session.run(
        str(python), "-m", "pip", "install", "-q", "--find-links", str(dist), *wheels, external=True
    )
    return python


@nox.session(python=False)
def vllm(session: nox.Session) -> None:
    """End to end inside real vLLM 0.33: fresh wheels of ours in a cached vLLM venv.

    Also the benchmark's smoke run (bench/tests: tiny sizes, no timing asserted).
    """
    python = _vllm_venv(session)
    replay = ROOT / "conformance" / "replay"
    tests = ["core/tests", "conformance/tests", *(f"plugins/{p}/tests" for p in PLUGINS)]
    if replay.exists():
        tests.append(str(replay / "tests"))
    tests.append("bench/tests")
    # One pytest per folder: test modules of different packages may share a name
    # (every plugin has a test_splits.py). Exit code 5 is a folder without vLLM tests.
    for folder in tests:
        session.run(
            str(python),
            "-m",
            "pytest",
            "-m",
            "vllm",
            folder,
            *session.posargs,
            env=VLLM_ENV,
            external=True,
            success_codes=[0, 5],
        )


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
