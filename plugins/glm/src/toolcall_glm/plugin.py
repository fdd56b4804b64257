"""The ``toolcall`` plugin: the entry points ``glm45`` and ``glm47`` name this module."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Parser, hookimpl
from toolcall_glm.parser import Glm45Parser, Glm47Parser


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return [Glm45Parser, Glm47Parser]
