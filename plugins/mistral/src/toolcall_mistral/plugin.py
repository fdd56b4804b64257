"""The ``toolcall`` plugin: the entry point ``mistral`` names this module."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Parser, hookimpl
from toolcall_mistral.parser import MistralParser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [MistralParser]
