"""The ``toolcall`` plugin: registered under the entry names ``hermes`` and ``qwen3_json``."""

from __future__ import annotations

from collections.abc import Sequence

from toolcall import hookimpl
from toolcall.parser import Parser
from toolcall_hermes.parser import HermesParser, Qwen3JsonParser

__all__ = ["toolcall_parsers"]


@hookimpl
def toolcall_parsers() -> Sequence[type[Parser]]:
    return (HermesParser, Qwen3JsonParser)
