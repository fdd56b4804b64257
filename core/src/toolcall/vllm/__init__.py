"""The vLLM bridge: serve toolcall parsers through ``--tool-call-parser NAME``.

:func:`register` is the ``vllm.general_plugins`` entry point ``toolcall``. vLLM
runs it in every process it starts, sometimes more than once; it registers, for
every parser name the installed toolcall plugins declare (minus
``TOOLCALL_BLOCK``), a lazily built adapter class with vLLM's
``ToolParserManager``, replacing a built-in parser of the same name. It never
raises: a failure is logged as one line.

Everything the ``toolcall`` logger says inside vLLM goes through vLLM's own
logging (:func:`route_logging`), so that under a plain ``vllm serve`` it shows where
and as vLLM's lines show.

Importing this package does not import vLLM.
"""

from __future__ import annotations

import logging

__all__ = ["ADAPTERS_MODULE", "VLLM_LOGGER", "VllmLogHandler", "register", "route_logging"]

logger = logging.getLogger("toolcall")

#: The module vLLM imports (lazily) to get an adapter class.
ADAPTERS_MODULE = "toolcall.vllm.adapters"
#: The logger vLLM's logging configuration gives its handler (``vllm.logger``).
VLLM_LOGGER = "vllm"


class VllmLogHandler(logging.Handler):
    """Hands the ``toolcall`` logger's records to the handlers of vLLM's ``vllm`` logger,
    each filtered by its own level, so they are printed in vLLM's format wherever vLLM's
    own lines go. Before vLLM has set its logging up (``register`` runs during argument
    parsing, before it), warnings and errors go where Python's last resort sends them.
    """

    def emit(self, record: logging.LogRecord) -> None:
        handlers = logging.getLogger(VLLM_LOGGER).handlers
        if not handlers:
            last = logging.lastResort
            if last is not None and record.levelno >= last.level:
                last.handle(record)
            return
        for handler in handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


def route_logging() -> None:
    """Send the ``toolcall`` logger through vLLM's logging, unless it has handlers already.

    vLLM's default logging configuration sets up only its ``vllm`` logger, so without
    this our lines (which parser serves a name, a broken plugin, a failing stream) would
    reach no handler under ``vllm serve``. A logging configuration that names the
    ``toolcall`` logger (``VLLM_LOGGING_CONFIG_PATH``) replaces this handler, as
    ``logging.config`` replaces the handlers of every logger it configures. The logger
    lets every level through; vLLM's handlers apply ``VLLM_LOGGING_LEVEL``.
    """
    toolcall_logger = logging.getLogger("toolcall")
    if toolcall_logger.handlers:
        return
    toolcall_logger.addHandler(VllmLogHandler())
    if toolcall_logger.level == logging.NOTSET:
        toolcall_logger.setLevel(logging.DEBUG)


def register() -> None:
    """Register every toolcall parser name with vLLM. Idempotent; never raises."""
    try:
        route_logging()
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
