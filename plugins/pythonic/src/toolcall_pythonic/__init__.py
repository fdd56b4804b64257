"""toolcall-pythonic: Python-call tool calls (``pythonic``, ``olmo3``) for vLLM."""

from __future__ import annotations

from toolcall_pythonic.parser import Olmo3Parser, PythonicParser

__version__ = "0.1.0"

__all__ = ["Olmo3Parser", "PythonicParser", "__version__"]
