"""The server-level benchmark keeps working: its smoke run (8 streams, one round) through
four real ``vllm serve`` processes with the replay engine. Nothing here looks at a clock's
value: only that every configuration ran and streamed right, and that the JSON and the
table are well formed."""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Any

import pytest

from toolcall_bench.serve import CONFIGURATIONS, LABELS, SMOKE, main, markdown

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None, reason="needs vLLM 0.33 (the vllm nox session)"
    ),
]

#: Servers up at once: all four (the default) where the machine can hold them; a shared
#: development machine may ask for one at a time.
AT_ONCE = os.environ.get("TOOLCALL_SERVE_BENCH_AT_ONCE", "4")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    output = tmp_path_factory.mktemp("serve")
    assert main(["--smoke", "--at-once", AT_ONCE, "--output", str(output)]) == 0
    [path] = output.glob("serve-*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["json"] == path.name
    return data


def test_every_configuration_streamed_right(results: dict[str, Any]) -> None:
    assert results["settings"]["smoke"] is True
    assert set(results["configurations"]) == set(CONFIGURATIONS)
    assert set(CONFIGURATIONS) == {"ours", "builtin", "floor", "none"}
    for runs in results["configurations"].values():
        assert len(runs["cpu_us_per_token"]) == SMOKE.rounds
        assert runs["problems"] == [None] * SMOKE.rounds
        assert all(
            tokens == results["output"]["tokens"] * SMOKE.streams for tokens in runs["tokens"]
        )
        assert all(count >= 1 for count in runs["processes"])
        assert runs["startup_s"] > 0
    for key in CONFIGURATIONS:
        assert results["median_cpu_us_per_token"][key] > 0


def test_the_table_has_a_row_per_configuration_and_the_ratios(results: dict[str, Any]) -> None:
    text = markdown(results)
    assert "smoke run" in text
    for label in LABELS.values():
        assert sum(line.startswith(f"| {label} |") for line in text.splitlines()) == 1
    assert "ours / built-in:" in text
    assert "(ours - none) / (built-in - none)" in text
    assert "(ours - floor) / (built-in - floor)" in text
    ratios = ("ratio_ours_to_builtin", "ratio_ours_to_none", "ratio_builtin_to_none")
    for key in (*ratios, "ratio_ours_to_floor"):
        assert results[key] is not None
        assert results[key] > 0
