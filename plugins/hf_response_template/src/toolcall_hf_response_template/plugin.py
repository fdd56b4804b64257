"""The ``toolcall`` plugin: the entry point ``hf`` names this module.

It also reads the data of parsers made of a template alone: a distribution that ships a
response template (``{"response_template": {...}}``, or the template itself) registers a
named parser with an entry point naming the JSON file, and no code::

    [project.entry-points.toolcall]
    my_model = "my_model_templates:my_model.json"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolcall import Parser, hookimpl
from toolcall.hookspecs import Subparsers
from toolcall_hf_response_template.auto import AutoParser, parser_from_chat_template
from toolcall_hf_response_template.cli import add_derive
from toolcall_hf_response_template.parser import HfParser, template_parser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [HfParser, AutoParser]


@hookimpl
def toolcall_parser_from_chat_template(chat_template: str) -> type[Parser] | None:
    return parser_from_chat_template(chat_template)


@hookimpl
def toolcall_add_commands(subparsers: Subparsers) -> None:
    add_derive(subparsers)


@hookimpl
def toolcall_parser_from_data(name: str, data: Mapping[str, Any]) -> type[Parser] | None:
    if "fields" in data or isinstance(data.get("response_template"), Mapping):
        return template_parser(name, data)
    return None
