"""Replay scripts: matching, regrouping, the JSON file and its reload."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolcall_replay.script import Recording, ReplayScript, ScriptError, ScriptFile


def rec(
    name: str, marker: str | None = None, steps: tuple[tuple[int, ...], ...] = ((1,), (2, 3))
) -> Recording:
    return Recording(name, steps, prompt_contains=marker)


def test_a_prompt_is_matched_by_its_marker() -> None:
    script = ReplayScript((rec("a", "[case:a]"), rec("b", "[case:b]")))
    match = script.match("<|im_start|>user\nhi [case:b]<|im_end|>")
    assert match is not None
    assert (match.recording.name, match.matched_by) == ("b", "prompt")


def test_the_marker_that_occurs_last_in_the_prompt_wins() -> None:
    # a second turn repeats the first user message, then carries its own marker
    script = ReplayScript((rec("turn2", "[case:turn2]"), rec("turn1", "[case:turn1]")))
    match = script.match("user: [case:turn1] ... tool: [case:turn2] ...")
    assert match is not None
    assert match.recording.name == "turn2"


def test_a_name_from_vllm_xargs_wins_over_markers() -> None:
    script = ReplayScript((rec("a", "[case:a]"), rec("b")))
    match = script.match("[case:a]", name="b")
    assert match is not None
    assert (match.recording.name, match.matched_by) == ("b", "xargs")
    assert script.match("[case:a]", name="missing") is None


def test_no_marker_no_match() -> None:
    assert ReplayScript((rec("a", "[case:a]"),)).match("nothing here") is None


def test_steps_are_regrouped_on_request() -> None:
    r = Recording("r", ((1, 2, 3), (4,), (5, 6)))
    assert r.engine_steps() == ((1, 2, 3), (4,), (5, 6))
    assert r.engine_steps(1) == ((1,), (2,), (3,), (4,), (5,), (6,))
    assert r.engine_steps(4) == ((1, 2, 3, 4), (5, 6))
    assert Recording("r", r.steps, tokens_per_step=2).engine_steps() == ((1, 2), (3, 4), (5, 6))


def test_from_steps_drops_steps_without_ids() -> None:
    r = Recording.from_steps("r", [[1], [], [2, 3]])
    assert r.steps == ((1,), (2, 3))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "steps": ((1,),)}, "non-empty name"),
        ({"name": "r", "steps": ((),)}, "step 0 holds no token id"),
        ({"name": "r", "steps": ((1, -2),)}, "non-token"),
        ({"name": "r", "steps": ((1,),), "tokens_per_step": 0}, "tokens_per_step"),
        ({"name": "r", "steps": ((1,),), "prompt_contains": ""}, "prompt_contains"),
    ],
)
def test_bad_recordings_are_refused_with_a_reason(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        Recording(**kwargs)  # type: ignore[arg-type]


def test_two_recordings_with_one_name_are_refused() -> None:
    with pytest.raises(ScriptError, match="two recordings are named 'a'"):
        ReplayScript((rec("a"), rec("a")))


def test_with_recordings_replaces_by_name() -> None:
    script = ReplayScript((rec("a", "[x]"), rec("b")))
    new = script.with_recordings(rec("a", "[y]"), rec("c"))
    assert [r.name for r in new.recordings] == ["b", "a", "c"]
    assert new.get("a") == rec("a", "[y]")


def test_the_json_file_round_trips(tmp_path: Path) -> None:
    script = ReplayScript((Recording("a", ((1, 2), (3,)), "[case:a]", 2), rec("b")))
    path = tmp_path / "script.json"
    script.write(path)
    assert ReplayScript.read(path) == script
    assert json.loads(path.read_text())["recordings"][0] == {
        "name": "a",
        "prompt_contains": "[case:a]",
        "steps": [[1, 2], [3]],
        "tokens_per_step": 2,
    }
    assert [p.name for p in tmp_path.iterdir()] == ["script.json"]  # no temporary file left


def test_a_broken_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text('{"recordings": [{"name": "a", "steps": [[1]], "colour": 1}]}')
    with pytest.raises(
        ScriptError, match=r"script\.json: recording 'a': unknown keys \['colour'\]"
    ):
        ReplayScript.read(path)


def test_script_file_reloads_on_change_and_keeps_the_last_good_script(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    ReplayScript((rec("a", "[a]"),)).write(path)
    watched = ScriptFile(path)
    assert watched.current().match("[a]") is not None

    ReplayScript((rec("a", "[a]"), rec("b", "[b]"))).write(path)
    assert watched.current().match("[b]") is not None  # the new version is picked up

    path.write_text("{not json")
    os.utime(path, ns=(1, 1))  # a different stamp even on a coarse clock
    kept = watched.current()
    assert kept.match("[b]") is not None
    assert watched.error is not None
    assert "not JSON" in watched.error

    ReplayScript((rec("c", "[c]"),)).write(path)
    assert watched.current().match("[c]") is not None
    assert watched.error is None


def test_a_conformance_case_becomes_a_recording(tmp_path: Path) -> None:
    from toolcall_conformance.builder import build_case
    from toolcall_conformance.cases import load_case, write_case

    data = build_case(
        tokenizer="qwen2.5",
        parser="hermes",
        text='<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
        request={"tools": [{"type": "function", "function": {"name": "f"}}]},
        provenance={"kind": "constructed", "source": "toolcall-replay test"},
        expected={"content": None, "tool_calls": [{"name": "f", "arguments": {}}]},
        case_id="hermes/qwen2.5/replay-from-case",
    )
    write_case(data, tmp_path / "case.json")
    case = load_case(tmp_path / "case.json")
    rec = Recording.from_case(case)
    assert rec.name == "hermes/qwen2.5/replay-from-case"
    assert rec.prompt_contains == "[case:hermes/qwen2.5/replay-from-case]"
    assert rec.token_ids == case.token_ids
    assert len(rec.steps) == len([s for s in case.steps if s.token_ids])
