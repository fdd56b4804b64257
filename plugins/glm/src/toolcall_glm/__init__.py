"""toolcall-glm: GLM-4.5 / 4.6 / 4.7 tool calls (``glm45``, ``glm47``) for vLLM."""

from __future__ import annotations

from toolcall_glm.parser import MARKERS, Glm45Parser, Glm47Parser

__version__ = "0.1.0"

__all__ = ["MARKERS", "Glm45Parser", "Glm47Parser", "__version__"]
