"""The noxfile's promises: every test folder is run by a session, a session fails unless
every test it collected ran, no exit status lets vanished tests pass, and coverage is
combined per package from every session."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import nox
import pytest

import noxfile

ROOT = Path(noxfile.__file__).parent
#: Folders that are not part of the repository's sources.
IGNORED = {".git", ".nox", "dist", "build", "node_modules", "__pycache__"}


def _test_folders(root: Path) -> set[str]:
    found = set()
    for path in root.rglob("test_*.py"):
        parts = path.relative_to(root).parts
        if any(part in IGNORED or part.startswith(".") for part in parts):
            continue
        found.add(path.parent.relative_to(root).as_posix())
    return found


def test_every_test_folder_is_run_by_a_session() -> None:
    assert _test_folders(ROOT) == set(noxfile.TEST_FOLDERS)


def test_each_named_session_exists() -> None:
    sessions = nox.registry.get()
    for folder, name in noxfile.TEST_FOLDERS.items():
        assert name is not None, f"{folder}: every folder has tests that need no vLLM"
        base, _, param = name.partition("(")
        assert base in sessions, f"{folder}: no session {base!r}"
        if param:
            assert param.rstrip(")") in noxfile.PLUGINS, folder
        if base == "data":
            assert folder.removeprefix("plugins/").split("/")[0] in noxfile.DATA_PLUGINS
        assert base in noxfile.nox.options.sessions, f"{base} is not a default session"


def test_a_family_is_data_when_every_entry_point_names_json(tmp_path: Path) -> None:
    def family(entries: str) -> Path:
        path = tmp_path / "pyproject.toml"
        path.write_text(f'[project]\nname = "x"\n{entries}')
        return path

    data = '[project.entry-points.toolcall]\na = "pkg:a.json"\nb = "pkg:b.json"\n'
    mixed = '[project.entry-points.toolcall]\na = "pkg:a.json"\nb = "pkg.plugin"\n'
    assert noxfile.is_data_family(family(data))
    assert not noxfile.is_data_family(family(mixed))
    assert not noxfile.is_data_family(family('[project.entry-points.toolcall]\nb = "pkg"\n'))
    assert not noxfile.is_data_family(family(""))
    assert "hf_response_template" in noxfile.PLUGINS


def test_the_default_sessions_end_with_the_coverage_report() -> None:
    defaults = noxfile.nox.options.sessions
    assert defaults[-1] == "coverage"
    assert {"repo", "core", "plugin", "conformance", "build", "vllm"} <= set(defaults)


def test_no_exit_status_lets_a_folder_without_tests_pass() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    codes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg == "success_codes"
    ]
    assert codes == []


def test_vllm_folders_are_those_with_vllm_tests(tmp_path: Path) -> None:
    (tmp_path / "core/tests").mkdir(parents=True)
    (tmp_path / "core/tests/test_a.py").write_text("pytestmark = pytest.mark.vllm\n")
    (tmp_path / "conformance/tests").mkdir(parents=True)
    (tmp_path / "conformance/tests/test_b.py").write_text(
        "@pytest.mark.vllmish\ndef f(): ...\nX = 'pytest.mark.vllm in a string'\n"
    )
    assert noxfile.vllm_folders(tmp_path) == ["core/tests"]
    # In the repository: the bridge tests and the end-to-end tests, at least; this folder
    # names the marker only in strings.
    found = set(noxfile.vllm_folders())
    assert {"core/tests", "conformance/replay/tests"} <= found
    assert "tests" not in found


def _junit(tmp_path: Path, source: str) -> Path:
    tests = tmp_path / "suite"
    tests.mkdir()
    (tests / "test_suite.py").write_text(textwrap.dedent(source))
    report = tmp_path / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests),
         f"--junitxml={report}", "-o", "addopts=", "-W", "ignore"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )  # fmt: skip
    return report


def test_a_run_counts_only_when_every_collected_test_ran(tmp_path: Path) -> None:
    report = _junit(
        tmp_path,
        """
        import pytest

        def test_passes(): pass
        def test_fails(): assert False
        def test_skips(): pytest.skip("no reason")
        @pytest.mark.xfail(reason="known")
        def test_xfails(): assert False
        @pytest.mark.parametrize("n", [1, 2])
        def test_params(n): pass
        """,
    )
    tally = noxfile.junit_tally(report)
    assert tally == noxfile.Tally(collected=6, passed=3, failed=1, skipped=2)
    assert tally.ran == 4
    assert tally.problem() == "2 collected tests did not run (skipped or xfailed)"
    assert str(tally) == "collected 6, ran 4 (passed 3, failed 1, not run 2)"


def test_a_run_that_collects_nothing_does_not_count(tmp_path: Path) -> None:
    report = _junit(tmp_path, "def helper(): pass\n")
    tally = noxfile.junit_tally(report)
    assert tally.collected == 0
    assert tally.problem() == "no test was collected"


def test_a_module_skipped_at_collection_is_a_test_that_did_not_run(tmp_path: Path) -> None:
    report = _junit(tmp_path, "import pytest\npytest.importorskip('no_such_module_here')\n")
    tally = noxfile.junit_tally(report)
    assert (tally.collected, tally.ran) == (1, 0)
    assert tally.problem() is not None


def test_coverage_is_reported_per_package() -> None:
    sources = noxfile.measured_packages()
    assert {"toolcall", "toolcall_conformance", "toolcall_replay", "toolcall_example_tags"} <= set(
        sources
    )
    for name in [*noxfile.PLUGINS, *noxfile.DATA_PLUGINS]:
        assert any(path.is_relative_to(ROOT / "plugins" / name) for path in sources.values())
    rc = noxfile.coverage_rc_for_report()
    for name, source in sources.items():
        assert f"{name} =\n    {source}\n    */site-packages/{name}\n" in rc
    core = sources["toolcall"]
    report = {
        "files": {
            str(core / "a.py"): {
                "summary": {
                    "num_statements": 10,
                    "covered_lines": 9,
                    "num_branches": 4,
                    "covered_branches": 3,
                }
            },
            str(core / "vllm" / "b.py"): {
                "summary": {
                    "num_statements": 10,
                    "covered_lines": 10,
                    "num_branches": 0,
                    "covered_branches": 0,
                }
            },
            "/elsewhere/c.py": {"summary": {"num_statements": 5, "covered_lines": 0}},
        }
    }
    (entry,) = noxfile.package_coverage(report, {"toolcall": core})
    assert (entry.statements, entry.covered_lines, entry.branches, entry.covered_branches) == (
        20,
        19,
        4,
        3,
    )
    assert entry.line_percent == pytest.approx(95.0)
    assert entry.branch_percent == pytest.approx(75.0)
    assert set(noxfile.COVERAGE_FLOOR) == {"toolcall", "toolcall_conformance"}


def test_the_guide_is_a_list_of_commands_ci_follows() -> None:
    commands = noxfile.guide_commands(noxfile.GUIDE.read_text())
    assert [command[:2] for command in commands] == [
        ["toolcall", "new-plugin"],
        ["pip", "install"],
        ["pytest", "toolcall-my-format/tests"],
        ["toolcall", "conformance"],
    ]
    assert commands[1] == ["pip", "install", "-e", "./toolcall-my-format[test]"]
    assert noxfile.guide_commands("```console\n$ a 'b c'\nout\n```\n```sh\n$ no\n```\n") == [
        ["a", "b c"]
    ]


def test_every_session_the_readme_and_the_guide_name_exists() -> None:
    sessions = set(nox.registry.get())
    assert {
        "lint", "types", "repo", "core", "plugin", "splits", "conformance", "fuzz", "scorecard",
        "build", "vllm", "vllm_env", "linear", "bench", "coverage",
    } <= sessions  # fmt: skip
