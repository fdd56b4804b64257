"""toolcall-replay: vLLM 0.33's real OpenAI server on CPU, with an engine core that replays
recorded token steps (test support for toolcall's end-to-end tests).

The names below load on first use, so that vLLM's plugin loader, which imports
``toolcall_replay.plugin`` in every vLLM process, pays for nothing else.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Recording": "toolcall_replay.script",
    "ReplayScript": "toolcall_replay.script",
    "ScriptError": "toolcall_replay.script",
    "case_marker": "toolcall_replay.script",
    "ReplayServer": "toolcall_replay.server",
    "ServerError": "toolcall_replay.server",
    "build_model_dir": "toolcall_replay.model_dir",
    "read_request_log": "toolcall_replay.requestlog",
}

__all__ = [
    "Recording",
    "ReplayScript",
    "ReplayServer",
    "ScriptError",
    "ServerError",
    "build_model_dir",
    "case_marker",
    "read_request_log",
]

if TYPE_CHECKING:
    from toolcall_replay.model_dir import build_model_dir
    from toolcall_replay.requestlog import read_request_log
    from toolcall_replay.script import Recording, ReplayScript, ScriptError, case_marker
    from toolcall_replay.server import ReplayServer, ServerError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolcall_replay' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
