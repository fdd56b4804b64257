"""The module vLLM's lazy registry points at: one adapter class per parser name.

``toolcall.vllm.register()`` registers ``(NAME, "toolcall.vllm.adapters",
"ToolcallParser_NAME")`` with vLLM's ``ToolParserManager``. The attribute does
not exist until vLLM asks for it: the module-level ``__getattr__`` (PEP 562)
then loads the toolcall registry and builds the adapter class for that name.
Processes that never look a tool parser up (engine core, workers) pay nothing.
"""

from __future__ import annotations

import functools
import logging

from toolcall.registry import Registry
from toolcall.vllm.adapter import ADAPTER_PREFIX, ToolcallToolParser, adapter_for

__all__ = ["adapter_class", "attribute_name", "registry"]

logger = logging.getLogger("toolcall")


def attribute_name(parser_name: str) -> str:
    """The attribute of this module that holds the adapter for ``parser_name``."""
    return ADAPTER_PREFIX + parser_name


@functools.lru_cache(maxsize=1)
def registry() -> Registry:
    """The process's registry (``TOOLCALL_BLOCK`` read once, on first use)."""
    return Registry.load()


@functools.cache
def adapter_class(parser_name: str) -> type[ToolcallToolParser]:
    """The vLLM ``ToolParser`` subclass that runs the toolcall parser ``parser_name``.

    Raises the registry's ``UnknownParserError`` or ``PluginError`` (with the
    plugin's original error) when the name cannot be served; vLLM logs it.
    Logs (INFO, logger ``toolcall``) which parser and distribution serve the name:
    vLLM asks for it after its logging is set up, unlike ``register()``.
    """
    parser_class = registry().get(parser_name)
    entry = next((e for e in registry().entries() if e.name == parser_name), None)
    logger.info(
        "toolcall: vLLM tool parser %r is %s.%s from %s",
        parser_name,
        parser_class.__module__,
        parser_class.__qualname__,
        f"{entry.distribution} {entry.version}" if entry is not None else "an unknown distribution",
    )
    return adapter_for(parser_class, parser_name)


def __getattr__(attribute: str) -> type[ToolcallToolParser]:
    if attribute.startswith(ADAPTER_PREFIX) and len(attribute) > len(ADAPTER_PREFIX):
        return adapter_class(attribute[len(ADAPTER_PREFIX) :])
    msg = f"module {__name__!r} has no attribute {attribute!r}"
    raise AttributeError(msg)
