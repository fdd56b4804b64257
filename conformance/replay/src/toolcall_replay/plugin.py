"""The ``vllm.general_plugins`` entry point ``toolcall_replay``.

vLLM calls ``register()`` in every process it starts, sometimes more than once. Without
``TOOLCALL_REPLAY`` in the environment it returns at once and imports nothing. With it, it
checks the vLLM internals it needs (``seams.check_seams``) and installs the replay engine; a
moved internal stops ``vllm serve`` at start-up with a ``SeamError`` that names it.

Environment (names deliberately outside ``VLLM_*``: vLLM warns about unknown variables of its own):

``TOOLCALL_REPLAY``
    path of the replay script (JSON, see ``toolcall_replay.script``); switches the replay on.
``TOOLCALL_REPLAY_LOG``
    optional path of a JSON-lines request log, one line per engine request, finish and abort.
``TOOLCALL_REPLAY_TOKENS_PER_STEP``
    optional server-wide regrouping of every recording into k ids per engine step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_SCRIPT = "TOOLCALL_REPLAY"
ENV_LOG = "TOOLCALL_REPLAY_LOG"
ENV_TOKENS_PER_STEP = "TOOLCALL_REPLAY_TOKENS_PER_STEP"


@dataclass(frozen=True)
class Settings:
    script: Path
    request_log: Path | None
    tokens_per_step: int | None


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings | None:
    env = os.environ if environ is None else environ
    script = env.get(ENV_SCRIPT)
    if not script:
        return None
    log = env.get(ENV_LOG)
    k_text = env.get(ENV_TOKENS_PER_STEP)
    k: int | None = None
    if k_text:
        try:
            k = int(k_text)
        except ValueError:
            k = 0
        if k < 1:
            raise ValueError(f"{ENV_TOKENS_PER_STEP} must be an integer >= 1, not {k_text!r}")
    return Settings(Path(script), Path(log) if log else None, k)


def register() -> None:
    if settings_from_env() is None:
        return
    from toolcall_replay.seams import install  # noqa: PLC0415 - vLLM is imported only when on

    install()
