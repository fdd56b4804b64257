"""The ``toolcall`` plugin: the entry point ``hf`` names this module."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Parser, hookimpl
from toolcall_hf_response_template.parser import HfParser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [HfParser]
