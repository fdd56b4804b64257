"""The ``toolcall`` command, with real (throwaway) plugin distributions."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_dists import TAG_FORMAT, Site, parsers_plugin

from toolcall import Registry
from toolcall.cli import _print_table, main
from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS

#: An output in the test plugin's format: content, one call, content.
OUTPUT = 'Let me check.\n<call>get_weather {"city": "Paris"}</call>\nDone.'
#: What the format says it is (see plugin_dists.TAG_FORMAT).
CONTENT = "Let me check.\n\nDone."
CALL = ("get_weather", '{"city": "Paris"}')


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return Site(path)


def run(site: Site, *argv: str) -> int:
    return main(list(argv), registry=Registry.load({}, path=[str(site.path)]))


def stderr_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- toolcall list --------------------------------------------------------------------


def test_list_without_plugins(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(site, "list") == 0
    out = capsys.readouterr().out
    assert "No toolcall parsers are installed" in out
    assert "Problems" not in out


def test_list_shows_parsers_and_replaced_builtins(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "hermes" in VLLM_BUILTIN_TOOL_PARSERS
    assert "tc_new_format" not in VLLM_BUILTIN_TOOL_PARSERS
    module = site.add_plugin(
        "tc-list",
        parsers_plugin("hermes", "tc_new_format"),
        ("hermes", "tc_new_format"),
        version="4.5",
    )
    assert run(site, "list") == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert rows["hermes"] == [
        "hermes",
        f"{module}.tag_parser.<locals>.TagParser",
        "tc-list",
        "4.5",
        "hermes",
    ]
    assert rows["tc_new_format"][-1] == "-"
    assert "replaces vLLM 0.33.0" in out


def test_list_plain_table_lines_up(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-plain", parsers_plugin("plain_one"), ("plain_one",))
    assert run(site, "list") == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == [
        "parser",
        "class",
        "distribution",
        "version",
        "replaces",
        "vLLM",
        "0.33.0",
    ]
    assert row.split()[0] == "plain_one"
    assert row.split()[2:] == ["tc-plain", "1.0", "-"]
    assert row.index("tc-plain") == header.index("distribution")


def test_rich_table_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rich", reason="rich is optional; the plain table is tested above")
    row = ("hermes", "pkg.module.HermesParser", "toolcall-hermes", "0.1.0", "hermes")
    out = io.StringIO()
    _print_table([row], out, styled=True)
    text = out.getvalue()
    for cell in row:
        assert cell in text
    assert "distribution" in text
    # without rich, the same call falls back to the plain table
    monkeypatch.setitem(sys.modules, "rich.console", None)
    plain = io.StringIO()
    _print_table([row], plain, styled=True)
    assert plain.getvalue().splitlines()[1].split() == list(row)


def test_list_json_and_problems(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-ok", parsers_plugin("ok_parser"), ("ok_parser",))
    site.add_plugin("tc-broken", "raise ImportError('missing dependency xyz')\n", ("broken",))
    assert run(site, "list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [parser["name"] for parser in data["parsers"]] == ["ok_parser"]
    assert data["parsers"][0]["distribution"] == "tc-ok"
    assert data["parsers"][0]["replaces"] is None
    (problem,) = data["problems"]
    assert "tc-broken 1.0" in problem
    assert "ImportError: missing dependency xyz" in problem

    assert run(site, "list") == 0
    out = capsys.readouterr().out
    assert "Problems:" in out
    assert "missing dependency xyz" in out


# -- toolcall parse -------------------------------------------------------------------


def test_parse_file(site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT, encoding="utf-8")
    assert run(site, "parse", "-p", "tagged", str(raw)) == 0
    message = json.loads(capsys.readouterr().out)
    assert message["role"] == "assistant"
    assert message["content"] == CONTENT
    (call,) = message["tool_calls"]
    assert call["type"] == "function"
    assert call["id"].startswith("chatcmpl-tool-")
    assert (call["function"]["name"], call["function"]["arguments"]) == CALL


DERIVING = textwrap.dedent(
    """

    @hookimpl
    def toolcall_parser_from_chat_template(chat_template):
        if "BAD" in chat_template:
            raise ValueError("cannot derive: the template says BAD")
        if "TAG" in chat_template:
            return tag_parser("from_template")
        return None
    """
)


def test_parse_with_a_chat_template(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.add_plugin("tc-derive", TAG_FORMAT + DERIVING, ("_derive",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT, encoding="utf-8")
    template = tmp_path / "chat_template.jinja"
    template.write_text("{{ 'TAG' }}", encoding="utf-8")
    assert run(site, "parse", "--chat-template", str(template), str(raw)) == 0
    message = json.loads(capsys.readouterr().out)
    (call,) = message["tool_calls"]
    assert (call["function"]["name"], call["function"]["arguments"]) == CALL
    # A model directory: its chat_template.jinja.
    assert run(site, "parse", "--chat-template", str(tmp_path), str(raw)) == 0
    (again,) = json.loads(capsys.readouterr().out)["tool_calls"]
    assert (again["function"]["name"], again["function"]["arguments"]) == CALL


def test_chat_template_refused_or_not_derived(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.add_plugin("tc-derive", TAG_FORMAT + DERIVING, ("_derive",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT, encoding="utf-8")
    bad = tmp_path / "bad.jinja"
    bad.write_text("BAD", encoding="utf-8")
    assert run(site, "parse", "--chat-template", str(bad), str(raw)) == 2
    assert stderr_line(capsys) == f"toolcall: {bad}: cannot derive: the template says BAD"
    other = tmp_path / "other.jinja"
    other.write_text("{{ messages }}", encoding="utf-8")
    assert run(site, "parse", "--chat-template", str(other), str(raw)) == 2
    assert "no installed plugin derives a parser" in stderr_line(capsys)


def test_parser_and_chat_template_exclude_each_other(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        run(site, "parse", "-p", "x", "--chat-template", "t.jinja")
    assert raised.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def stdin_of(data: bytes) -> io.TextIOWrapper:
    """A stdin holding ``data``, with the text layer Python gives stdin under a C locale
    (invalid bytes become lone surrogates instead of an error)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")


def test_parse_stdin(
    site: Site, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    monkeypatch.setattr(sys, "stdin", stdin_of(b"plain words, no call"))
    assert run(site, "parse", "-p", "tagged") == 0
    assert json.loads(capsys.readouterr().out) == {
        "role": "assistant",
        "content": "plain words, no call",
    }


@pytest.mark.parametrize("chunk", [1, 4, 1000])
def test_parse_stream(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str], chunk: int
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT, encoding="utf-8")
    assert run(site, "parse", "-p", "tagged", str(raw), "--stream", "--chunk", str(chunk)) == 0
    deltas = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    content = [delta["content"] for delta in deltas if "content" in delta]
    assert "".join(content) == CONTENT
    # content before the call comes out as it is read, never more than a step at a time
    before_call = content[: content.index("\n") + 1] if chunk == 1 else []
    assert all(len(piece) == 1 for piece in before_call)
    entries = [entry for delta in deltas for entry in delta.get("tool_calls", [])]
    first = entries[0]
    assert set(first) == {"index", "id", "type", "function"}
    assert first["function"] == {"name": "get_weather"}
    assert all(set(entry) == {"index", "function"} for entry in entries[1:])
    assert "".join(entry["function"].get("arguments", "") for entry in entries) == CALL[1]


def test_parse_reads_the_request_from_tools_file(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT, encoding="utf-8")
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    tools_list = tmp_path / "tools.json"
    tools_list.write_text(json.dumps([tool]))
    assert run(site, "parse", "-p", "tagged", str(raw), "--tools", str(tools_list)) == 0
    assert len(json.loads(capsys.readouterr().out)["tool_calls"]) == 1
    # a request object: tool_choice "none" makes the whole output content (the
    # test format honours it), which shows the request reached the parser
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"tools": [tool], "tool_choice": "none"}))
    assert run(site, "parse", "-p", "tagged", str(raw), "--tools", str(request)) == 0
    assert json.loads(capsys.readouterr().out) == {"role": "assistant", "content": OUTPUT}


# -- errors: one line on stderr, status 2 ---------------------------------------------


def test_unreadable_file(site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    missing = tmp_path / "missing.txt"
    assert run(site, "parse", "-p", "tagged", str(missing)) == 2
    assert stderr_line(capsys) == f"toolcall: cannot read {missing}: No such file or directory"
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    assert run(site, "parse", "-p", "tagged", str(binary)) == 2
    assert "not UTF-8" in stderr_line(capsys)


def test_stdin_that_is_not_utf8(
    site: Site, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    monkeypatch.setattr(sys, "stdin", stdin_of(b"abc\xff\xfedef"))
    assert run(site, "parse", "-p", "tagged") == 2
    assert stderr_line(capsys) == (
        "toolcall: cannot read stdin: not UTF-8 text (invalid start byte at byte 3)"
    )
    assert capsys.readouterr().out == ""


def test_deeply_nested_tools_file(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert run(site, "parse", "-p", "tagged", str(raw), "--tools", str(deep)) == 2
    line = stderr_line(capsys)
    assert line == f"toolcall: malformed tools file {deep}: nested too deeply to read"


def test_unknown_parser(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    assert run(site, "parse", "-p", "nope", "-") == 2
    assert stderr_line(capsys) == "toolcall: unknown parser 'nope' (installed: tagged)"


@pytest.mark.parametrize(
    ("tools", "complaint"),
    [
        ("[{", "malformed tools file"),
        ('"just a string"', "expected a list of tools or a request object"),
        ('{"tools": {"a": 1}}', "'tools' must be a list of objects"),
        ("[1, 2]", "'tools' must be a list of objects"),
        ('[{"type": "function", "function": {}}]', "a tool needs a function name"),
        ('{"tools": [], "tool_choice": "sometimes"}', "unsupported tool_choice"),
    ],
)
def test_malformed_tools_file(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str], tools: str, complaint: str
) -> None:
    site.add_plugin("tc-parse", parsers_plugin("tagged"), ("tagged",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(tools)
    assert run(site, "parse", "-p", "tagged", str(raw), "--tools", str(tools_file)) == 2
    line = stderr_line(capsys)
    assert line.startswith(f"toolcall: malformed tools file {tools_file}")
    assert complaint in line


def test_broken_plugin(site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site.add_plugin("tc-broken", "raise RuntimeError('cannot start')\n", ("broken",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)
    assert run(site, "parse", "-p", "broken", str(raw)) == 2
    line = stderr_line(capsys)
    assert "tc-broken 1.0" in line
    assert "RuntimeError: cannot start" in line


def test_parser_failure_is_one_line(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = TAG_FORMAT + textwrap.dedent(
        """
        class Exploding(tag_parser("exploding")):
            def stream(self):
                raise ZeroDivisionError("parser bug")

        @hookimpl
        def toolcall_parsers():
            return [Exploding]
        """
    )
    site.add_plugin("tc-exploding", source, ("exploding",))
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)
    assert run(site, "parse", "-p", "exploding", str(raw)) == 1
    assert stderr_line(capsys) == (
        "toolcall: parser 'exploding' failed: ZeroDivisionError: parser bug"
    )


def test_bad_chunk(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        run(site, "parse", "-p", "x", "--stream", "--chunk", "0")
    assert raised.value.code == 2
    assert "expected a positive integer" in capsys.readouterr().err


# -- commands from other distributions ------------------------------------------------


def test_plugin_subcommand(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    source = textwrap.dedent(
        """
        from toolcall import hookimpl

        def hello(args):
            print(f"hello {args.who}")
            return 3

        @hookimpl
        def toolcall_add_commands(subparsers):
            command = subparsers.add_parser("hello", help="greet")
            command.add_argument("who")
            command.set_defaults(func=hello)
        """
    )
    site.add_plugin("tc-hello", source, ("_hello",))
    assert run(site, "hello", "world") == 3
    assert capsys.readouterr().out == "hello world\n"


def test_failing_subcommand_hook_is_listed(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    source = textwrap.dedent(
        """
        from toolcall import hookimpl

        @hookimpl
        def toolcall_add_commands(subparsers):
            subparsers.add_parser("list")  # clashes with the built-in command
        """
    )
    site.add_plugin("tc-clash", source, ("_clash",))
    assert run(site, "list") == 0
    out = capsys.readouterr().out
    assert "tc-clash 1.0" in out
    assert "conflicting subparser" in out


# -- the installed console script -----------------------------------------------------


def test_console_script(site: Site, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "toolcall"
    if not script.exists():
        pytest.skip(f"the toolcall console script is not installed next to {sys.executable}")
    site.add_plugin("tc-script", parsers_plugin("scripted"), ("scripted",))
    site.add_plugin("tc-script-broken", "raise RuntimeError('script boom')\n", ("sbroken",))
    env = {**os.environ, "PYTHONPATH": str(site.path)}
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)

    done = subprocess.run(
        [str(script), "parse", "-p", "scripted", str(raw)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == CONTENT
    assert done.stderr == ""

    done = subprocess.run(
        [str(script), "parse", "-p", "sbroken", str(raw)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "RuntimeError: script boom" in done.stderr

    done = subprocess.run(
        [str(script), "list"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "scripted" in done.stdout
    assert "script boom" in done.stdout
    assert done.stderr == ""


# -- real processes: stdin's own text layer, a reader that goes away ------------------

COMMAND = [sys.executable, "-c", "import sys; from toolcall.cli import main; sys.exit(main())"]


def test_invalid_utf8_on_a_real_stdin(site: Site) -> None:
    site.add_plugin("tc-pipe", parsers_plugin("piped"), ("piped",))
    env = {**os.environ, "PYTHONPATH": str(site.path), "LC_ALL": "C", "PYTHONUTF8": "0"}
    done = subprocess.run(
        [*COMMAND, "parse", "-p", "piped"],
        input=b"abc\xff\xfedef",
        env=env,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr == (
        b"toolcall: cannot read stdin: not UTF-8 text (invalid start byte at byte 3)\n"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_reader_that_goes_away_ends_the_command_quietly(
    site: Site, tmp_path: Path, stream: bool
) -> None:
    """``toolcall parse ... | head -c1``: the reader takes one byte and closes the pipe."""
    site.add_plugin("tc-pipe", parsers_plugin("piped"), ("piped",))
    raw = tmp_path / "output.txt"
    raw.write_text("word " * 100_000 + OUTPUT)  # far more than a pipe holds
    argv = [*COMMAND, "parse", "-p", "piped", str(raw), *(["--stream"] if stream else [])]
    env = {**os.environ, "PYTHONPATH": str(site.path)}
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.read(1)
        process.stdout.close()
        error = process.stderr.read()
        code = process.wait(timeout=60)
    assert error == b""
    assert code == 141


def test_a_plugin_that_exits_stops_neither_list_nor_parse(site: Site, tmp_path: Path) -> None:
    """A plugin calling ``sys.exit()`` at import, under the real command in its own process."""
    site.add_plugin("tc-pipe", parsers_plugin("piped"), ("piped",))
    site.add_plugin("tc-exits", "import sys\nsys.exit('leaving')\n", ("exits",))
    env = {**os.environ, "PYTHONPATH": str(site.path)}
    raw = tmp_path / "output.txt"
    raw.write_text(OUTPUT)

    def command(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*COMMAND, *argv], env=env, capture_output=True, text=True, check=False
        )

    listed = command("list")
    assert listed.returncode == 0, listed.stderr
    assert "piped" in listed.stdout
    assert "tc-exits 1.0" in listed.stdout
    assert "import failed: SystemExit: leaving" in listed.stdout
    parsed = command("parse", "-p", "piped", str(raw))
    assert parsed.returncode == 0, parsed.stderr
    assert json.loads(parsed.stdout)["content"] == CONTENT
    claimed = command("parse", "-p", "exits", str(raw))
    assert claimed.returncode == 2
    assert claimed.stdout == ""
    assert claimed.stderr.count("\n") == 1
    assert "tc-exits 1.0" in claimed.stderr
    assert "import failed: SystemExit: leaving" in claimed.stderr
