"""toolcall-hermes: the Hermes / Qwen ``<tool_call>`` JSON tool-call parser for vLLM."""

from __future__ import annotations

from toolcall_hermes.parser import HermesParser, HermesStream, Qwen3JsonParser

__version__ = "0.1.0"

__all__ = ["HermesParser", "HermesStream", "Qwen3JsonParser", "__version__"]
