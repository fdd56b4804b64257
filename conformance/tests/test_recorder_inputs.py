"""The recorder's inputs, one at a time: the requests file (every problem names its line),
the base URL, the server-sent events and the chunks they carry, and the error bodies servers
answer with. (tests/test_recorder.py records from running servers.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcall.cli import CommandError
from toolcall_conformance import recorder
from toolcall_conformance.recorder import RequestFailed, read_requests

GOOD = {"messages": [{"role": "user", "content": "Weather in Paris?"}]}
WEATHER = {"type": "function", "function": {"name": "get_weather"}}


def _requests(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "requests.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines),
        encoding="utf-8",
    )
    return path


def test_a_requests_file_gives_one_request_a_line(tmp_path: Path) -> None:
    path = _requests(
        tmp_path,
        {**GOOD, "id": "paris", "tools": [WEATHER], "tool_choice": "required"},
        "",
        {**GOOD, "parser": "glm45", "parallel_tool_calls": False},
    )
    first, second = read_requests(path, default_parser="hermes")
    assert (first.line, first.slug, first.parser) == (1, "paris", "hermes")
    assert "id" not in first.body
    assert first.case_request() == {"tools": [WEATHER], "tool_choice": "required"}
    assert (second.line, second.slug, second.parser) == (3, "line003", "glm45")
    assert second.case_request() == {"tools": [], "parallel_tool_calls": False}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not JSON: Expecting property name enclosed in double quotes at column 2"),
        ([GOOD], "each line must be a JSON object (an OpenAI chat request body)"),
        ({"messages": []}, "'messages' must be a non-empty list"),
        ({"messages": [{"content": "no role"}]}, "every message must be an object with a 'role'"),
        ({**GOOD, "tools": {"a": 1}}, "'tools' must be a list of objects"),
        ({**GOOD, "n": 2}, "'n' must be 1: a case records one output"),
        (
            {**GOOD, "tools": [WEATHER], "tool_choice": "sometimes"},
            "tools/tool_choice: unsupported tool_choice 'sometimes'",
        ),
        ({**GOOD, "id": "a/b"}, "'id' must be letters, digits and _.+- only, got 'a/b'"),
        ({**GOOD, "parser": "Hermes!"}, "'parser' must be a parser name (a-z, 0-9, _.-)"),
    ],
)
def test_each_problem_names_its_line(tmp_path: Path, line: object, problem: str) -> None:
    path = _requests(tmp_path, GOOD, line)
    with pytest.raises(CommandError) as info:
        read_requests(path, default_parser="hermes")
    assert str(info.value).startswith(f"{path}:2: {problem}")


def test_whole_file_problems(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no parser: give 'parser' on the line or --parser"):
        read_requests(_requests(tmp_path, GOOD), default_parser=None)
    with pytest.raises(CommandError, match="'a' is also the id on line 1"):
        read_requests(
            _requests(tmp_path, {**GOOD, "id": "a"}, {**GOOD, "id": "a"}), default_parser="x"
        )
    with pytest.raises(CommandError, match="holds no requests"):
        read_requests(_requests(tmp_path, "", "  "), default_parser="x")
    with pytest.raises(CommandError, match="cannot read the requests file"):
        read_requests(tmp_path / "missing.jsonl", default_parser="x")


def test_the_api_root_of_a_base_url() -> None:
    assert recorder._api_root("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert recorder._api_root("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert recorder._api_root("https://host/api/v2") == "https://host/api/v2"
    for wrong in ("127.0.0.1:8000", "ftp://host/v1", "http://"):
        with pytest.raises(CommandError, match="--base-url must be an http"):
            recorder._api_root(wrong)


def test_server_sent_events() -> None:
    lines = [b'data: {"a": 1}\n', b"\n", b": a comment\n", b"data: one\n", b"data:two\n"]
    assert list(recorder._iter_sse(iter(lines))) == ['{"a": 1}', "one\ntwo"]
    assert list(recorder._iter_sse(iter([b"\r\n", b"\n"]))) == []


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b'{"detail": "model not found"}', "model not found"),
        (b'{"error": {"message": "bad  request\\n here"}}', "bad request here"),
        (b'{"message": "overloaded"}', "overloaded"),
        (b'{"other": 1}', '{"other": 1}'),
        (b"[1, 2]", "[1, 2]"),
        (b"<html> Internal\n Server Error </html>", "<html> Internal Server Error </html>"),
    ],
)
def test_error_bodies_become_one_line(body: bytes, text: str) -> None:
    assert recorder._error_text(body) == text


def _chunk(delta: dict[str, object], **choice: object) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, **choice}]}


def test_chunks_are_collected_until_the_finish_reason() -> None:
    collector = recorder._Collector(started=0.0)
    assert collector.add({"prompt_token_ids": [1, 2], "prompt_text": "p", "choices": []}) is None
    first = collector.add(_chunk({"content": "Hi"}, token_ids=[7]))
    assert first == recorder.Chunk("Hi", (7,))
    assert collector.add({"choices": [{"index": 1, "delta": {"content": "other"}}]}) is None
    assert collector.add(_chunk({}, finish_reason="stop", stop_reason=151645)) is None
    collector.add({"choices": [], "usage": {"completion_tokens": 2}})
    stream = collector.result()
    assert stream.chunks == (first,)
    assert (stream.finish_reason, stream.stop_reason) == ("stop", 151645)
    assert (stream.prompt_token_ids, stream.prompt_text) == ((1, 2), "p")
    assert stream.completion_tokens == 2
    assert stream.has_ids


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (
            {"error": {"message": "out of memory"}},
            "the server reported an error mid-stream: out of",
        ),
        (_chunk({"tool_calls": [{"index": 0}]}), "the server parsed tool calls out of the output"),
        (_chunk({"reasoning_content": "hm"}), "the server split reasoning out of the output"),
    ],
)
def test_a_stream_that_lost_the_raw_text_fails(event: dict[str, object], problem: str) -> None:
    with pytest.raises(RequestFailed, match=problem):
        recorder._Collector(started=0.0).add(event)


def test_a_stream_must_end_with_stop_or_length() -> None:
    with pytest.raises(RequestFailed, match="ended without a finish_reason"):
        recorder._Collector(started=0.0).result()
    collector = recorder._Collector(started=0.0)
    collector.add(_chunk({"content": "x"}, finish_reason="tool_calls"))
    with pytest.raises(RequestFailed, match="finish_reason 'tool_calls': only 'stop' and"):
        collector.result()
