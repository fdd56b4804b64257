"""toolcall-llama: Llama 3.x and Llama 4 tool-call parsers for vLLM."""

from __future__ import annotations

from toolcall_llama.json_calls import JsonCallStream, Llama3JsonParser, Llama4JsonParser
from toolcall_llama.python_calls import Llama4PythonicParser, PythonicCallStream

__version__ = "0.1.0"

__all__ = [
    "JsonCallStream",
    "Llama3JsonParser",
    "Llama4JsonParser",
    "Llama4PythonicParser",
    "PythonicCallStream",
    "__version__",
]
