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
from typing import Any

from toolcall.registry import Registry
from toolcall.vllm.adapter import ADAPTER_PREFIX, ToolcallToolParser, adapter_for
from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS

#: Reasoning parser classes are attributes ``REASONING_PREFIX + NAME`` of this module.
REASONING_PREFIX = "ToolcallReasoning_"

__all__ = ["REASONING_PREFIX", "adapter_class", "attribute_name", "reasoning_class", "registry"]

logger = logging.getLogger("toolcall")


def attribute_name(parser_name: str) -> str:
    """The attribute of this module that holds the adapter for ``parser_name``."""
    return ADAPTER_PREFIX + parser_name


@functools.lru_cache(maxsize=1)
def registry() -> Registry:
    """The process's registry (``TOOLCALL_BLOCK`` read once, on first use).

    Loading it imports the plugins; it then says, once per process and through vLLM's
    logging, which distribution serves each name (``hermes → toolcall-hermes 0.1.0``),
    and the registry reports every broken plugin. vLLM first asks for a tool parser
    after it has set its logging up (at the API server's start-up, in each API server
    process), which ``register()``, run during argument parsing, cannot wait for.
    """
    loaded = Registry.load()
    for entry in loaded.entries():
        replaces = "replaces vLLM's built-in" if entry.name in VLLM_BUILTIN_TOOL_PARSERS else "new"
        logger.info(
            "toolcall: %s → %s %s (%s.%s; %s)",
            entry.name,
            entry.distribution,
            entry.version,
            entry.parser_class.__module__,
            entry.parser_class.__qualname__,
            replaces,
        )
    return loaded


@functools.cache
def adapter_class(parser_name: str) -> type[ToolcallToolParser]:
    """The vLLM ``ToolParser`` subclass that runs the toolcall parser ``parser_name``.

    Raises the registry's ``UnknownParserError`` or ``PluginError`` (with the
    plugin's original error) when the name cannot be served; vLLM logs it.
    """
    parser_class = registry().get(parser_name)
    if parser_class.whole_message:
        from toolcall.vllm import template_route  # noqa: PLC0415

        return template_route.tool_adapter(parser_class, parser_name)
    return adapter_for(parser_class, parser_name)


@functools.cache
def reasoning_class(parser_name: str) -> type[Any]:
    """The reasoning parser vLLM gets under ``parser_name`` (registered only over vLLM's
    response-template reasoning parser, see ``toolcall.vllm.register``): ours, composed
    with our parser of the whole message, if the toolcall parser of that name is one;
    else vLLM's own, unchanged."""
    from toolcall.vllm import template_route  # noqa: PLC0415

    try:
        parser_class = registry().get(parser_name)
    except Exception:
        parser_class = None
    if parser_class is None or not parser_class.whole_message:
        return template_route.vllm_reasoning_class()
    return template_route.reasoning_class(parser_class, parser_name)


def __getattr__(attribute: str) -> type[Any]:
    if attribute.startswith(ADAPTER_PREFIX) and len(attribute) > len(ADAPTER_PREFIX):
        return adapter_class(attribute[len(ADAPTER_PREFIX) :])
    if attribute.startswith(REASONING_PREFIX) and len(attribute) > len(REASONING_PREFIX):
        return reasoning_class(attribute[len(REASONING_PREFIX) :])
    msg = f"module {__name__!r} has no attribute {attribute!r}"
    raise AttributeError(msg)
