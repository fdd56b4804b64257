"""The ``toolcall conformance`` subcommand, added through the ``toolcall_add_commands`` hook.

This module is the plugin behind the ``toolcall`` entry point ``_conformance`` (a name
starting with ``_`` claims no parser name). It offers no parsers.

* ``toolcall conformance [-p NAME ...] [--cases DIR ...] [--json] [--against-vllm]
  [--no-grammar]`` prints the scorecard (:mod:`toolcall_conformance.scorecard`);
* ``toolcall conformance build ...`` writes a case from a raw output
  (:mod:`toolcall_conformance.builder`);
* ``toolcall record ...`` records raw outputs from a running OpenAI-compatible server as
  cases (:mod:`toolcall_conformance.recorder`);
* ``toolcall new-plugin NAME`` writes a parser package that passes the kit
  (:mod:`toolcall_conformance.newplugin`).
"""

from __future__ import annotations

import argparse

from toolcall import hookimpl
from toolcall.hookspecs import Subparsers
from toolcall_conformance import builder, newplugin, recorder, scorecard

__all__ = ["toolcall_add_commands"]


@hookimpl
def toolcall_add_commands(subparsers: Subparsers) -> None:
    """Add ``toolcall conformance`` (the scorecard), ``toolcall conformance build``,
    ``toolcall record`` and ``toolcall new-plugin``."""
    command = subparsers.add_parser(
        "conformance",
        help="run the conformance kit and print a scorecard",
        description=(
            "Replay the conformance cases through installed parsers (one-shot, recorded "
            "steps, one token, one character and random splits per step, the delta "
            "contract, the grammar check) and print a scorecard. Exit status 0 only if "
            "every check passed. 'toolcall conformance build --help' writes new cases."
        ),
    )
    scorecard.add_arguments(command)
    command.set_defaults(func=scorecard.main)
    nested = command.add_subparsers(dest="conformance_command", metavar="{build}")
    build = nested.add_parser(
        "build",
        help="write a case file from a raw output, with real token ids",
        description="Write a conformance case from a raw output, with real token ids.",
    )
    _add_build(build)
    _add_record(subparsers)
    _add_new_plugin(subparsers)


def _add_new_plugin(subparsers: Subparsers) -> None:
    command = subparsers.add_parser(
        "new-plugin",
        help="write a new parser package that passes the conformance kit",
        description=(
            "Write toolcall-NAME/: a parser package for the parser NAME, built on "
            "toolcall.CallStream and registered through the toolcall entry point, with a "
            "ConformanceSuite test and example cases. It builds, installs and passes the kit "
            "as written; then change the format to yours (docs/writing-a-parser.md)."
        ),
    )
    newplugin.add_arguments(command)
    command.set_defaults(func=newplugin.run)


def _add_build(build: argparse.ArgumentParser) -> None:
    builder.add_build_arguments(build)
    build.set_defaults(func=builder.run_build)


def _add_record(subparsers: Subparsers) -> None:
    record = subparsers.add_parser(
        "record",
        help="record raw outputs from an OpenAI-compatible server as cases",
        description=(
            "Send each request of a JSON-lines file to a running OpenAI-compatible server "
            "(streamed, tool parsing off: tools are sent with tool_choice 'none') and write "
            "one case per request, with the streamed chunks as steps, the server's token ids "
            "where it returns them (vLLM: return_token_ids), provenance 'recorded', and "
            "'expected' left for review."
        ),
    )
    recorder.add_record_arguments(record)
    record.set_defaults(func=recorder.run_record)
