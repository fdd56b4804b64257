"""Structural tags for the Mistral formats (stub)."""

from __future__ import annotations

from typing import Any

from toolcall.strictness import Plan
from toolcall.types import Vocabulary


def structural_tag(plan: Plan, vocabulary: Vocabulary) -> dict[str, Any] | None:
    del plan, vocabulary
    return None
