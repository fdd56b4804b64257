"""The vllm.general_plugins entry point: inert and cheap without TOOLCALL_REPLAY."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolcall_replay import plugin


def test_without_the_variable_the_plugin_imports_nothing() -> None:
    code = (
        "import sys, toolcall_replay.plugin as p; p.register(); "
        "print(sorted(m for m in sys.modules if m == 'vllm' or m.startswith('toolcall_replay.')))"
    )
    env = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['toolcall_replay.plugin']"


def test_settings_come_from_the_environment() -> None:
    assert plugin.settings_from_env({}) is None
    s = plugin.settings_from_env(
        {plugin.ENV_SCRIPT: "/s.json", plugin.ENV_LOG: "/l.jsonl", plugin.ENV_TOKENS_PER_STEP: "4"}
    )
    assert s is not None
    assert (str(s.script), str(s.request_log), s.tokens_per_step) == ("/s.json", "/l.jsonl", 4)
    with pytest.raises(ValueError, match="TOOLCALL_REPLAY_TOKENS_PER_STEP"):
        plugin.settings_from_env({plugin.ENV_SCRIPT: "/s.json", plugin.ENV_TOKENS_PER_STEP: "0"})
