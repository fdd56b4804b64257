"""toolcall-conformance: the kit every toolcall parser must pass.

Real tokenizers built offline (:mod:`toolcall_conformance.tokenizers`), the case format and
the shipped corpus (:mod:`toolcall_conformance.cases`), and the case builder
(:mod:`toolcall_conformance.builder`).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
