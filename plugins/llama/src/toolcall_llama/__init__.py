"""toolcall-llama: Llama 3.x and Llama 4 tool-call parsers for vLLM."""

from __future__ import annotations

from toolcall_llama.json_calls import JsonCallStream, Llama3JsonParser, Llama4JsonParser

__version__ = "0.1.0"

__all__ = ["JsonCallStream", "Llama3JsonParser", "Llama4JsonParser", "__version__"]
