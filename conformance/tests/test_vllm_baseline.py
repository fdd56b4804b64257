"""``--against-vllm``: vLLM 0.33's built-ins driven as its DelegatingParser drives them.

The expectations about vLLM's behaviour come from its code, as recorded in
vLLM 0.33's ``vllm/tool_parsers/hermes_tool_parser.py`` (hermes: non-streaming content is
only the text before the first ``<tool_call>``; streaming never sends content after the first call).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from kit_helpers import text_case

from toolcall_conformance.vllm_baseline import VllmBaseline

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None, reason="needs vLLM 0.33 (the vllm nox session)"
    ),
]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
REQUEST = {"tools": [WEATHER]}
CALL = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture(scope="module")
def baseline() -> VllmBaseline:
    return VllmBaseline()


def test_the_builtin_class_comes_from_vllms_own_table(
    baseline: VllmBaseline, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm.tool_parsers import ToolParserManager

    # As a toolcall plugin does: replace the name in the manager.
    monkeypatch.setitem(
        ToolParserManager.lazy_parsers, "hermes", ("toolcall.vllm", "NotTheBuiltin")
    )
    monkeypatch.delitem(ToolParserManager.tool_parsers, "hermes", raising=False)
    cls = baseline.builtin_class("hermes")
    assert (cls.__module__, cls.__name__) == (
        "vllm.tool_parsers.hermes_tool_parser",
        "Hermes2ProToolParser",
    )
    assert baseline.builtin_class("glm47").engine_based_streaming is True
    assert not baseline.has_builtin("example_tags")


def test_a_clean_hermes_call_passes_every_check(baseline: VllmBaseline, tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "clean",
        ["Let me check.\n", HERMES_CALL],
        {"content": "Let me check.", "tool_calls": CALL},
        request=REQUEST,
        parser="hermes",
    )
    results = baseline.run_case("hermes", case)
    # stream-recorded would repeat stream-token: a text-only case's chunks are its tokens
    assert [r.check for r in results] == [
        "parse",
        "stream-token",
        "stream-char",
        "stream-random",
    ]
    assert all(r.passed for r in results), [str(r) for r in results if not r.passed]
    assert {r.parser for r in results} == {"vllm:hermes"}


def test_hermes_drops_text_after_the_call(baseline: VllmBaseline, tmp_path: Path) -> None:
    case = text_case(
        tmp_path,
        "after",
        [HERMES_CALL, "\nDone."],
        {"content": "Done.", "tool_calls": CALL},
        request=REQUEST,
        parser="hermes",
    )
    parse = baseline.run_check("hermes", case, "parse")
    assert not parse.passed
    assert parse.detail.startswith(
        "parse() differs from expected: content: first difference at character 0: "
        "expected 'Done.', got ''"
    )
    stream = baseline.run_check("hermes", case, "stream-char")
    assert not stream.passed
    assert "stream differs from expected: content" in stream.detail


def test_glm_runs_on_the_engine_path(baseline: VllmBaseline, tmp_path: Path) -> None:
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>Paris</arg_value>\n</tool_call>"
    )
    case = text_case(
        tmp_path,
        "glm",
        ["I'll check.", text],
        {"content": "I'll check.", "tool_calls": CALL},
        request=REQUEST,
        parser="glm45",
    )
    results = baseline.run_case("glm45", case)
    assert all(r.passed for r in results), [str(r) for r in results if not r.passed]


def test_the_scorecard_shows_the_built_in_beside_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolcall.cli import main

    text_case(
        tmp_path,
        "clean",
        ["Let me check.\n", HERMES_CALL],
        {"content": "Let me check.", "tool_calls": CALL},
        request=REQUEST,
        parser="hermes",
    )
    args = ["conformance", "-p", "hermes", "-p", "qwen3_json", "--cases", str(tmp_path)]
    args.append("--no-grammar")
    assert main([*args, "--against-vllm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    theirs = data["vllm"]["results"]
    # vLLM registers qwen3_json with its hermes class: like ours, counted once.
    assert data["summary"]["aliases"] == {"qwen3_json": "hermes"}
    assert data["vllm"]["aliases"] == {"qwen3_json": "hermes"}
    assert {r["parser"] for r in theirs} == {"vllm:hermes"}
    assert {r["case"] for r in theirs} >= {"hermes/text/clean"}
    assert data["vllm"]["summary"]["total"] == sum(r["outcome"] != "not applicable" for r in theirs)
    # Ours pass; the built-in's failures are a baseline and do not change the exit status.
    assert data["summary"]["failed"] == 0
    assert data["vllm"]["summary"]["failed"] > 0
    assert main([*args, "--against-vllm"]) == 0
    out = capsys.readouterr().out
    assert "vLLM built-in passed / run" in out
    assert "(a baseline: not part of the exit status)" in out
    assert "vLLM built-in failures" in out
    assert "vLLM's qwen3_json is its hermes class on the same cases: counted once" in out
