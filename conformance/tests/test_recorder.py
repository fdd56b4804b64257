"""``toolcall record`` against a real HTTP server on 127.0.0.1.

The server here is a *replay server*, not a model: a stdlib ``http.server`` in a thread that
answers every streamed chat completion with one fixed completion. Its token ids and the text
of each chunk come from the real Qwen2.5 tokenizer (``get_tokenizer("qwen2.5")``: ids from
``encode``, chunk texts from vLLM's detokenizer rule), never typed by hand. It speaks in two
dialects, taken from the servers' code:

- ``vllm``: as vLLM 0.33 streams with ``return_token_ids``: a role chunk carrying
  ``prompt_token_ids``, one chunk per token with ``token_ids`` (an empty text while a
  character is incomplete), the EOS id in the last chunk with no text, ``stop_reason`` null;
  ``GET /version``.
- ``plain``: as ``transformers serve`` 5.20: fields it does not know (``return_token_ids``)
  are refused with HTTP 422 "Unexpected fields in the request: {...}", and chunks carry
  text only.

The recorder under test is the real one, run through its command line. The end-to-end proof
against a real model (SmolLM2-135M-Instruct under ``transformers serve``) is documented in
the README ("Recorder") and kept in ``conformance/recordings/smollm2/``; it is too slow for CI.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolcall.cli import CommandError
from toolcall.cli import main as toolcall_main
from toolcall_conformance.cases import NEEDS_REVIEW, load_case, load_cases, verify_ids
from toolcall_conformance.recorder import add_record_arguments, align_ids, run_record
from toolcall_conformance.tokenizers import RealTokenizer, get_tokenizer

# A hermes-style output with content before the call and a 3-byte character (☀ takes more
# than one byte-level token in Qwen2.5, so some tokens release no text).
OUTPUT = (
    "Let me check ☀ for you.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
PROMPT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def qwen() -> RealTokenizer:
    return get_tokenizer("qwen2.5")


@dataclass
class Completion:
    """What the replay server streams: chunks of (text, ids) and how the stream ends."""

    chunks: list[tuple[str, list[int]]]
    finish_reason: str = "stop"
    eos_id: int | None = None
    prompt_ids: list[int] | None = None
    tool_call_chunk: bool = False


@dataclass
class ReplayServer:
    """Replay server (not a model): answers each streamed chat request with ``completion``."""

    completion: Completion
    dialect: str
    received: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def events(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        with_ids = self.dialect == "vllm" and body.get("return_token_ids") is True
        first: dict[str, Any] = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
        if with_ids:
            first["choices"][0]["delta"]["content"] = ""
            first["prompt_token_ids"] = self.completion.prompt_ids
        yield first
        if self.completion.tool_call_chunk:
            call = {"index": 0, "id": "c0", "type": "function", "function": {"name": "f"}}
            yield {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
        for text, ids in self.completion.chunks:
            choice: dict[str, Any] = {"index": 0, "delta": {"content": text}}
            if with_ids:
                choice["token_ids"] = ids
            elif not text:
                continue  # transformers serve sends nothing while a character is incomplete
            yield {"choices": [choice]}
        last: dict[str, Any] = {
            "index": 0,
            "delta": {"content": ""},
            "finish_reason": self.completion.finish_reason,
        }
        if with_ids:
            last["stop_reason"] = None
            eos = self.completion.eos_id
            last["token_ids"] = [eos] if eos is not None else []
        tokens = sum(len(ids) for _, ids in self.completion.chunks)
        yield {"choices": [last], "usage": {"completion_tokens": tokens}}


def _handler(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, data: object) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path == "/version" and server.dialect == "vllm":
                self._json(200, {"version": "0.33.0"})
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": []})
            else:
                self._json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            server.received.append(body)
            unknown = {"return_token_ids", "skip_special_tokens", "return_prompt_text"} & set(body)
            if server.dialect == "plain" and unknown:
                detail = f"Unexpected fields in the request: {unknown}"
                self._json(422, {"detail": detail})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in server.events(body):
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[tuple[ThreadingHTTPServer, threading.Thread]] = []

    def start(completion: Completion, dialect: str) -> ReplayServer:
        replay = ReplayServer(completion, dialect)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
        thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        started.append((httpd, thread))
        replay.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        return replay

    yield start
    for httpd, thread in started:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def per_token(tokenizer: RealTokenizer, text: str) -> list[tuple[str, list[int]]]:
    """One chunk per token, as vLLM streams: the text the detokenizer releases for it."""
    ids = tokenizer.encode(text)
    return [(delta, [i]) for delta, i in zip(tokenizer.decode_steps(ids), ids, strict=True)]


def write_requests(path: Path, lines: Sequence[dict[str, Any] | str]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def weather_request(**more: Any) -> dict[str, Any]:
    return {
        "id": "weather",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": TOOLS,
        **more,
    }


def record(base_url: str, requests: Path, out: Path, *extra: str) -> int:
    """Run ``toolcall record`` as the command line does (CommandError: one line, exit 2)."""
    parser = argparse.ArgumentParser()
    add_record_arguments(parser)
    args = parser.parse_args(
        [
            "--base-url",
            base_url,
            "--model",
            "Qwen/Qwen2.5-7B-Instruct",
            "--requests",
            str(requests),
            "--out",
            str(out),
            "--parser",
            "hermes",
            "--no-progress",
            *extra,
        ]
    )
    try:
        return run_record(args)
    except CommandError as error:
        print(f"toolcall: {error}")
        return error.status


def test_vllm_stream_with_token_ids(serve: Any, qwen: RealTokenizer, tmp_path: Path) -> None:
    chunks = per_token(qwen, OUTPUT)
    eos = qwen.special_tokens["<|im_end|>"]
    completion = Completion(chunks, eos_id=eos, prompt_ids=qwen.encode(PROMPT))
    server = serve(completion, "vllm")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request(tool_choice="required")])

    status = record(server.base_url, requests, tmp_path / "out", "--tokenizer", "qwen2.5")

    assert status == 0
    case = load_case(tmp_path / "out" / "weather.json")
    assert case.id == "hermes/Qwen2.5-7B-Instruct/weather"
    assert case.text == OUTPUT
    # the steps are the streamed chunks, texts and ids as sent, without the EOS id
    assert [(s.text, list(s.token_ids or ())) for s in case.steps] == chunks
    assert any(s.text == "" and s.token_ids for s in case.steps)
    assert eos in case.stop_token_ids
    assert case.tokenizer == "qwen2.5"
    assert case.finish_reason == "stop"
    assert verify_ids(case) == []
    assert case.provenance["kind"] == "recorded"
    assert case.provenance["synthetic_ids"] is False
    assert case.provenance["source"].startswith("vLLM 0.33.0, 127.0.0.1:")
    assert "temperature=0.0" in case.provenance["source"]
    assert "server's own" in case.provenance["notes"]
    assert case.request == {"tools": TOOLS, "tool_choice": "required"}
    assert case.expected.content is None
    assert case.expected.tool_calls == ()
    assert case.needs_review == ("expected",)
    assert case.extra["review"] == "expected left for review"
    assert case.extra["recording"]["prompt_token_ids"] == qwen.encode(PROMPT)
    # tool parsing off on the wire: tools rendered, no parser, no guided decoding
    [sent] = server.received
    assert sent["tool_choice"] == "none"
    assert sent["tools"] == TOOLS
    assert sent["stream"] is True
    assert sent["return_token_ids"] is True
    assert sent["skip_special_tokens"] is False
    assert "id" not in sent
    assert "parser" not in sent


def test_plain_server_ids_reencoded_one_step_per_chunk(
    serve: Any, qwen: RealTokenizer, tmp_path: Path
) -> None:
    chunks = per_token(qwen, OUTPUT)
    server = serve(Completion(chunks), "plain")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])

    status = record(server.base_url, requests, tmp_path / "out", "--tokenizer", "qwen2.5")

    assert status == 0
    # refused once with vLLM's fields, then asked again without them
    assert len(server.received) == 2
    assert "return_token_ids" in server.received[0]
    assert "return_token_ids" not in server.received[1]
    case = load_case(tmp_path / "out" / "weather.json")
    assert case.text == OUTPUT
    assert verify_ids(case) == []
    # the plain server sends no chunk for a token that releases no text; the ids of such a
    # token go with the text before it, so every sent chunk is still one step
    sent_texts = [text for text, _ in chunks if text]
    assert [s.text for s in case.steps] == sent_texts
    assert list(case.token_ids or ()) == qwen.encode(OUTPUT)
    assert "re-encoded" in case.provenance["notes"]
    assert case.provenance["source"].startswith("an unidentified OpenAI-compatible server")


def test_chunks_that_split_tokens_are_merged(
    serve: Any, qwen: RealTokenizer, tmp_path: Path
) -> None:
    # chunks of 5 characters cut through tokens; the ids of the real tokenizer are attached
    texts = [OUTPUT[i : i + 5] for i in range(0, len(OUTPUT), 5)]
    server = serve(Completion([(t, []) for t in texts]), "plain")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])

    status = record(server.base_url, requests, tmp_path / "out", "--tokenizer", "qwen2.5")

    assert status == 0
    case = load_case(tmp_path / "out" / "weather.json")
    assert case.text == OUTPUT
    assert verify_ids(case) == []
    assert len(case.steps) < len(texts)
    # every step is a run of whole chunks
    ends, position = set(), 0
    for text in texts:
        position += len(text)
        ends.add(position)
    position = 0
    for step in case.steps:
        position += len(step.text)
        assert position in ends
    assert "merged" in case.provenance["notes"]


def test_align_ids_merges_only_where_a_token_crosses() -> None:
    steps = align_ids(["ab", "c", "d", "ef"], [1, 2, 3, 4], ["a", "bc", "", "def"])
    assert steps == [("abc", [1, 2, 3]), ("def", [4])]
    with pytest.raises(ValueError, match="same text"):
        align_ids(["ab"], [1], ["a"])


def test_text_only_without_ids_or_tokenizer(
    serve: Any, qwen: RealTokenizer, tmp_path: Path
) -> None:
    chunks = per_token(qwen, OUTPUT)
    server = serve(Completion(chunks), "plain")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])

    assert record(server.base_url, requests, tmp_path / "out") == 0

    case = load_case(tmp_path / "out" / "weather.json")
    assert case.tokenizer is None
    assert case.token_ids is None
    assert [s.text for s in case.steps] == [text for text, _ in chunks if text]
    assert "synthetic_ids" not in case.provenance
    assert "no token ids" in case.provenance["notes"]


def test_length_keeps_every_id(serve: Any, qwen: RealTokenizer, tmp_path: Path) -> None:
    cut = per_token(qwen, OUTPUT)[:12]
    server = serve(Completion(cut, finish_reason="length"), "vllm")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request(max_tokens=12)])

    assert record(server.base_url, requests, tmp_path / "out", "--tokenizer", "qwen2.5") == 0

    case = load_case(tmp_path / "out" / "weather.json")
    assert case.finish_reason == "length"
    assert [list(s.token_ids or ()) for s in case.steps] == [ids for _, ids in cut]
    assert server.received[0]["max_tokens"] == 12


def test_server_that_parses_tool_calls_fails_that_request_only(
    serve: Any, qwen: RealTokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eos = qwen.special_tokens["<|im_end|>"]
    completion = Completion(per_token(qwen, OUTPUT), eos_id=eos, tool_call_chunk=True)
    server = serve(completion, "vllm")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])

    assert record(server.base_url, requests, tmp_path / "out") == 1

    err = capsys.readouterr().err
    assert "request 'weather' (line 1)" in err
    assert "tool parser" in err
    assert not (tmp_path / "out" / "weather.json").exists()


def test_unreachable_server_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port on which nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])

    status = record(f"http://127.0.0.1:{port}/v1", requests, tmp_path / "out")

    out = capsys.readouterr().out
    assert status == 2
    assert out.count("\n") == 1
    assert "cannot reach the server" in out
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([weather_request(), "{not json"], "r.jsonl:2: not JSON"),
        ([{"id": "x", "tools": TOOLS}], "r.jsonl:1: 'messages' must be a non-empty list"),
        ([weather_request(), weather_request()], "r.jsonl:2: id 'weather' is also"),
        ([weather_request(id="a b")], "r.jsonl:1: 'id' must be"),
        ([weather_request(tools="get_weather")], "r.jsonl:1: 'tools' must be a list"),
        ([weather_request(tool_choice="sometimes")], "r.jsonl:1: tools/tool_choice"),
        ([weather_request(n=2)], "r.jsonl:1: 'n' must be 1"),
    ],
)
def test_bad_requests_file_is_one_line_exit_2_and_sends_nothing(
    serve: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    lines: list[Any],
    message: str,
) -> None:
    server = serve(Completion([]), "vllm")
    requests = write_requests(tmp_path / "r.jsonl", lines)

    status = record(server.base_url, requests, tmp_path / "out")

    out = capsys.readouterr().out
    assert status == 2
    assert message in out
    assert out.count("\n") == 1
    assert server.received == []
    assert not (tmp_path / "out").exists()


def test_existing_case_file_is_kept_unless_overwrite(
    serve: Any, qwen: RealTokenizer, tmp_path: Path
) -> None:
    server = serve(Completion(per_token(qwen, "Hi there")), "vllm")
    requests = write_requests(tmp_path / "r.jsonl", [weather_request()])
    existing = tmp_path / "out" / "weather.json"
    existing.parent.mkdir()
    existing.write_text("keep me", encoding="utf-8")

    assert record(server.base_url, requests, tmp_path / "out") == 2
    assert existing.read_text(encoding="utf-8") == "keep me"
    assert server.received == []

    assert record(server.base_url, requests, tmp_path / "out", "--overwrite") == 0
    assert load_case(existing).text == "Hi there"


def test_toolcall_record_command(
    serve: Any, qwen: RealTokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The subcommand is wired into ``toolcall`` through the conformance kit's plugin."""
    eos = qwen.special_tokens["<|im_end|>"]
    server = serve(Completion(per_token(qwen, OUTPUT), eos_id=eos), "vllm")
    lines = [
        weather_request(),
        {"id": "hello", "parser": "qwen3_json", "messages": [{"role": "user", "content": "Hi"}]},
    ]
    requests = write_requests(tmp_path / "r.jsonl", lines)
    out = tmp_path / "out"

    status = toolcall_main(
        [
            "record",
            "--base-url",
            server.base_url.removesuffix("/v1"),
            "--model",
            "qwen",
            "--requests",
            str(requests),
            "--out",
            str(out),
            "--parser",
            "hermes",
            "--tokenizer",
            "qwen2.5",
        ]
    )

    assert status == 0
    cases, errors = load_cases([out])
    assert errors == []
    assert sorted(c.id for c in cases) == ["hermes/qwen/weather", "qwen3_json/qwen/hello"]
    assert all(c.text == OUTPUT and NEEDS_REVIEW in c.extra for c in cases)
    assert "wrote" in capsys.readouterr().out


# --------------------------------------------------------------------------------------
# Against vLLM 0.33's real OpenAI server (the vllm nox session): the front end, chat
# template, detokenizer and return_token_ids are vLLM's own; only the engine core replays
# ids (toolcall-replay), so no weights are needed.


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``vllm serve`` with no tool parser (tool parsing off), the replay engine, Qwen2.5."""
    from toolcall_replay.model_dir import build_model_dir
    from toolcall_replay.server import ReplayServer

    workdir = tmp_path_factory.mktemp("recorder-vllm")
    with ReplayServer(
        build_model_dir("qwen2.5"), tool_call_parser=None, plugins=(), workdir=workdir
    ) as server:
        yield server


@pytest.mark.parametrize("finish_reason", ["stop", "length"])
@pytest.mark.vllm
@pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None or importlib.util.find_spec("toolcall_replay") is None,
    reason="needs vLLM 0.33 and toolcall-replay (the vllm nox session)",
)
def test_recording_from_real_vllm_server(
    vllm_server: Any, qwen: RealTokenizer, tmp_path: Path, finish_reason: str
) -> None:
    from toolcall_replay.script import Recording

    ids = qwen.encode(OUTPUT)
    marker = f"[case:recorder-{finish_reason}]"
    vllm_server.add(Recording.from_token_ids(marker, ids, prompt_contains=marker))
    request = weather_request(
        id=finish_reason,
        messages=[{"role": "user", "content": f"Weather in Paris? {marker}"}],
    )
    if finish_reason == "length":
        request["max_tokens"] = 10
    requests = write_requests(tmp_path / "r.jsonl", [request])

    model = ("--model", vllm_server.served_model_name)
    status = record(
        vllm_server.base_url, requests, tmp_path / "out", *model, "--tokenizer", "qwen2.5"
    )

    assert status == 0
    case = load_case(tmp_path / "out" / f"{finish_reason}.json")
    kept = ids if finish_reason == "stop" else ids[:10]
    # one engine step, one chunk, one step: the ids vLLM generated, its detokenizer's text
    assert [list(s.token_ids or ()) for s in case.steps] == [[i] for i in kept]
    assert [s.text for s in case.steps] == qwen.decode_steps(kept)
    assert case.finish_reason == finish_reason
    assert verify_ids(case) == []
    assert qwen.special_tokens["<|im_end|>"] in case.stop_token_ids
    assert case.provenance["source"].startswith("vLLM 0.33.0, 127.0.0.1:")
    recording = case.extra["recording"]
    # tool_choice "none" on the wire still renders the tools into the prompt
    assert "get_weather" in recording["prompt_text"]
    assert qwen.hf_tokenizer.decode(recording["prompt_token_ids"]) == recording["prompt_text"]
