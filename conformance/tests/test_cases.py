"""Loading, validating and writing case files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from toolcall import NamedChoice, Request
from toolcall_conformance.builder import build_case
from toolcall_conformance.cases import (
    SCHEMA_ADDITIONS,
    Case,
    CaseError,
    ExpectedCall,
    GrammarRefusal,
    Step,
    case_schema,
    dumps_case,
    load_case,
    load_cases,
    shipped_case_dirs,
    validate_case_data,
    verify_ids,
    write_case,
)

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def text_case(**changes: Any) -> dict[str, Any]:
    """A valid text-only case (no tokenizer: its steps are free chunks)."""
    case: dict[str, Any] = {
        "schema": "toolcall-case/1",
        "id": "hermes/text/one-call",
        "parser": "hermes",
        "tokenizer": None,
        "provenance": {"kind": "constructed", "source": "tests/test_cases.py"},
        "request": {
            "tools": [WEATHER_TOOL],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        },
        "output": {
            "steps": [
                {"text": "Sure. <tool_"},
                {"text": 'call>\n{"name": "get_weather", '},
                {"text": '"arguments": {"city": "Paris"}}\n</tool_call>'},
            ],
            "finish_reason": "stop",
        },
        "expected": {
            "content": "Sure.",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
    }
    case.update(changes)
    return case


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def problem_of(path: Path) -> CaseError:
    with pytest.raises(CaseError) as info:
        load_case(path)
    error = info.value
    assert error.path == path
    assert str(path) in str(error)
    return error


# --------------------------------------------------------------------------------------
# A valid case


def test_valid_case_loads_into_values(tmp_path: Path) -> None:
    path = write_json(tmp_path / "one.json", text_case())
    case = load_case(path)
    assert isinstance(case, Case)
    assert case.path == path
    assert case.text == "".join(step["text"] for step in text_case()["output"]["steps"])
    assert case.text.startswith("Sure. <tool_call>\n")
    assert case.steps[0] == Step("Sure. <tool_", None)
    assert case.token_ids is None
    assert case.expected.tool_calls == (ExpectedCall("get_weather", {"city": "Paris"}),)
    assert case.expected.recoveries == ()
    assert case.expected.grammar is None
    assert case.finish_reason == "stop"
    assert case.needs_review == ()
    view = case.request_view()
    assert isinstance(view, Request)
    assert view.tool_choice == NamedChoice("get_weather")
    assert [tool.name for tool in view.tools] == ["get_weather"]


def test_request_view_defaults_follow_vllm(tmp_path: Path) -> None:
    data = text_case(request={"tools": [WEATHER_TOOL]})
    case = load_case(write_json(tmp_path / "auto.json", data))
    assert case.request_view().tool_choice == "auto"
    assert case.request_view().parallel_tool_calls is True


def test_packaged_schema_is_draft_2020_12_with_the_case_id() -> None:
    from jsonschema import Draft202012Validator

    schema = case_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "toolcall-case/1"


#: A copy of the normative schema (the design's ``conformance/case.schema.json``), kept in the
#: repository so that a clone with nothing beside it runs this test; CI compares the copy
#: with the design's file wherever that file is at hand (.ci/run).
_NORMATIVE_SCHEMA = Path(__file__).resolve().parent / "data" / "case.schema.json"


def test_packaged_schema_is_the_normative_one_plus_the_listed_optional_fields() -> None:
    shared = json.loads(_NORMATIVE_SCHEMA.read_text(encoding="utf-8"))
    ours = copy.deepcopy(dict(case_schema()))
    for addition in SCHEMA_ADDITIONS:
        *parents, name = addition.split(".")
        node = ours
        for parent in parents:
            node = node["properties"][parent]
        assert name not in node.get("required", ()), f"{addition} must be optional"
        assert "toolcall-conformance addition" in node["properties"][name]["description"]
        del node["properties"][name]
    comment = ours.pop("$comment")
    assert all(addition in comment for addition in SCHEMA_ADDITIONS)
    assert ours == shared


def test_a_grammar_refusal_goes_with_reject_and_inside_the_output(tmp_path: Path) -> None:
    refusal = {"offset": 3, "reason": "the defect"}
    expected = text_case()["expected"]
    # Text-only cases carry no grammar expectation, so check the semantics on a built case.
    data = build_case(
        tokenizer="qwen2.5",
        parser="hermes",
        text="Sure.",
        request={"tools": [WEATHER_TOOL]},
        provenance={"kind": "constructed", "source": "tests/test_cases.py"},
        expected={**expected, "content": "Sure.", "tool_calls": []},
        case_id="hermes/qwen2.5/refusal",
    )
    accept = copy.deepcopy(data)
    accept["expected"].update(grammar="accept", grammar_refusal=refusal)
    problems = validate_case_data(accept)
    assert [(p.field, p.message) for p in problems] == [
        ("$.expected.grammar_refusal", "places a refusal, so grammar must be 'reject'")
    ]
    beyond = copy.deepcopy(data)
    beyond["expected"].update(grammar="reject", grammar_refusal={**refusal, "offset": 6})
    problems = validate_case_data(beyond)
    assert [(p.field, p.message) for p in problems] == [
        (
            "$.expected.grammar_refusal.offset",
            "6 is beyond the end of the output (5 characters)",
        )
    ]
    reasonless = copy.deepcopy(data)
    reasonless["expected"].update(grammar="reject", grammar_refusal={"offset": 5})
    (problem,) = validate_case_data(reasonless)
    assert problem.field == "$.expected.grammar_refusal"
    assert "'reason' is a required property" in problem.message
    placed = copy.deepcopy(data)
    placed["expected"].update(grammar="reject", grammar_refusal={**refusal, "offset": 5})
    assert validate_case_data(placed) == []
    case = load_case(write_json(tmp_path / "placed.json", placed))
    assert case.expected.grammar_refusal == GrammarRefusal(5, "the defect")


# --------------------------------------------------------------------------------------
# Bad files: the error names the file, the field and the problem


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"schema": "toolcall-case/1",\n  "id": }', encoding="utf-8")
    error = problem_of(path)
    assert error.field == "$"
    assert "not JSON" in error.message
    assert "line 2" in error.message


def test_missing_required_field(tmp_path: Path) -> None:
    data = text_case()
    del data["expected"]
    error = problem_of(write_json(tmp_path / "no-expected.json", data))
    assert error.field == "$"
    assert "'expected' is a required property" in error.message


def test_wrong_type_deep_inside(tmp_path: Path) -> None:
    data = text_case()
    data["output"]["steps"][1]["text"] = 5
    error = problem_of(write_json(tmp_path / "int-text.json", data))
    assert error.field == "$.output.steps[1].text"
    assert "is not of type 'string'" in error.message


def test_negative_token_id(tmp_path: Path) -> None:
    data = text_case(tokenizer="glm4.5")
    for index, step in enumerate(data["output"]["steps"]):
        step["token_ids"] = [index]
    data["output"]["steps"][2]["token_ids"] = [7, -1]
    error = problem_of(write_json(tmp_path / "negative.json", data))
    assert error.field == "$.output.steps[2].token_ids[1]"
    assert "minimum" in error.message or "less than" in error.message


def test_unknown_provenance_kind(tmp_path: Path) -> None:
    data = text_case(provenance={"kind": "guessed", "source": "x"})
    error = problem_of(write_json(tmp_path / "kind.json", data))
    assert error.field == "$.provenance.kind"
    assert "guessed" in error.message


def test_bad_tool_choice_names_the_closest_alternative(tmp_path: Path) -> None:
    data = text_case()
    data["request"]["tool_choice"] = "sometimes"
    error = problem_of(write_json(tmp_path / "choice.json", data))
    assert error.field == "$.request.tool_choice"
    assert "sometimes" in error.message


def test_unknown_top_level_field(tmp_path: Path) -> None:
    error = problem_of(write_json(tmp_path / "extra-key.json", text_case(notes="hi")))
    assert error.field == "$"
    assert "'notes' was unexpected" in error.message


def test_all_problems_of_a_file_are_kept(tmp_path: Path) -> None:
    data = text_case(provenance={"kind": "guessed", "source": 3})
    data["output"]["finish_reason"] = "eos"
    error = problem_of(write_json(tmp_path / "many.json", data))
    fields = [problem.field for problem in error.problems]
    assert fields == ["$.output.finish_reason", "$.provenance.kind", "$.provenance.source"]
    assert "2 more problems" in str(error)


# Semantic checks (beyond the schema)


def test_id_must_start_with_the_parser(tmp_path: Path) -> None:
    error = problem_of(write_json(tmp_path / "id.json", text_case(id="glm45/text/one-call")))
    assert error.field == "$.id"
    assert "'hermes/...'" in error.message


def test_text_only_case_carries_no_ids(tmp_path: Path) -> None:
    data = text_case()
    data["output"]["steps"][0]["token_ids"] = [1]
    error = problem_of(write_json(tmp_path / "ids.json", data))
    assert error.field == "$.output.steps[0].token_ids"
    assert "text-only" in error.message


def test_case_with_tokenizer_has_ids_on_every_step(tmp_path: Path) -> None:
    data = text_case(tokenizer="qwen2.5")
    data["output"]["steps"][0]["token_ids"] = [1]
    data["output"]["steps"][2]["token_ids"] = [2]
    error = problem_of(write_json(tmp_path / "gap.json", data))
    assert error.field == "$.output.steps[1].token_ids"
    assert "missing" in error.message


def test_stop_token_inside_the_output(tmp_path: Path) -> None:
    data = text_case(tokenizer="qwen2.5")
    for index, step in enumerate(data["output"]["steps"]):
        step["token_ids"] = [10 + index]
    data["output"]["stop_token_ids"] = [11]
    error = problem_of(write_json(tmp_path / "stop.json", data))
    assert error.field == "$.output.steps[1].token_ids"
    assert "stop token id 11" in error.message


def test_grammar_accept_needs_a_stop(tmp_path: Path) -> None:
    data = text_case(tokenizer="qwen2.5")
    for index, step in enumerate(data["output"]["steps"]):
        step["token_ids"] = [10 + index]
    data["output"]["stop_token_ids"] = [151645]
    data["output"]["finish_reason"] = "length"
    data["expected"]["grammar"] = "accept"
    error = problem_of(write_json(tmp_path / "grammar.json", data))
    assert error.field == "$.expected.grammar"
    assert "finish_reason is 'length'" in error.message


def test_grammar_check_needs_ids(tmp_path: Path) -> None:
    data = text_case()
    data["expected"]["grammar"] = "reject"
    error = problem_of(write_json(tmp_path / "grammar-text.json", data))
    assert error.field == "$.expected.grammar"
    assert "token ids" in error.message


def test_unknown_recovery(tmp_path: Path) -> None:
    data = text_case()
    data["expected"]["recoveries"] = ["missing-end", "guess-the-name"]
    error = problem_of(write_json(tmp_path / "recovery.json", data))
    assert error.field == "$.expected.recoveries[1]"
    assert "guess-the-name" in error.message
    assert "python-literal" in error.message  # the known ones are listed


def test_request_the_parsers_cannot_read(tmp_path: Path) -> None:
    data = text_case(request={"tools": [{"type": "function", "function": {"description": "x"}}]})
    error = problem_of(write_json(tmp_path / "request.json", data))
    assert error.field == "$.request"
    assert "function name" in error.message


# --------------------------------------------------------------------------------------
# Many files


def test_a_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    good_a = write_json(tmp_path / "cases" / "a.json", text_case(id="hermes/text/a"))
    write_json(tmp_path / "cases" / "sub" / "b.json", text_case(id="hermes/text/b"))
    bad = tmp_path / "cases" / "sub" / "bad.json"
    bad.write_text("[1, 2", encoding="utf-8")
    wrong = write_json(tmp_path / "cases" / "wrong.json", text_case(id="hermes/text/c", parser=7))
    (tmp_path / "cases" / "notes.txt").write_text("not a case", encoding="utf-8")

    cases, errors = load_cases([tmp_path / "cases", tmp_path / "missing"])
    assert sorted(case.id for case in cases) == ["hermes/text/a", "hermes/text/b"]
    assert {(error.path, error.field) for error in errors} == {
        (bad, "$"),
        (wrong, "$.parser"),
        (tmp_path / "missing", "$"),
    }
    assert good_a in {case.path for case in cases}


def test_duplicate_ids_are_reported_with_both_files(tmp_path: Path) -> None:
    first = write_json(tmp_path / "a.json", text_case())
    second = write_json(tmp_path / "b.json", text_case())
    cases, errors = load_cases([tmp_path])
    assert [case.path for case in cases] == [first]
    assert len(errors) == 1
    assert errors[0].path == second
    assert errors[0].field == "$.id"
    assert str(first) in errors[0].message


def test_shipped_case_dirs() -> None:
    assert shipped_case_dirs("no-such-parser") == []
    for directory in shipped_case_dirs("hermes") + shipped_case_dirs("glm45"):
        assert directory.is_dir()
        assert directory.name in {"hermes", "glm45"}


def test_every_shipped_case_loads() -> None:
    import importlib.resources

    root = Path(str(importlib.resources.files("toolcall_conformance").joinpath("cases")))
    parsers = [p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))]
    for parser in parsers:
        cases, errors = load_cases(shipped_case_dirs(parser))
        assert errors == [], "\n".join(map(str, errors))
        assert all(case.parser == parser for case in cases), parser


def test_every_shipped_reject_says_where_the_grammar_must_refuse() -> None:
    import importlib.resources

    root = Path(str(importlib.resources.files("toolcall_conformance").joinpath("cases")))
    cases, _ = load_cases([root])
    rejects = [case for case in cases if case.expected.grammar == "reject"]
    assert rejects, "the corpus has grammar rejects"
    unplaced = [case.id for case in rejects if case.expected.grammar_refusal is None]
    assert unplaced == [], "give these cases expected.grammar_refusal (offset and reason)"


# --------------------------------------------------------------------------------------
# Writing


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    data = text_case(extra={"note": "ü 東京"})
    path = write_case(data, tmp_path / "deep" / "case.json")
    assert json.loads(path.read_text(encoding="utf-8")) == data
    assert load_case(path).extra == {"note": "ü 東京"}
    text = path.read_text(encoding="utf-8")
    assert "東京" in text  # not \\u-escaped
    # One step per line.
    lines = [line.strip().rstrip(",") for line in text.splitlines()]
    for step in data["output"]["steps"]:
        assert json.dumps(step, ensure_ascii=False, separators=(", ", ": ")) in lines


def test_write_refuses_an_invalid_case_and_writes_nothing(tmp_path: Path) -> None:
    data = text_case(id="glm45/x/y")
    target = tmp_path / "bad.json"
    with pytest.raises(CaseError) as info:
        write_case(data, target)
    assert info.value.field == "$.id"
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_dumps_case_is_valid_json_of_the_same_data() -> None:
    data = text_case()
    assert json.loads(dumps_case(data)) == data
    assert dumps_case(data).endswith("\n")


def test_validate_case_data_on_non_objects() -> None:
    errors = validate_case_data([1, 2])
    assert len(errors) == 1
    assert errors[0].field == "$"
    assert "is not of type 'object'" in errors[0].message


# --------------------------------------------------------------------------------------
# verify_ids: the real tokenizer re-decodes the ids


def _built_glm_case() -> dict[str, Any]:
    return build_case(
        tokenizer="glm4.5",
        parser="glm45",
        text=(
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>東京 🗼</arg_value>\n"
            "</tool_call>"
        ),
        request={"tools": [WEATHER_TOOL]},
        provenance={"kind": "constructed", "source": "tests/test_cases.py"},
        expected={
            "content": None,
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "東京 🗼"}}],
        },
        case_id="glm45/glm4.5/verify",
    )


def test_verify_ids_accepts_a_built_case(tmp_path: Path) -> None:
    case = load_case(write_case(_built_glm_case(), tmp_path / "ok.json"))
    assert verify_ids(case) == []


def test_verify_ids_names_the_step_and_the_special_token(tmp_path: Path) -> None:
    data = _built_glm_case()
    tampered = copy.deepcopy(data)
    tampered["output"]["steps"][1]["text"] = "got"
    tampered["special_tokens"]["<tool_call>"] = 151353
    path = write_case(tampered, tmp_path / "tampered.json")
    problems = verify_ids(load_case(path))
    assert [(p.path, p.field) for p in problems] == [
        (path, "$.output.steps[1].text"),
        (path, '$.special_tokens["<tool_call>"]'),
    ]
    assert "'got'" in problems[0].message
    assert "151352" in problems[1].message  # what the tokenizer really has


def test_verify_ids_of_a_text_only_case_is_empty(tmp_path: Path) -> None:
    assert verify_ids(load_case(write_json(tmp_path / "t.json", text_case()))) == []


def test_verify_ids_with_an_unknown_tokenizer(tmp_path: Path) -> None:
    data = text_case(tokenizer="gpt-7")
    for index, step in enumerate(data["output"]["steps"]):
        step["token_ids"] = [index]
    problems = verify_ids(load_case(write_json(tmp_path / "u.json", data)))
    assert [p.field for p in problems] == ["$.tokenizer"]
    assert "gpt-7" in problems[0].message
