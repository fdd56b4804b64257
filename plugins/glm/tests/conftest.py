"""Fixtures of the GLM plugin's tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def glm_tokenizer() -> Any:
    """The real GLM-4.5 tokenizer (built offline by the conformance kit)."""
    from toolcall_conformance.tokenizers import get_tokenizer

    return get_tokenizer("glm4.5")
