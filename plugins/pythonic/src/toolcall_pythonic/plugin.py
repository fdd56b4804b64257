"""The ``toolcall`` plugin: the entry points ``pythonic`` and ``olmo3`` name this module."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import Parser, hookimpl
from toolcall_pythonic.parser import Olmo3Parser, PythonicParser

__all__ = ["toolcall_parsers"]


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return (PythonicParser, Olmo3Parser)
