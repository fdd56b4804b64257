"""The plugin module named by the ``toolcall`` entry point ``example_tags``."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Parser, hookimpl
from toolcall_example_tags.parser import ExampleTagsParser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [ExampleTagsParser]
