"""The ``toolcall`` command.

``toolcall list`` shows the installed parsers; ``toolcall parse -p NAME [FILE]``
turns a raw model output into the OpenAI assistant message (``--stream`` shows
the deltas instead); with ``--chat-template FILE`` instead of ``-p``, the parser is
the one a plugin derives from that chat template (hook
``toolcall_parser_from_chat_template``). Other distributions add subcommands through
the ``toolcall_add_commands`` hook.

Errors a user can fix (an unreadable or non-UTF-8 input, an unknown or broken
parser, a malformed tools file) print one line on stderr and exit with status 2.
A reader that goes away (``toolcall parse ... | head``) ends the command quietly
with status 141, as a program killed by ``SIGPIPE`` reports it in a shell.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from toolcall.parser import Parser, ParserContext, strict_parsing_from_env
from toolcall.registry import ParserEntry, Registry, RegistryError
from toolcall.types import Delta, Request
from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS, VLLM_VERSION

__all__ = ["CommandError", "build_parser", "delta_to_openai", "main"]

#: Exit status for errors in the user's input or environment.
EXIT_USAGE = 2
#: Exit status when a parser itself fails.
EXIT_FAILURE = 1
#: Exit status when stdout is closed under us (128 + SIGPIPE, as a shell reports it).
EXIT_BROKEN_PIPE = 141


class CommandError(Exception):
    """A failure reported as one line on stderr."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


def main(argv: Sequence[str] | None = None, *, registry: Registry | None = None) -> int:
    """Run the command; returns the exit status."""
    # Plugin failures are shown by `toolcall list` and in error messages; keep
    # logging's last-resort handler from repeating them on every command.
    toolcall_logger = logging.getLogger("toolcall")
    if not toolcall_logger.handlers:
        toolcall_logger.addHandler(logging.NullHandler())
    registry = registry if registry is not None else Registry.load()
    parser, command_problems = build_parser(registry)
    args = parser.parse_args(argv)
    args.command_problems = command_problems
    try:
        status: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_gone()
    except CommandError as error:
        print(f"toolcall: {error}", file=sys.stderr)
        return error.status
    except RegistryError as error:
        print(f"toolcall: {error}", file=sys.stderr)
        return EXIT_USAGE
    return status


def _reader_gone() -> int:
    """stdout's reader closed the pipe: stop without a word. Whatever is still buffered
    for stdout would fail again when the interpreter flushes it at exit, so stdout is
    pointed at ``/dev/null`` first."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (a test's capture)
        pass
    return EXIT_BROKEN_PIPE


def build_parser(registry: Registry) -> tuple[argparse.ArgumentParser, list[str]]:
    """The argument parser, with the plugins' subcommands; and the plugins that failed."""
    parser = argparse.ArgumentParser(
        prog="toolcall", description="Tool-call parsers for vLLM: inspect and try them."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    list_parser = subparsers.add_parser(
        "list", help="show the installed parsers and the vLLM built-ins they replace"
    )
    list_parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    list_parser.set_defaults(func=lambda args: _list(registry, args))

    parse_parser = subparsers.add_parser(
        "parse",
        help="parse a raw model output into an OpenAI assistant message",
        description=(
            "Read a raw model output (FILE, or stdin for '-') and print the assistant "
            "message the parser makes of it. With --stream, feed the text to the "
            "parser's stream in steps of --chunk characters (default 1) and print each "
            "delta it releases as one JSON line, then what finish() releases."
        ),
    )
    chosen = parse_parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("-p", "--parser", metavar="NAME", help="parser name")
    chosen.add_argument(
        "--chat-template",
        metavar="FILE",
        help=(
            "a model's chat template (a Jinja file, a tokenizer_config.json, or a model "
            "directory holding either): parse with the format derived from it"
        ),
    )
    parse_parser.add_argument(
        "file", nargs="?", default="-", metavar="FILE", help="raw output file ('-': stdin)"
    )
    parse_parser.add_argument(
        "--tools",
        metavar="FILE",
        help=(
            "JSON file: a list of OpenAI tools, or a request object with tools, "
            "tool_choice and parallel_tool_calls"
        ),
    )
    parse_parser.add_argument(
        "--stream", action="store_true", help="print the streamed deltas as JSON lines"
    )
    parse_parser.add_argument(
        "--chunk",
        type=_positive_int,
        default=1,
        metavar="N",
        help="characters per streaming step (default: 1)",
    )
    parse_parser.set_defaults(func=lambda args: _parse(registry, args))

    problems = registry.add_commands(subparsers)
    return parser, problems


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        msg = f"expected a positive integer, got {value!r}"
        raise argparse.ArgumentTypeError(msg)
    return number


# -- toolcall list ---------------------------------------------------------------------


def _replaces(name: str) -> str:
    return name if name in VLLM_BUILTIN_TOOL_PARSERS else ""


def _class_path(entry: ParserEntry) -> str:
    return f"{entry.parser_class.__module__}.{entry.parser_class.__qualname__}"


def _list(registry: Registry, args: argparse.Namespace) -> int:
    entries = registry.entries()
    problems = [*registry.problems, *args.command_problems]
    if args.json:
        data = {
            "parsers": [
                {
                    "name": entry.name,
                    "class": _class_path(entry),
                    "distribution": entry.distribution,
                    "version": entry.version,
                    "replaces": _replaces(entry.name) or None,
                }
                for entry in entries
            ],
            "problems": problems,
        }
        print(json.dumps(data, indent=2))
        return 0
    if entries:
        rows = [
            (
                entry.name,
                _class_path(entry),
                entry.distribution,
                entry.version,
                _replaces(entry.name) or "-",
            )
            for entry in entries
        ]
        _print_table(rows)
    else:
        print(
            "No toolcall parsers are installed: no distribution declares an entry point "
            "in the 'toolcall' group (try: pip install toolcall-hermes)."
        )
    if problems:
        print()
        print("Problems:")
        for line in problems:
            print(f"  - {line}")
    return 0


_HEADERS = ("parser", "class", "distribution", "version", f"replaces vLLM {VLLM_VERSION}")


def _print_table(
    rows: Sequence[tuple[str, ...]], out: TextIO | None = None, *, styled: bool | None = None
) -> None:
    """A rich table on a terminal (if rich is installed), else plain aligned columns."""
    out = out if out is not None else sys.stdout
    if styled is None:
        styled = out.isatty()
    if styled:
        try:
            from rich.console import Console  # noqa: PLC0415 - optional dependency
            from rich.table import Table  # noqa: PLC0415
        except ImportError:
            styled = False
    if not styled:
        _print_plain_table(rows, out)
        return
    table = Table(*_HEADERS, box=None, header_style="bold", pad_edge=False)
    for row in rows:
        table.add_row(*row)
    for column in table.columns:
        column.overflow = "fold"
    Console(file=out).print(table)


def _print_plain_table(rows: Sequence[tuple[str, ...]], out: TextIO) -> None:
    widths = [max(len(cell) for cell in column) for column in zip(_HEADERS, *rows, strict=False)]
    for row in (_HEADERS, *rows):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print(line.rstrip(), file=out)


# -- toolcall parse --------------------------------------------------------------------


def _read_text(file: str) -> str:
    """``file`` (``-``: stdin) as strict UTF-8: stdin's own text layer would turn
    invalid bytes into replacement characters or lone surrogates without a word."""
    name = "stdin" if file == "-" else file
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        msg = f"cannot read {name}: not UTF-8 text ({error.reason} at byte {error.start})"
        raise CommandError(msg) from error
    except OSError as error:
        msg = f"cannot read {name}: {error.strerror or error}"
        raise CommandError(msg) from error


def _read_request(file: str | None) -> Request:
    """The request view from a ``--tools`` file (no file: no tools, ``auto``)."""
    if file is None:
        return Request()
    text = _read_text(file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        msg = f"malformed tools file {file}: {error}"
        raise CommandError(msg) from error
    except RecursionError as error:
        msg = f"malformed tools file {file}: nested too deeply to read"
        raise CommandError(msg) from error
    if isinstance(data, list):
        data = {"tools": data}
    if not isinstance(data, dict):
        msg = f"malformed tools file {file}: expected a list of tools or a request object"
        raise CommandError(msg)
    tools = data.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        msg = f"malformed tools file {file}: 'tools' must be a list of objects"
        raise CommandError(msg)
    try:
        return Request.from_openai(data)
    except ValueError as error:
        msg = f"malformed tools file {file}: {error}"
        raise CommandError(msg) from error


def delta_to_openai(delta: Delta) -> dict[str, Any]:
    """A delta as the ``delta`` of an OpenAI streaming chunk (unset fields left out)."""
    data: dict[str, Any] = {}
    if delta.content:
        data["content"] = delta.content
    calls: list[dict[str, Any]] = []
    for entry in delta.tool_calls:
        call: dict[str, Any] = {"index": entry.index}
        function: dict[str, str] = {}
        if entry.id is not None:
            call["id"] = entry.id
            call["type"] = "function"
        if entry.name is not None:
            function["name"] = entry.name
        if entry.arguments:
            function["arguments"] = entry.arguments
        if function:
            call["function"] = function
        calls.append(call)
    if calls:
        data["tool_calls"] = calls
    return data


def _print_deltas(deltas: Sequence[Delta]) -> None:
    for delta in deltas:
        if delta:
            print(json.dumps(delta_to_openai(delta), ensure_ascii=False))


def _chat_template_parser(registry: Registry, file: str) -> type[Parser]:
    path = Path(file)
    if path.is_dir():
        found = [path / name for name in ("chat_template.jinja", "tokenizer_config.json")]
        path = next((candidate for candidate in found if candidate.is_file()), found[-1])
    text = _read_text(str(path))
    try:
        return registry.from_chat_template(text)
    except (LookupError, ValueError) as error:
        raise CommandError(f"{file}: {error}") from None


def _parse(registry: Registry, args: argparse.Namespace) -> int:
    if args.chat_template is not None:
        parser_class = _chat_template_parser(registry, args.chat_template)
    else:
        parser_class = registry.get(args.parser)
    request = _read_request(args.tools)
    text = _read_text(args.file)
    context = ParserContext(request=request, strict_parsing=strict_parsing_from_env())
    try:
        parser = parser_class(context)
        if not args.stream:
            message = parser.parse(text).to_openai()
            print(json.dumps(message, ensure_ascii=False, indent=2))
            return 0
        stream = parser.stream()
        for start in range(0, len(text), args.chunk):
            _print_deltas(stream.feed(text[start : start + args.chunk]))
        _print_deltas(stream.finish())
    except BrokenPipeError:
        raise  # the reader went away: not the parser's failure
    except Exception as error:
        msg = f"parser {parser_class.name!r} failed: {type(error).__name__}: {error}"
        raise CommandError(msg, EXIT_FAILURE) from error
    return 0
