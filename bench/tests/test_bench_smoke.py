"""The benchmark keeps working: its smoke run (tiny sizes, one repetition) in vLLM's
environment. Nothing here looks at a clock's value: only at what was measured, that our
parses came out right, and that the JSON and the README section are well formed."""

from __future__ import annotations

import importlib.util
import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolcall.parser import Parser, Stream
from toolcall.registry import Registry
from toolcall_bench.drivers import DRIVERS, Reassembled, problem_with
from toolcall_bench.outputs import HOOK, BenchError, renderer_for
from toolcall_bench.report import END, START, markdown, plugin_readmes, replace_section
from toolcall_bench.run import EXIT_TOO_BUSY, SMOKE, main, too_busy

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None, reason="needs vLLM 0.33 (the vllm nox session)"
    ),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    readmes = {path: path.read_text() for path in plugin_readmes().values() if path.exists()}
    output = tmp_path_factory.mktemp("bench")
    assert main(["--smoke", "--output", str(output)]) == 0
    # A smoke run never writes numbers into a README.
    assert {path: path.read_text() for path in readmes} == readmes
    [path] = output.glob("bench-*.json")
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["json"] == path.name
    return data


def test_every_installed_parser_with_a_vllm_builtin_is_measured(
    results: dict[str, Any],
) -> None:
    from toolcall_conformance.vllm_baseline import VllmBaseline

    baseline = VllmBaseline()
    expected = {name for name in Registry.load().names() if baseline.has_builtin(name)}
    assert expected  # hermes and glm are installed in this environment
    assert {parser["name"] for parser in results["parsers"]} == expected
    assert results["smoke"] is True
    assert results["settings"]["repetitions"]["least"] == SMOKE.rounds.least


def test_every_size_is_fed_one_and_four_tokens_per_delta_to_every_driver(
    results: dict[str, Any],
) -> None:
    for parser in results["parsers"]:
        streams = parser["streams"]
        assert [(s["argument_tokens_target"], s["tokens_per_delta"]) for s in streams] == [
            (size, k) for size in SMOKE.sizes for k in SMOKE.tokens_per_delta
        ]
        for stream in streams:
            assert stream["argument_tokens"] >= stream["argument_tokens_target"]
            assert stream["tokens"] > stream["argument_tokens"]
            assert stream["deltas"] == math.ceil(stream["tokens"] / stream["tokens_per_delta"])
            assert set(stream["drivers"]) == set(DRIVERS)
            assert stream["rounds"] == SMOKE.rounds.least
            for key, driver in stream["drivers"].items():
                if key == "builtin" and parser["builtin_unavailable"]:
                    assert driver["problem"] == f"raised {parser['builtin_unavailable']}"
                    assert driver["median_us_per_token"] is None
                    continue
                for clock in ("wall", "cpu"):
                    assert len(driver[f"{clock}_runs_us_per_token"]) == SMOKE.rounds.least
                    assert driver[f"median_{clock}_us_per_token"] > 0
                assert driver["median_us_per_token"] == driver["median_wall_us_per_token"]
            if not parser["builtin_unavailable"]:
                assert stream["ratio_adapter_to_builtin"] > 0


def test_a_builtin_is_unavailable_only_where_vllm_cannot_build_it(
    results: dict[str, Any],
) -> None:
    """vLLM 0.33's llama4_json (Llama3JsonToolParser) raises at construction without
    <|python_tag|> in the vocabulary, and the Llama 4 tokenizer has none: reported, not
    measured. Every other built-in is measured."""
    unavailable = {p["name"]: p["builtin_unavailable"] for p in results["parsers"]}
    for name, problem in unavailable.items():
        if name == "llama4_json":
            assert problem is not None
            assert "<|python_tag|>" in problem
        else:
            assert problem is None, name


def test_our_parses_came_out_right(results: dict[str, Any]) -> None:
    for parser in results["parsers"]:
        for stream in parser["streams"]:
            for key in ("adapter", "core"):
                assert stream["drivers"][key]["problem"] is None, (parser["name"], key)
        for key in ("adapter", "core"):
            assert parser["one_shot"]["drivers"][key]["problem"] is None, (parser["name"], key)


def test_growth_targets_and_one_shot_are_reported(results: dict[str, Any]) -> None:
    for parser in results["parsers"]:
        assert [(g["from"], g["to"]) for g in parser["growth"]] == [SMOKE.growth] * 2
        measured = [k for k in DRIVERS if k != "builtin" or not parser["builtin_unavailable"]]
        for growth in parser["growth"]:
            assert all(growth[key] > 0 for key in measured)
        per_delta = {key for key in results["targets"] if key != "one-shot-json"}
        assert {(t["target"], t["tokens_per_delta"]) for t in parser["targets"]} == {
            (target, k) for target in per_delta for k in SMOKE.tokens_per_delta
        } | {("one-shot-json", None)}
        for target in parser["targets"]:
            # None: not measurable in this run (at smoke sizes the built-in may cost no
            # more than the floor, or the built-in cannot be built), which counts as missed
            value = target["value"]
            assert target["met"] == (value is not None and value <= target["limit"])
            assert (target["miss"] is None) == target["met"]
        shot = parser["one_shot"]
        assert shot["argument_bytes"] >= SMOKE.one_shot_bytes
        for key in ("builtin", "adapter", "core"):
            if key not in measured:
                continue
            assert shot["drivers"][key]["median_ms"] > 0
            assert shot["drivers"][key]["peak_mib"] > 0
        assert shot["json_loads"]["median_ms"] > 0
        missed = {
            (t["driver"], t["tokens_per_delta"])
            for t in parser["targets"]
            if not t["met"] and t["tokens_per_delta"] is not None
        }
        assert {(p["driver"], p["tokens_per_delta"]) for p in parser["profiles"]} == missed
        for entry in parser["profiles"]:
            assert entry["top"]
            assert all(0 <= item["own_share"] <= 1 for item in entry["top"])


def test_the_markdown_has_a_row_per_stream_and_says_it_is_a_smoke_run(
    results: dict[str, Any],
) -> None:
    text = markdown(results, results["parsers"])
    assert "smoke run" in text
    assert results["command"] in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    per_parser = len(SMOKE.sizes) * len(SMOKE.tokens_per_delta)
    for parser in results["parsers"]:
        # a parser measured on several generations of its format has a row label each
        named = [row for row in rows if row.startswith(f"| {parser['label']} |")]
        # streams; growth and targets, one row per tokens/delta each; one-shot
        assert len(named) == per_parser + 2 * len(SMOKE.tokens_per_delta) + 1


def test_the_above_floor_targets_are_issue_10s(results: dict[str, Any]) -> None:
    """Above floor (the adapter's cost above vLLM's floor over the built-in's): at most
    0.1 for the hermes family, 0.3 for GLM and (issue 10 names no other) every other
    family; the core at most 1.5 µs per token; the one-shot parse within 3x of
    json.loads."""
    hermes_family = {"hermes", "qwen3_json"}
    for parser in results["parsers"]:
        limits = {t["target"]: t["limit"] for t in parser["targets"]}
        wanted = 0.1 if parser["name"] in hermes_family else 0.3
        assert limits["adapter-above-floor"] == wanted
        assert limits["core-us"] == 1.5
        assert limits["one-shot-json"] == 3.0
        for target in parser["targets"]:
            if target["target"] == "adapter-above-floor":
                stream = next(
                    s
                    for s in parser["streams"]
                    if s["tokens_per_delta"] == target["tokens_per_delta"]
                    and s["argument_tokens_target"] == max(SMOKE.sizes)
                )
                assert target["value"] == stream["ratio_above_floor"]
    text = markdown(results, results["parsers"])
    assert "≤ 0.1 hermes, qwen3_json; 0.3 others" in text


def machine(start: float, end: float, cpus: int = 2) -> dict[str, Any]:
    return {"machine": {"cpus": cpus, "load_average": {"start": start, "end": end}}}


def test_a_run_busier_than_the_cpus_is_too_busy_for_the_readmes() -> None:
    assert too_busy(machine(1.9, 2.0)) is None
    for start, end in [(2.1, 1.0), (0.5, 3.0)]:
        reason = too_busy(machine(start, end))
        assert reason is not None
        assert f"{start:.1f} at the start and {end:.1f} at the end" in reason
        assert "above the 2 CPUs" in reason
        assert "Rerun" in reason


def test_a_busy_full_run_refuses_to_write_the_readmes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full run (here at smoke sizes, to be quick) on a machine whose load average exceeds
    its CPUs: it measures, prints the load and its tables, writes the JSON, and neither
    writes a README nor exits 0."""
    from toolcall_bench import run

    monkeypatch.setattr(run, "FULL", replace(SMOKE, smoke=False))
    cpus = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (cpus + 0.5, cpus, cpus))
    written: list[Any] = []
    monkeypatch.setattr(run, "write_readmes", lambda results: written.append(results) or [])
    status = main(["-p", "hermes", "--output", str(tmp_path), "--no-profile"])
    err = capsys.readouterr().err
    assert status == EXIT_TOO_BUSY
    assert written == []
    assert f"load average {cpus + 0.5:.2f} at the start, {cpus} CPUs" in err
    assert "the README tables are not written from this run" in err
    assert len(list(tmp_path.glob("bench-*.json"))) == 1
    # the same run on a quiet machine would write them
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert main(["-p", "hermes", "--output", str(tmp_path), "--no-profile"]) == 0
    assert len(written) == 1


README = "# toolcall-x\n\nIntro.\n\n## Benchmark\n\n" + START + "\nold\n" + END + "\n\n## Next\n"


def test_only_the_text_between_the_markers_is_rewritten() -> None:
    assert replace_section(README, "new\n") == README.replace("\nold\n", "\nnew\n")
    twice = replace_section(replace_section(README, "a"), "b")
    assert twice == README.replace("\nold\n", "\nb\n")


def test_a_readme_without_markers_gets_a_section_at_its_end() -> None:
    assert replace_section("# toolcall-x\n\nIntro.\n", "table") == (
        "# toolcall-x\n\nIntro.\n\n## Benchmark\n\n" + START + "\ntable\n" + END + "\n"
    )


def test_markers_go_after_the_text_of_an_existing_benchmark_section() -> None:
    readme = "# x\n\n## Benchmark\n\nTheir words.\n\n## Limits\n\nNone.\n"
    block = START + "\ntable\n" + END + "\n"
    expected = "# x\n\n## Benchmark\n\nTheir words.\n\n" + block + "\n## Limits\n\nNone.\n"
    assert replace_section(readme, "table") == expected
    last = "# x\n\n## Benchmark\n\nTheir words.\n"
    assert replace_section(last, "table") == last + "\n" + block
    # and from then on only the text between the markers changes
    assert replace_section(expected, "new") == expected.replace("\ntable\n", "\nnew\n")


def test_a_readme_with_one_marker_is_an_error() -> None:
    with pytest.raises(BenchError, match="broken benchmark section"):
        replace_section("# x\n" + START + "\n", "table")
    with pytest.raises(BenchError, match="broken benchmark section"):
        replace_section("# x\n" + END + "\n" + START + "\n", "table")


class _Unknown(Parser):
    name: ClassVar[str] = "bench_unknown"

    def stream(self) -> Stream:
        raise NotImplementedError


class _WithHook(_Unknown):
    @classmethod
    def example_output(cls, content: str, calls: Any) -> str:
        return content + "".join(f"<call {name}>" for name, _ in calls)


def test_a_parser_without_an_example_output_is_told_what_to_add() -> None:
    with pytest.raises(BenchError, match=f"define the classmethod {HOOK}"):
        renderer_for("bench_unknown", _Unknown)


def test_the_parser_class_hook_comes_first() -> None:
    render, source = renderer_for("hermes", _WithHook)
    assert render("Hi.", [("f", {})]) == "Hi.<call f>"
    assert source.endswith(f"_WithHook.{HOOK}")


def test_a_wrong_parse_is_caught() -> None:
    calls = [("write_file", {"path": "a.py"})]
    right = Reassembled("Saving.", (("write_file", '{"path": "a.py"}'),))
    assert problem_with(right, "Saving.", calls) is None
    for found, problem in [
        (Reassembled("Saving.", ()), "0 call(s)"),
        (Reassembled("Saving.", (("read_file", '{"path": "a.py"}'),)), "named 'read_file'"),
        (Reassembled("Saving.", (("write_file", '{"path": "a.py"'),)), "not JSON"),
        (Reassembled("Saving.", (("write_file", '{"path": "b.py"}'),)), "differ"),
        (Reassembled("", (("write_file", '{"path": "a.py"}'),)), "content"),
    ]:
        assert problem in (problem_with(found, "Saving.", calls) or "")


def test_the_plugin_readmes_are_found_by_distribution() -> None:
    readmes = plugin_readmes()
    assert readmes["toolcall-hermes"] == Path(__file__).parents[2] / "plugins/hermes/README.md"
    assert readmes["toolcall-glm"] == Path(__file__).parents[2] / "plugins/glm/README.md"
