"""The server benchmark's configurations and tables, without a server (no clock is looked
at): the floor is served through vLLM's ``--tool-parser-plugin`` with our plugin loaded, and
``--parser all`` picks each installed name with a vLLM built-in once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toolcall.registry import Registry
from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS
from toolcall_bench.serve import CONFIGURATIONS, FLOOR_PLUGIN, summary, with_builtins


def test_the_floor_is_its_own_parser_with_our_plugin_loaded() -> None:
    floor, ours = CONFIGURATIONS["floor"], CONFIGURATIONS["ours"]
    assert floor.plugin is ours.plugin is True
    assert floor.arguments() == ("--tool-parser-plugin", str(FLOOR_PLUGIN))
    assert FLOOR_PLUGIN.is_file()
    # The server imports the floor's package from the benchmark folder.
    [folder, *_] = floor.environment()["PYTHONPATH"].split(os.pathsep)
    assert (Path(folder) / "toolcall_bench" / "floor_plugin.py").is_file()
    assert ours.environment() == {}
    assert ours.arguments() == CONFIGURATIONS["builtin"].arguments() == ()
    assert ours.tool_call_parser("hermes") == "hermes"
    assert CONFIGURATIONS["builtin"].plugin is False
    assert CONFIGURATIONS["none"].tool_call_parser("hermes") is None


def test_all_is_every_name_with_a_builtin_once() -> None:
    registry = Registry.load()
    names = with_builtins(registry)
    assert set(names) <= VLLM_BUILTIN_TOOL_PARSERS & set(registry.names())
    assert {"hermes", "glm47", "mistral", "llama3_json", "pythonic"} <= set(names)
    # qwen3_json is hermes's class under a second name, and glm45 glm47's format family.
    classes = [registry.get(name) for name in names]
    assert len({(c.corpus or c.name, c.stream) for c in classes}) == len(names)


def _results(parser: str, ours: float, builtin: float, floor: float) -> dict[str, Any]:
    return {
        "output": {"parser": parser},
        "median_cpu_us_per_token": {"ours": ours, "builtin": builtin, "floor": floor, "none": 1.0},
        "ratio_ours_to_floor": ours / floor,
        "ratio_above_floor": (ours - floor) / (builtin - floor),
    }


def test_the_summary_has_a_row_per_name() -> None:
    text = summary(
        [_results("hermes", 110.0, 200.0, 100.0), _results("glm47", 105.0, 150.0, 100.0)]
    )
    rows = [line for line in text.splitlines() if line.startswith(("| hermes", "| glm47"))]
    assert rows == [
        "| hermes | 110.00 | 200.00 | 100.00 | 1.00 | 1.10 | 0.10 |",
        "| glm47 | 105.00 | 150.00 | 100.00 | 1.00 | 1.05 | 0.10 |",
    ]
