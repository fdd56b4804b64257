"""The ``toolcall`` plugin: registered under ``llama3_json``, ``llama4_json`` and
``llama4_pythonic``."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import hookimpl
from toolcall.parser import Parser
from toolcall_llama.json_calls import Llama3JsonParser, Llama4JsonParser
from toolcall_llama.python_calls import Llama4PythonicParser

__all__ = ["toolcall_parsers"]


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return (Llama3JsonParser, Llama4JsonParser, Llama4PythonicParser)
