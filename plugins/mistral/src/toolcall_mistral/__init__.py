"""toolcall-mistral: Mistral tool calls (``mistral``) for vLLM, every generation of the format."""

from __future__ import annotations

from toolcall_mistral.parser import MARKERS, MistralParser

__version__ = "0.1.0"

__all__ = ["MARKERS", "MistralParser", "__version__"]
