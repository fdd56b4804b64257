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
from toolcall_hf_response_template.parser import HfParser, template_parser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [HfParser]


@hookimpl
def toolcall_parser_from_data(name: str, data: Mapping[str, Any]) -> type[Parser] | None:
    if "fields" in data or isinstance(data.get("response_template"), Mapping):
        return template_parser(name, data)
    return None
