"""The vLLM bridge: serve toolcall parsers through ``--tool-call-parser NAME``.

:func:`register` is the ``vllm.general_plugins`` entry point ``toolcall``. vLLM
runs it in every process it starts, sometimes more than once; it registers, for
every parser name the installed toolcall plugins declare (minus
``TOOLCALL_BLOCK``), a lazily built adapter class with vLLM's
``ToolParserManager``, replacing a built-in parser of the same name. It never
raises: a failure is logged as one line (logger ``toolcall``).

Importing this package does not import vLLM.
"""

from __future__ import annotations

import logging

__all__ = ["ADAPTERS_MODULE", "register"]

logger = logging.getLogger("toolcall")

#: The module vLLM imports (lazily) to get an adapter class.
ADAPTERS_MODULE = "toolcall.vllm.adapters"


def register() -> None:
    """Register every toolcall parser name with vLLM. Idempotent; never raises."""
    try:
        # Deferred: importing this package must not import vLLM.
        from toolcall.registry import Registry  # noqa: PLC0415
        from toolcall.vllm import _compat, adapters  # noqa: PLC0415

        names = Registry.load().claimed_names()
    except Exception as error:
        logger.error(
            "toolcall: could not register parsers with vLLM: %s: %s", type(error).__name__, error
        )
        return
    failed: list[str] = []
    for name in names:
        try:
            _compat.register_tool_parser(
                name,
                ADAPTERS_MODULE,
                adapters.attribute_name(name),
                lambda name=name: adapters.adapter_class(name),  # type: ignore[misc]
            )
            # vLLM composes its response-template reasoning parser (hf) only with a tool
            # parser of the same kind: ours replaces it, so the two stay combinable.
            _compat.register_template_reasoning_parser(
                name, ADAPTERS_MODULE, adapters.REASONING_PREFIX + name
            )
        except Exception as error:
            failed.append(f"{name} ({type(error).__name__}: {error})")
    if failed:
        logger.error("toolcall: could not register with vLLM: %s", "; ".join(failed))
    logger.debug("toolcall: registered with vLLM: %s", ", ".join(names) or "(none)")
