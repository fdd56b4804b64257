"""Test modules that import vLLM when they are imported run in the vllm nox session only.

Every test in them is marked ``vllm``; where vLLM is not importable they are not collected
at all (rather than collected and skipped), so each session runs every test it collects.
"""

from __future__ import annotations

import importlib.util

#: Modules that need vLLM at import time (all their tests are marked ``vllm``).
VLLM_MODULES = [
    "core/tests/test_vllm_bridge.py",
    "core/tests/test_strictness_vllm.py",
    "core/tests/test_vllm_reasoning_mapping.py",
    "plugins/mistral/tests/test_vllm_bridge.py",
    "plugins/hf_response_template/tests/test_vllm_route.py",
]

collect_ignore = [] if importlib.util.find_spec("vllm") is not None else VLLM_MODULES
