"""The plugin registry, against real (throwaway) installed distributions."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_dists import TAG_FORMAT, Site, parsers_plugin, pip_install

from toolcall import Parser, PluginError, Registry, UnknownParserError
from toolcall.registry import BLOCK_ENV


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return Site(path)


def load(site: Site, block: str = "") -> Registry:
    return Registry.load({BLOCK_ENV: block} if block else {}, path=[str(site.path)])


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "toolcall" and record.levelno >= logging.ERROR
    ]


def test_good_plugin_offers_its_parsers(site: Site) -> None:
    site.add_plugin("tc-good", parsers_plugin("alpha", "beta"), ("alpha", "beta"), version="2.3")
    registry = load(site)
    assert registry.names() == ["alpha", "beta"]
    parser_class = registry.get("alpha")
    assert issubclass(parser_class, Parser)
    assert parser_class.name == "alpha"
    entries = {entry.name: entry for entry in registry.entries()}
    assert entries["beta"].distribution == "tc-good"
    assert entries["beta"].version == "2.3"
    assert entries["beta"].parser_class is registry.get("beta")
    assert registry.problems == []


def test_default_discovery_reads_sys_path(site: Site) -> None:
    site.add_plugin("tc-on-path", parsers_plugin("on_path_parser"), ("on_path_parser",))
    registry = Registry.load({})
    assert "on_path_parser" in registry.names()
    assert registry.get("on_path_parser").name == "on_path_parser"


def test_loading_is_lazy(site: Site) -> None:
    marker = site.path / "imported.txt"
    source = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
    source += parsers_plugin("lazy")
    site.add_plugin("tc-lazy", source, ("lazy",))
    registry = load(site)
    assert registry.claimed_names() == ["lazy"]
    assert not marker.exists(), "Registry.load() imported a plugin"
    assert registry.names() == ["lazy"]
    assert marker.read_text() == "x"


def test_module_listed_under_two_names_is_loaded_once(site: Site) -> None:
    calls = site.path / "calls.txt"
    source = TAG_FORMAT + textwrap.dedent(
        f"""
        PARSERS = [tag_parser("one"), tag_parser("two")]

        @hookimpl
        def toolcall_parsers():
            with open({str(calls)!r}, "a") as log:
                log.write("call\\n")
            return PARSERS
        """
    )
    site.add_plugin("tc-twice", source, ("one", "two"))
    registry = load(site)
    assert registry.names() == ["one", "two"]
    assert calls.read_text().splitlines() == ["call"]


def test_import_error_is_reported_once_and_others_load(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    site.add_plugin("tc-good", parsers_plugin("good"), ("good",))
    site.add_plugin(
        "tc-broken", "raise RuntimeError('boom at import')\n", ("broken", "also_broken")
    )
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == ["good"]
        with pytest.raises(PluginError) as raised:
            registry.get("broken")
        registry.get("good")
        registry.problems  # noqa: B018 - asking again must not log again
    (line,) = errors(caplog)
    assert "tc-broken 1.0" in line
    assert "RuntimeError: boom at import" in line
    assert "\n" not in line
    assert registry.problems == [line]
    error = raised.value
    assert isinstance(error.error, RuntimeError)
    assert str(error.error) == "boom at import"
    assert error.__cause__ is error.error
    assert error.distributions == ("tc-broken",)
    assert "tc-broken" in str(error)
    assert "boom at import" in str(error)
    # every name the broken plugin claims gives the original error
    with pytest.raises(PluginError) as again:
        registry.get("also_broken")
    assert again.value.error is error.error


def test_raising_hook_is_reported(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        """
        @hookimpl
        def toolcall_parsers():
            raise ValueError("hook exploded")
        """
    )
    site.add_plugin("tc-hook", source, ("hooked",))
    site.add_plugin("tc-fine", parsers_plugin("fine"), ("fine",))
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == ["fine"]
    (line,) = errors(caplog)
    assert "tc-hook 1.0" in line
    assert "toolcall_parsers raised ValueError: hook exploded" in line
    with pytest.raises(PluginError) as raised:
        registry.get("hooked")
    assert isinstance(raised.value.error, ValueError)


#: Ways a plugin's own code ends a program, other than the user's Ctrl-C: each must break
#: that plugin alone. (statement, the exception type, how the registry describes it)
EXITS = [
    pytest.param(("sys.exit()", SystemExit, "SystemExit"), id="sys.exit()"),
    pytest.param(("sys.exit(3)", SystemExit, "SystemExit: 3"), id="sys.exit(3)"),
    pytest.param(("sys.exit('bye')", SystemExit, "SystemExit: bye"), id="sys.exit(message)"),
    pytest.param(("raise GeneratorExit", GeneratorExit, "GeneratorExit"), id="GeneratorExit"),
    pytest.param(
        ("raise type('Stop', (BaseException,), {})('own')", BaseException, "Stop: own"), id="own"
    ),
]


@pytest.mark.parametrize("exit", EXITS)
@pytest.mark.parametrize("where", ["import", "hook"])
def test_a_plugin_that_exits_is_reported_like_any_broken_plugin(
    site: Site,
    caplog: pytest.LogCaptureFixture,
    exit: tuple[str, type[BaseException], str],
    where: str,
) -> None:
    statement, kind, described = exit
    if where == "import":
        source = f"import sys\n{statement}\n"
        what = f"import failed: {described}"
    else:
        source = TAG_FORMAT + textwrap.dedent(
            f"""
            import sys

            @hookimpl
            def toolcall_parsers():
                {statement}
            """
        )
        what = f"hook toolcall_parsers raised {described}"
    site.add_plugin("tc-exits", source, ("exits",))
    site.add_plugin("tc-fine", parsers_plugin("fine"), ("fine",))
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == ["fine"]
        registry.get("fine")
    (line,) = errors(caplog)
    assert line == f"toolcall plugin tc-exits 1.0 ({site.module_name('tc_exits')}): {what}"
    with pytest.raises(PluginError) as raised:
        registry.get("exits")
    assert isinstance(raised.value.error, kind)
    assert raised.value.__cause__ is raised.value.error
    assert what in str(raised.value)


def test_a_class_whose_code_exits_is_reported(site: Site) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        """
        import sys

        class Exiting(type(Parser)):
            @property
            def name(cls):
                sys.exit("no name")

        @hookimpl
        def toolcall_parsers():
            return [Exiting("Odd", (tag_parser("x"),), {})]
        """
    )
    site.add_plugin("tc-odd", source, ("odd",))
    site.add_plugin("tc-fine", parsers_plugin("fine"), ("fine",))
    registry = load(site)
    assert registry.names() == ["fine"]
    with pytest.raises(PluginError, match="returned a class that raised SystemExit: no name"):
        registry.get("odd")


def test_ctrl_c_in_a_plugin_still_stops_the_program(site: Site) -> None:
    site.add_plugin("tc-interrupted", "raise KeyboardInterrupt\n", ("interrupted",))
    with pytest.raises(KeyboardInterrupt):
        load(site).names()


@pytest.mark.parametrize(
    ("returned", "complaint"),
    [
        ("[object]", "not a toolcall.Parser subclass"),
        ("['hooked']", "not a toolcall.Parser subclass"),
        ("tag_parser('hooked')", "not a sequence"),
        ("[type('Nameless', (tag_parser('x'),), {'name': 42})]", "not a non-empty str"),
        ("[type('Abstract', (Parser,), {'name': 'hooked'})]", "abstract"),
        (
            "[tag_parser('hooked'), tag_parser('hooked')]",
            "two parsers named 'hooked'",
        ),
    ],
)
def test_bad_return_value_is_reported(
    site: Site, caplog: pytest.LogCaptureFixture, returned: str, complaint: str
) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        f"""
        @hookimpl
        def toolcall_parsers():
            return {returned}
        """
    )
    site.add_plugin("tc-bad", source, ("hooked",))
    site.add_plugin("tc-fine", parsers_plugin("fine"), ("fine",))
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == ["fine"]
    (line,) = errors(caplog)
    assert "tc-bad 1.0" in line
    assert complaint in line
    with pytest.raises(PluginError, match=complaint):
        registry.get("hooked")


def test_unknown_hook_name_is_reported(site: Site) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        """
        @hookimpl
        def toolcall_parser():  # a typo
            return [tag_parser("typo")]
        """
    )
    site.add_plugin("tc-typo", source, ("typo",))
    registry = load(site)
    assert registry.names() == []
    (line,) = registry.problems
    assert "tc-typo" in line
    assert "toolcall_parser" in line


def test_two_distributions_claiming_a_name(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    site.add_plugin("tc-first", parsers_plugin("shared", "mine"), ("shared", "mine"))
    site.add_plugin("tc-second", parsers_plugin("shared"), ("shared",), version="0.2")
    registry = load(site)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        assert registry.names() == ["mine"]
    (line,) = errors(caplog)
    assert "'shared'" in line
    assert "tc-first 1.0" in line
    assert "tc-second 0.2" in line
    with pytest.raises(PluginError) as raised:
        registry.get("shared")
    assert "tc-first 1.0" in str(raised.value)
    assert "tc-second 0.2" in str(raised.value)
    assert set(raised.value.distributions) == {"tc-first", "tc-second"}


def test_a_name_claimed_only_by_the_hook_still_conflicts(site: Site) -> None:
    site.add_plugin("tc-first", parsers_plugin("shared"), ("shared",))
    # declares another entry name, but its hook also returns "shared"
    site.add_plugin("tc-sneaky", parsers_plugin("other", "shared"), ("other",))
    registry = load(site)
    assert registry.names() == ["other"]
    with pytest.raises(PluginError, match="tc-sneaky"):
        registry.get("shared")


def test_blocking_names(site: Site) -> None:
    site.add_plugin("tc-pair", parsers_plugin("kept", "blocked"), ("kept", "blocked"))
    registry = load(site, block=" blocked , ")
    assert registry.names() == ["kept"]
    assert registry.claimed_names() == ["kept"]
    with pytest.raises(UnknownParserError, match="blocked by TOOLCALL_BLOCK"):
        registry.get("blocked")
    assert registry.problems == []


def test_blocking_resolves_a_conflict(site: Site) -> None:
    site.add_plugin("tc-first", parsers_plugin("shared"), ("shared",))
    site.add_plugin("tc-second", parsers_plugin("shared"), ("shared",))
    registry = load(site, block="tc-second")
    assert registry.names() == ["shared"]
    entry = registry.entries()[0]
    assert entry.distribution == "tc-first"
    assert registry.problems == []


def test_blocking_a_broken_plugin_keeps_it_from_being_imported(site: Site) -> None:
    marker = site.path / "imported.txt"
    site.add_plugin(
        "tc-broken",
        f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nraise RuntimeError('boom')\n",
        ("broken",),
    )
    site.add_plugin("tc-fine", parsers_plugin("fine"), ("fine",))
    registry = load(site, block="broken")
    assert registry.names() == ["fine"]
    assert registry.problems == []
    assert not marker.exists()


def test_blocking_a_parser_name_the_hook_returns(site: Site) -> None:
    site.add_plugin("tc-undeclared", parsers_plugin("declared", "extra"), ("declared",))
    registry = load(site, block="extra")
    assert registry.names() == ["declared"]
    assert registry.problems == []


def test_undeclared_parser_is_served_with_a_warning(site: Site) -> None:
    site.add_plugin("tc-undeclared", parsers_plugin("declared", "extra"), ("declared",))
    registry = load(site)
    assert registry.names() == ["declared", "extra"]
    assert registry.claimed_names() == ["declared"]
    (line,) = registry.problems
    assert "'extra'" in line
    assert "vLLM will not see it" in line


def test_entry_name_the_hook_does_not_return(site: Site) -> None:
    site.add_plugin("tc-missing", parsers_plugin("present"), ("present", "absent"))
    registry = load(site)
    assert registry.names() == ["present"]
    with pytest.raises(PluginError, match="does not return"):
        registry.get("absent")


def test_underscore_entry_names_claim_no_parser(site: Site) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        """
        @hookimpl
        def toolcall_add_commands(subparsers):
            subparsers.add_parser("hello")
        """
    )
    site.add_plugin("tc-commands", source, ("_commands",))
    registry = load(site)
    assert registry.claimed_names() == []
    assert registry.names() == []
    assert registry.problems == []


def test_unknown_name(site: Site) -> None:
    site.add_plugin("tc-good", parsers_plugin("alpha"), ("alpha",))
    registry = load(site)
    with pytest.raises(UnknownParserError) as raised:
        registry.get("omega")
    assert str(raised.value) == "unknown parser 'omega' (installed: alpha)"
    assert isinstance(raised.value, LookupError)


def test_no_plugins(site: Site) -> None:
    registry = load(site)
    assert registry.names() == []
    assert registry.entries() == []
    with pytest.raises(UnknownParserError, match=r"installed: none"):
        registry.get("hermes")


def test_add_commands_isolates_failures(site: Site) -> None:
    import argparse

    good = TAG_FORMAT + textwrap.dedent(
        """
        @hookimpl
        def toolcall_add_commands(subparsers):
            subparsers.add_parser("hello").set_defaults(func=lambda args: 0)
        """
    )
    bad = TAG_FORMAT + textwrap.dedent(
        """
        @hookimpl
        def toolcall_add_commands(subparsers):
            raise KeyError("no commands today")
        """
    )
    exits = TAG_FORMAT + textwrap.dedent(
        """
        import sys

        @hookimpl
        def toolcall_add_commands(subparsers):
            sys.exit(4)
        """
    )
    site.add_plugin("tc-good-commands", good, ("_good",))
    site.add_plugin("tc-bad-commands", bad, ("_bad",))
    site.add_plugin("tc-exiting-commands", exits, ("_exits",))
    registry = load(site)
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers(dest="command")
    problems = registry.add_commands(subparsers)
    assert parser.parse_args(["hello"]).command == "hello"
    bad_line, exits_line = sorted(problems)
    assert "tc-bad-commands 1.0" in bad_line
    assert "KeyError" in bad_line
    assert "tc-exiting-commands 1.0" in exits_line
    assert exits_line.endswith("hook toolcall_add_commands raised SystemExit: 4")


def test_pip_installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole packaging path: pyproject entry points, a wheel built by hatchling,
    ``pip install --target``, discovery through the installed metadata."""
    pytest.importorskip("hatchling", reason="building the test plugin needs hatchling")
    project = tmp_path / "project"
    package = project / "src" / "tc_pipplugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(parsers_plugin("piped", "piped_too"))
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "tc-pipplugin"
            version = "0.7.1"

            [project.entry-points.toolcall]
            piped = "tc_pipplugin.plugin"
            piped_too = "tc_pipplugin.plugin"

            [tool.hatch.build.targets.wheel]
            packages = ["src/tc_pipplugin"]
            """
        )
    )
    target = tmp_path / "target"
    pip_install(project, target)
    monkeypatch.syspath_prepend(str(target))
    monkeypatch.delitem(sys.modules, "tc_pipplugin", raising=False)
    registry = Registry.load({}, path=[str(target)])
    assert registry.names() == ["piped", "piped_too"]
    (entry, _) = registry.entries()
    assert (entry.distribution, entry.version) == ("tc-pipplugin", "0.7.1")
    assert registry.get("piped").__module__ == "tc_pipplugin.plugin"
