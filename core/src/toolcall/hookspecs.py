"""The hooks a ``toolcall`` plugin implements (pluggy project name ``toolcall``).

A plugin is a module (or any object) named by an entry point of the group
``toolcall``; the entry name is a parser name the distribution claims::

    [project.entry-points.toolcall]
    my_format = "my_package.plugin"

and ``my_package/plugin.py`` implements the hooks it needs::

    from toolcall import hookimpl

    @hookimpl
    def toolcall_parsers():
        return [MyParser]
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pluggy

if TYPE_CHECKING:
    from toolcall.parser import Parser

__all__ = [
    "PROJECT",
    "Subparsers",
    "hookimpl",
    "hookspec",
    "toolcall_add_commands",
    "toolcall_parser_from_chat_template",
    "toolcall_parser_from_data",
    "toolcall_parsers",
]

#: The pluggy project name, which is also the entry-point group.
PROJECT = "toolcall"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@hookspec
def toolcall_parsers() -> Sequence[type[Parser]]:  # type: ignore[empty-body]
    """Return the parser classes this plugin provides.

    Each class is a :class:`toolcall.Parser` subclass whose ``name`` is the
    ``--tool-call-parser`` name; declare every such name as an entry-point name
    of the ``toolcall`` group, so that vLLM sees it without importing the plugin.
    """


@hookspec(firstresult=True)
def toolcall_parser_from_data(name: str, data: Mapping[str, Any]) -> type[Parser] | None:
    """Make the parser ``name`` from data a distribution ships instead of code.

    A distribution registers such a parser with an entry point whose value names a JSON
    resource, ``package:path/to/file.json`` (the package may hold no code at all)::

        [project.entry-points.toolcall]
        my_model = "my_templates:my_model.json"

    The registry reads the JSON and asks the installed plugins; the first that knows the
    data returns a :class:`~toolcall.Parser` subclass named ``name`` (and may raise to say
    the data is wrong); the others return ``None``.
    """


@hookspec(firstresult=True)
def toolcall_parser_from_chat_template(chat_template: str) -> type[Parser] | None:
    """Make a parser from a model's chat template (its Jinja text), whose format is the
    way the template writes an assistant's tool calls.

    ``toolcall parse --chat-template FILE`` asks the installed plugins; the first that
    can derive one returns a :class:`~toolcall.Parser` subclass, and raises
    ``ValueError`` with the reason for a template it reads but cannot derive a format
    from; a plugin that does not derive parsers returns ``None``.
    """


@hookspec
def toolcall_add_commands(subparsers: Subparsers) -> None:
    """Add subcommands to the ``toolcall`` command.

    Each subcommand sets ``func`` to a callable taking the parsed
    ``argparse.Namespace`` and returning the exit code, via ``set_defaults``.
    """
