"""Record raw model outputs from a running OpenAI-compatible server as conformance cases.

``toolcall record --base-url URL --model NAME --requests FILE.jsonl --out DIR`` sends each
request of the requests file (JSON lines: an OpenAI chat request body, plus an optional
``id`` and ``parser``) to ``URL/chat/completions``, streamed, with tool parsing switched off,
and writes one case per request to ``DIR/<id>.json``:

- **Tool parsing off.** A request with tools goes out with ``tool_choice: "none"``: the chat
  template still renders the tools, but no server-side tool parser and no guided decoding
  runs, so the streamed content is the model's raw text. The case keeps the request's own
  ``tool_choice`` (the output was not constrained, and the notes say so). A chunk that
  carries ``tool_calls`` or reasoning anyway fails that request: the raw text is lost.
- **Steps** are the streamed chunks as the server sent them (the text of each, and its token
  ids). vLLM returns the ids with ``return_token_ids: true``; the recorder also asks for
  ``skip_special_tokens: false`` (the text a tool parser sees) and ``return_prompt_text``.
  A server that refuses these fields (``transformers serve`` answers 422) is asked again
  without them, and then the text comes alone.
- **Token ids** are the server's own where it returns them (the stop token that ended
  generation is taken off the last step, as vLLM does not pass it to the parser). Otherwise,
  with ``--tokenizer``, the text is re-encoded with that real tokenizer and the ids are
  assigned to the chunks; where a re-encoded token crosses a chunk boundary, those chunks
  are merged into one step. Without ids the case is text-only (``tokenizer: null``).
  ``provenance.notes`` says which of these happened.
- **expected** is left empty (``{"content": null, "tool_calls": []}``) and marked:
  ``extra.needs_review: ["expected"]`` and ``extra.review``. Fill it in by reading the output
  against the parsing policy, never by copying a parser's answer.

The request file is checked whole before anything is sent. An unreachable server or a bad
requests file is a one-line error with exit status 2; a request that fails at the server is
reported and the others are still recorded (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import regex
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolcall import Request
from toolcall.cli import CommandError
from toolcall_conformance import __version__
from toolcall_conformance.builder import special_tokens_of
from toolcall_conformance.cases import NEEDS_REVIEW, SCHEMA_ID, CaseError, write_case
from toolcall_conformance.tokenizers import (
    TOKENIZER_NAMES,
    RealTokenizer,
    TokenizerBuildError,
    get_tokenizer,
    load_tokenizer_path,
    registered_tokenizers,
)

__all__ = [
    "RECORDER_VERSION",
    "Chunk",
    "RecordOptions",
    "RecordRequest",
    "Recorder",
    "RequestFailed",
    "ServerStream",
    "add_record_arguments",
    "align_ids",
    "read_requests",
    "run_record",
]

#: Recorded in ``extra.recorder`` of every case written here.
RECORDER_VERSION = 1

REVIEW_NOTE = "expected left for review"

#: vLLM request fields that make a stream recordable as the parser sees it. Servers that do
#: not know them may refuse the request; it is then sent again without them.
VLLM_EXTRAS: Mapping[str, Any] = {
    "return_token_ids": True,
    "skip_special_tokens": False,
    "return_prompt_text": True,
}

# Fields of a requests-file line that are the recorder's own, not the server's.
_OWN_FIELDS = ("id", "parser")
_SLUG = regex.compile(r"[A-Za-z0-9_.+-]+")
_PARSER_NAME = regex.compile(r"[a-z0-9_.-]+")
_EXIT_USAGE = 2
_EXIT_FAILED = 1


class RequestFailed(Exception):
    """One request could not be recorded (the server refused it, or parsed its output)."""


# --------------------------------------------------------------------------------------
# The requests file


@dataclass(frozen=True)
class RecordRequest:
    """One line of the requests file."""

    line: int
    slug: str
    parser: str
    #: The request body as written, without the recorder's own fields.
    body: Mapping[str, Any]

    @property
    def tools(self) -> list[Any]:
        return list(self.body.get("tools") or [])

    def case_request(self) -> dict[str, Any]:
        """The parsing-relevant part of the request, as the case's ``request`` keeps it."""
        request: dict[str, Any] = {"tools": self.tools}
        for key in ("tool_choice", "parallel_tool_calls"):
            if key in self.body:
                request[key] = self.body[key]
        return request


def _file_error(path: Path, line: int, message: str) -> CommandError:
    return CommandError(f"{path}:{line}: {message}")


def read_requests(path: Path, *, default_parser: str | None) -> list[RecordRequest]:
    """Read and check the whole requests file; raises :class:`CommandError` naming the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        msg = f"cannot read the requests file {path}: {error}"
        raise CommandError(msg) from error
    requests: list[RecordRequest] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            body = json.loads(text)
        except json.JSONDecodeError as error:
            msg = f"not JSON: {error.msg} at column {error.colno}"
            raise _file_error(path, number, msg) from error
        request = _check_line(path, number, body, default_parser)
        if request.slug in seen:
            msg = f"id {request.slug!r} is also the id on line {seen[request.slug]}"
            raise _file_error(path, number, msg)
        seen[request.slug] = number
        requests.append(request)
    if not requests:
        msg = f"the requests file {path} holds no requests"
        raise CommandError(msg)
    return requests


def _check_line(path: Path, number: int, body: object, default_parser: str | None) -> RecordRequest:
    def fail(message: str) -> CommandError:
        return _file_error(path, number, message)

    if not isinstance(body, dict):
        raise fail("each line must be a JSON object (an OpenAI chat request body)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise fail("'messages' must be a non-empty list")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise fail("every message must be an object with a 'role'")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise fail("'tools' must be a list of objects")
    if body.get("n", 1) != 1:
        raise fail("'n' must be 1: a case records one output")
    try:
        Request.from_openai(body)
    except ValueError as error:
        raise fail(f"tools/tool_choice: {error}") from error
    slug = body.get("id", f"line{number:03d}")
    if not isinstance(slug, str) or not _SLUG.fullmatch(slug):
        raise fail(f"'id' must be letters, digits and _.+- only, got {slug!r}")
    parser = body.get("parser", default_parser)
    if parser is None:
        raise fail("no parser: give 'parser' on the line or --parser")
    if not isinstance(parser, str) or not _PARSER_NAME.fullmatch(parser):
        raise fail(f"'parser' must be a parser name (a-z, 0-9, _.-), got {parser!r}")
    payload = {key: value for key, value in body.items() if key not in _OWN_FIELDS}
    return RecordRequest(line=number, slug=slug, parser=parser, body=payload)


# --------------------------------------------------------------------------------------
# Talking to the server


@dataclass(frozen=True)
class Chunk:
    """One streamed chunk: the text it carried and, if the server sent them, its token ids."""

    text: str
    token_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ServerStream:
    """What one streamed chat completion brought back."""

    chunks: tuple[Chunk, ...]
    finish_reason: str
    stop_reason: int | str | None = None
    prompt_token_ids: tuple[int, ...] | None = None
    prompt_text: str | None = None
    completion_tokens: int | None = None
    #: Seconds from sending the request to the first chunk with text or ids, and to the end.
    first_token_s: float | None = None
    total_s: float = 0.0

    @property
    def has_ids(self) -> bool:
        return any(chunk.token_ids is not None for chunk in self.chunks)


def _api_root(base_url: str) -> str:
    """``http://host:port/v1`` for a base URL given with or without ``/v1``."""
    parts = urllib.parse.urlsplit(base_url.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        msg = f"--base-url must be an http(s) URL, got {base_url!r}"
        raise CommandError(msg)
    path = parts.path if parts.path not in ("", "/") else "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _server_root(api_root: str) -> str:
    parts = urllib.parse.urlsplit(api_root)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _iter_sse(lines: Iterator[bytes]) -> Iterator[str]:
    """The data of each server-sent event (multi-line data joined with newlines)."""
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _read_error(error: urllib.error.HTTPError) -> str:
    with error:
        return _error_text(error.read())


def _error_text(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return " ".join(text.split())[:300]
    if isinstance(data, dict):
        for key in ("detail", "error", "message"):
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                return " ".join(str(value).split())[:300]
    return " ".join(text.split())[:300]


@dataclass
class _Collector:
    """Accumulates the chunks of one stream."""

    started: float
    chunks: list[Chunk] = field(default_factory=list)
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    prompt_token_ids: tuple[int, ...] | None = None
    prompt_text: str | None = None
    completion_tokens: int | None = None
    first_token_s: float | None = None

    def add(self, event: Mapping[str, Any]) -> Chunk | None:
        if "error" in event:
            detail = _error_text(json.dumps(event).encode())
            msg = f"the server reported an error mid-stream: {detail}"
            raise RequestFailed(msg)
        if self.prompt_token_ids is None and isinstance(event.get("prompt_token_ids"), list):
            self.prompt_token_ids = tuple(int(i) for i in event["prompt_token_ids"])
        if self.prompt_text is None and isinstance(event.get("prompt_text"), str):
            self.prompt_text = event["prompt_text"]
        usage = event.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.completion_tokens = usage["completion_tokens"]
        added: Chunk | None = None
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("tool_calls"):
                msg = (
                    "the server parsed tool calls out of the output, so the raw text is lost: "
                    "start it without a tool parser (vLLM: no --enable-auto-tool-choice / "
                    "--tool-call-parser)"
                )
                raise RequestFailed(msg)
            if delta.get("reasoning_content") or delta.get("reasoning"):
                msg = (
                    "the server split reasoning out of the output, so the raw text is lost: "
                    "start it without a reasoning parser"
                )
                raise RequestFailed(msg)
            text = delta.get("content") or ""
            ids = choice.get("token_ids")
            token_ids = tuple(int(i) for i in ids) if isinstance(ids, list) else None
            if text or token_ids:
                added = Chunk(text=text, token_ids=token_ids)
                self.chunks.append(added)
                if self.first_token_s is None:
                    self.first_token_s = time.perf_counter() - self.started
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                self.stop_reason = choice.get("stop_reason")
        return added

    def result(self) -> ServerStream:
        if self.finish_reason is None:
            msg = "the stream ended without a finish_reason (the server closed it early)"
            raise RequestFailed(msg)
        if self.finish_reason not in ("stop", "length"):
            msg = f"finish_reason {self.finish_reason!r}: only 'stop' and 'length' are recorded"
            raise RequestFailed(msg)
        return ServerStream(
            chunks=tuple(self.chunks),
            finish_reason=self.finish_reason,
            stop_reason=self.stop_reason,
            prompt_token_ids=self.prompt_token_ids,
            prompt_text=self.prompt_text,
            completion_tokens=self.completion_tokens,
            first_token_s=self.first_token_s,
            total_s=time.perf_counter() - self.started,
        )


class _Client:
    """The few HTTP calls the recorder makes (stdlib only: streaming needs nothing more)."""

    def __init__(self, base_url: str, *, api_key: str | None, timeout: float) -> None:
        self.api_root = _api_root(base_url)
        self.host = urllib.parse.urlsplit(self.api_root).netloc
        self._api_key = api_key
        self._timeout = timeout

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def check_reachable(self) -> None:
        """Raise :class:`CommandError` if nothing answers at the base URL."""
        request = urllib.request.Request(f"{self.api_root}/models", headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=min(self._timeout, 30.0)):
                pass
        except urllib.error.HTTPError as error:
            error.close()  # something answered; /models is optional on some servers
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            msg = f"cannot reach the server at {self.api_root}: {reason}"
            raise CommandError(msg) from error

    def version(self) -> str | None:
        """vLLM's ``GET /version``, if the server has it."""
        request = urllib.request.Request(f"{_server_root(self.api_root)}/version")
        try:
            with urllib.request.urlopen(request, timeout=min(self._timeout, 30.0)) as response:
                data = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) else None
        return version if isinstance(version, str) else None

    def stream_chat(
        self, body: Mapping[str, Any], on_chunk: Callable[[Chunk], None]
    ) -> ServerStream:
        """POST a streamed chat completion; raises :class:`urllib.error.HTTPError` on a
        refusal and :class:`RequestFailed` on anything else that spoils the recording."""
        request = urllib.request.Request(
            f"{self.api_root}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers=self._headers(),
            method="POST",
        )
        collector = _Collector(started=time.perf_counter())
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                kind = response.headers.get("Content-Type", "")
                if "text/event-stream" not in kind:
                    msg = f"the server did not stream (Content-Type {kind!r})"
                    raise RequestFailed(msg)
                for data in _iter_sse(response):
                    if data.strip() == "[DONE]":
                        break
                    try:
                        event = json.loads(data)
                    except json.JSONDecodeError as error:
                        msg = f"a streamed event is not JSON: {data[:120]!r}"
                        raise RequestFailed(msg) from error
                    if isinstance(event, dict):
                        chunk = collector.add(event)
                        if chunk is not None:
                            on_chunk(chunk)
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            msg = f"the connection failed: {reason}"
            raise RequestFailed(msg) from error
        return collector.result()


# --------------------------------------------------------------------------------------
# From a stream to steps


def align_ids(
    texts: Sequence[str], ids: Sequence[int], deltas: Sequence[str]
) -> list[tuple[str, list[int]]]:
    """Give re-encoded token ids to streamed chunks.

    ``deltas[k]`` is the text the detokenizer releases for ``ids[k]``; the deltas and the
    chunk ``texts`` concatenate to the same text. A token goes to the chunk in which its
    text ends (a token that releases nothing goes with the text before it). Where a token's
    text crosses a chunk boundary, the chunks it touches become one step. Returns the steps
    as (text, ids).
    """
    if "".join(texts) != "".join(deltas) or len(ids) != len(deltas):
        msg = "the chunks and the tokens do not spell the same text"
        raise ValueError(msg)
    ends: list[int] = []
    position = 0
    for delta in deltas:
        position += len(delta)
        ends.append(position)
    steps: list[tuple[str, list[int]]] = []
    pending_text = ""
    pending_ids: list[int] = []
    chunk_end = 0
    token = 0
    for text in texts:
        pending_text += text
        chunk_end += len(text)
        while token < len(ids) and ends[token] <= chunk_end:
            pending_ids.append(ids[token])
            token += 1
        last_end = ends[token - 1] if token else 0
        if last_end == chunk_end:
            steps.append((pending_text, pending_ids))
            pending_text, pending_ids = "", []
    if pending_text or pending_ids:
        steps.append((pending_text, pending_ids))
    return steps


@dataclass(frozen=True)
class _Steps:
    steps: list[dict[str, Any]]
    tokenizer: str | None
    stop_token_ids: list[int]
    special_tokens: dict[str, int] | None
    notes: list[str]


def _stop_id_at_end(stream: ServerStream, known_stops: Sequence[int]) -> int | None:
    """The stop token id vLLM appends to the last chunk's ids when generation stopped on it."""
    if stream.finish_reason != "stop" or isinstance(stream.stop_reason, str):
        return None
    last = next((c.token_ids for c in reversed(stream.chunks) if c.token_ids), None)
    if not last:
        return None
    if isinstance(stream.stop_reason, int):
        return last[-1] if last[-1] == stream.stop_reason else None
    # stop_reason None: the model's EOS ended it; vLLM reports that id in token_ids.
    if known_stops and last[-1] not in known_stops:
        return None
    return last[-1]


def _steps_from_server_ids(
    stream: ServerStream, tokenizer: RealTokenizer | None, label: str
) -> _Steps:
    missing = [i for i, c in enumerate(stream.chunks) if c.token_ids is None]
    if missing:
        msg = f"the server sent token ids on some chunks but not on chunk {missing[0]}"
        raise RequestFailed(msg)
    known = list(tokenizer.stop_token_ids) if tokenizer is not None else []
    stop = _stop_id_at_end(stream, known)
    chunks = [(c.text, list(c.token_ids or ())) for c in stream.chunks]
    notes = ["token ids: the server's own (return_token_ids), one step per streamed chunk"]
    if stop is not None:
        for index in range(len(chunks) - 1, -1, -1):
            if chunks[index][1]:
                chunks[index][1].pop()
                if not chunks[index][0] and not chunks[index][1]:
                    del chunks[index]
                break
        notes.append(f"the stop token {stop} that ended generation was taken off the last step")
    flat = [i for _, ids in chunks for i in ids]
    stops = sorted({*known, *([stop] if stop is not None else [])} - set(flat))
    special = special_tokens_of(tokenizer, flat) if tokenizer is not None else None
    if tokenizer is not None:
        notes.extend(_decode_check(tokenizer, chunks))
    return _Steps(
        steps=[{"text": text, "token_ids": ids} for text, ids in chunks],
        tokenizer=label,
        stop_token_ids=stops,
        special_tokens=special,
        notes=notes,
    )


def _decode_check(tokenizer: RealTokenizer, chunks: Sequence[tuple[str, list[int]]]) -> list[str]:
    """A note if the server's ids do not decode, step by step, to the server's text."""
    deltas = iter(tokenizer.decode_steps([i for _, ids in chunks for i in ids]))
    for index, (text, ids) in enumerate(chunks):
        decoded = "".join(next(deltas) for _ in ids)
        if decoded != text:
            return [
                f"WARNING: with {tokenizer.name}, the ids of step {index} decode to "
                f"{decoded!r}, but the server sent {text!r}"
            ]
    return [f"checked: the ids decode with {tokenizer.name} to each step's text"]


def _steps_from_tokenizer(stream: ServerStream, tokenizer: RealTokenizer, label: str) -> _Steps:
    texts = [c.text for c in stream.chunks if c.text]
    text = "".join(texts)
    ids = tokenizer.encode(text)
    deltas = tokenizer.decode_steps(ids)
    if "".join(deltas) != text:
        return _text_only(
            stream,
            [
                f"the server returned no token ids, and the text does not come back unchanged "
                f"through {tokenizer.name} and the detokenizer, so the case is text-only"
            ],
        )
    flat_stops = set(tokenizer.stop_token_ids) & set(ids)
    if flat_stops:
        return _text_only(
            stream,
            [
                f"the server returned no token ids, and the text re-encodes to the stop token "
                f"{min(flat_stops)} of {tokenizer.name}, so the case is text-only"
            ],
        )
    steps = align_ids(texts, ids, deltas)
    notes = [
        f"token ids: the server returned none; the text was re-encoded with the real "
        f"tokenizer {tokenizer.name}, so the ids are that tokenizer's encoding of the text, "
        "which may differ from the ids the model generated"
    ]
    if len(steps) < len(texts):
        notes.append(
            f"{len(texts)} streamed chunks became {len(steps)} steps: chunks were merged where "
            "a re-encoded token crossed a chunk boundary"
        )
    else:
        notes.append("one step per streamed chunk")
    return _Steps(
        steps=[{"text": t, "token_ids": i} for t, i in steps],
        tokenizer=label,
        stop_token_ids=list(tokenizer.stop_token_ids),
        special_tokens=special_tokens_of(tokenizer, ids),
        notes=notes,
    )


def _text_only(stream: ServerStream, notes: list[str]) -> _Steps:
    return _Steps(
        steps=[{"text": c.text} for c in stream.chunks if c.text],
        tokenizer=None,
        stop_token_ids=[],
        special_tokens=None,
        notes=[*notes, "one step per streamed chunk"],
    )


# --------------------------------------------------------------------------------------
# The recorder


@dataclass(frozen=True)
class RecordOptions:
    base_url: str
    model: str
    out: Path
    model_label: str
    server_label: str | None = None
    tokenizer: RealTokenizer | None = None
    tokenizer_label: str | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = 256
    seed: int | None = None
    api_key: str | None = None
    timeout: float = 600.0
    overwrite: bool = False


@dataclass(frozen=True)
class Recorded:
    request: RecordRequest
    path: Path
    steps: int
    tokens: int | None
    stream: ServerStream


def _slugify(text: str) -> str:
    return regex.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-") or "model"


def default_model_label(model: str) -> str:
    """A readable label for a served model name: its last path component, without a GGUF
    file or a revision."""
    name = model.rstrip("/").rsplit("/", 1)[-1]
    return name.split(":", 1)[0].split("@", 1)[0] or model


class Recorder:
    """Sends the requests and writes the cases (one object per run: it remembers whether the
    server accepts vLLM's extra request fields)."""

    def __init__(self, options: RecordOptions) -> None:
        self.options = options
        self._client = _Client(options.base_url, api_key=options.api_key, timeout=options.timeout)
        self._use_extras = True
        self._source: str | None = None

    @property
    def model_slug(self) -> str:
        return _slugify(self.options.model_label)

    def case_path(self, request: RecordRequest) -> Path:
        return self.options.out / f"{request.slug}.json"

    def case_id(self, request: RecordRequest) -> str:
        return f"{request.parser}/{self.model_slug}/{request.slug}"

    def check_reachable(self) -> None:
        self._client.check_reachable()

    def server_label(self) -> str:
        if self.options.server_label:
            return self.options.server_label
        version = self._client.version()
        return f"vLLM {version}" if version else "an unidentified OpenAI-compatible server"

    def wire_body(self, request: RecordRequest, *, extras: bool) -> dict[str, Any]:
        """The body sent for ``request``: streamed, tool parsing off, sampling defaults."""
        body = dict(request.body)
        body["model"] = self.options.model
        body["stream"] = True
        if request.tools:
            body["tool_choice"] = "none"
        defaults = {
            "temperature": self.options.temperature,
            "max_tokens": self.options.max_tokens,
            "seed": self.options.seed,
        }
        for key, value in defaults.items():
            if value is not None and key not in body:
                body[key] = value
        if extras:
            body.update(VLLM_EXTRAS)
        return body

    def fetch(
        self, request: RecordRequest, on_chunk: Callable[[Chunk], None]
    ) -> tuple[ServerStream, dict[str, Any]]:
        """Stream one completion (asking again without vLLM's fields if they are refused)."""
        body = self.wire_body(request, extras=self._use_extras)
        try:
            return self._client.stream_chat(body, on_chunk), body
        except urllib.error.HTTPError as error:
            detail = _read_error(error)
            refused_extras = self._use_extras and any(name in detail for name in VLLM_EXTRAS)
            if not refused_extras:
                msg = f"the server refused the request: HTTP {error.code}: {detail}"
                raise RequestFailed(msg) from error
        self._use_extras = False
        body = self.wire_body(request, extras=False)
        try:
            return self._client.stream_chat(body, on_chunk), body
        except urllib.error.HTTPError as error:
            msg = f"the server refused the request: HTTP {error.code}: {_read_error(error)}"
            raise RequestFailed(msg) from error

    def source(self, body: Mapping[str, Any]) -> str:
        if self._source is None:
            self._source = self.server_label()
        sampling = ", ".join(
            f"{key}={body[key]}"
            for key in ("temperature", "top_p", "max_tokens", "seed")
            if key in body
        )
        return f"{self._source}, {self._client.host}, streamed chat completions, sampling: " + (
            sampling or "server defaults"
        )

    def build_case(
        self, request: RecordRequest, stream: ServerStream, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        tokenizer = self.options.tokenizer
        label = self.options.tokenizer_label or self.model_slug.lower()
        if stream.has_ids:
            built = _steps_from_server_ids(stream, tokenizer, label)
        elif tokenizer is not None:
            built = _steps_from_tokenizer(stream, tokenizer, label)
        else:
            built = _text_only(
                stream,
                ["the server returned no token ids and no --tokenizer was given: text only"],
            )
        if not built.steps:
            msg = "the model produced no output (no text, no ids)"
            raise RequestFailed(msg)
        notes = list(built.notes)
        if request.tools:
            choice = json.dumps(request.body.get("tool_choice", "auto"))
            notes.append(
                f'sent with tool_choice "none" (tool parsing off); the request\'s tool_choice '
                f"is {choice}, and the output was not constrained by a grammar"
            )
        provenance: dict[str, Any] = {
            "kind": "recorded",
            "source": self.source(body),
            "model": self.options.model_label,
            "notes": "; ".join(notes),
        }
        if built.tokenizer is not None:
            provenance["synthetic_ids"] = False
        recording: dict[str, Any] = {
            "messages": request.body["messages"],
            "sent": {k: v for k, v in body.items() if k not in ("messages", "tools")},
            "recorded_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "chunks": len(stream.chunks),
        }
        if stream.completion_tokens is not None:
            recording["completion_tokens"] = stream.completion_tokens
        if stream.prompt_text is not None:
            recording["prompt_text"] = stream.prompt_text
        if stream.prompt_token_ids is not None:
            recording["prompt_token_ids"] = list(stream.prompt_token_ids)
        output: dict[str, Any] = {"steps": built.steps, "finish_reason": stream.finish_reason}
        if built.stop_token_ids:
            output["stop_token_ids"] = built.stop_token_ids
        case: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "id": self.case_id(request),
            "parser": request.parser,
            "tokenizer": built.tokenizer,
        }
        if built.special_tokens:
            case["special_tokens"] = built.special_tokens
        case.update(
            {
                "provenance": provenance,
                "request": request.case_request(),
                "output": output,
                "expected": {"content": None, "tool_calls": []},
                "extra": {
                    NEEDS_REVIEW: ["expected"],
                    "review": REVIEW_NOTE,
                    "recorder": {"version": RECORDER_VERSION, "toolcall_conformance": __version__},
                    "recording": recording,
                },
            }
        )
        return case

    def record(self, request: RecordRequest, on_chunk: Callable[[Chunk], None]) -> Recorded:
        """Record one request and write its case; raises :class:`RequestFailed`."""
        stream, body = self.fetch(request, on_chunk)
        case = self.build_case(request, stream, body)
        path = self.case_path(request)
        try:
            write_case(case, path)
        except CaseError as error:
            msg = f"the recorded case is not valid: {error}"
            raise RequestFailed(msg) from error
        except OSError as error:
            msg = f"cannot write {path}: {error}"
            raise RequestFailed(msg) from error
        tokens = sum(len(s.get("token_ids", ())) for s in case["output"]["steps"]) or None
        return Recorded(request, path, len(case["output"]["steps"]), tokens, stream)


# --------------------------------------------------------------------------------------
# Command line: toolcall record


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``toolcall record``."""
    parser.add_argument(
        "--base-url",
        required=True,
        metavar="URL",
        help="the server's API root, e.g. http://127.0.0.1:8000/v1",
    )
    parser.add_argument(
        "--model", required=True, metavar="NAME", help="the model name the server serves"
    )
    parser.add_argument(
        "--requests",
        required=True,
        metavar="FILE",
        help="JSON lines: OpenAI chat request bodies, each with an optional 'id' and 'parser'",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="write DIR/<id>.json")
    parser.add_argument(
        "--parser", metavar="NAME", help="the parser the cases target, for lines without one"
    )
    parser.add_argument(
        "--tokenizer",
        metavar="NAME|PATH",
        help=(
            f"the model's real tokenizer: one of {', '.join(TOKENIZER_NAMES)}, or a local "
            "tokenizer directory or .gguf file. Checks the server's ids, or gives ids to a "
            "text-only stream by re-encoding it"
        ),
    )
    parser.add_argument(
        "--tokenizer-name",
        metavar="NAME",
        help="the case's 'tokenizer' (default: the --tokenizer name, else from the model)",
    )
    parser.add_argument(
        "--model-label",
        metavar="NAME",
        help="the model as the case names it (provenance.model, the id; default: from --model)",
    )
    parser.add_argument(
        "--server-label",
        metavar="TEXT",
        help="the server and version for provenance.source (default: asks vLLM's /version)",
    )
    parser.add_argument(
        "--temperature", type=float, default=0.0, help="unless a line sets it (default: 0)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=256, help="unless a line sets it (default: 256)"
    )
    parser.add_argument("--seed", type=int, help="unless a line sets it")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("OPENAI_API_KEY"),
        help="bearer token (default: $OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait for the server (default 600)"
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace case files that exist in DIR"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar, even on a terminal"
    )


def _load_tokenizer(spec: str, name: str | None) -> RealTokenizer:
    """A kit tokenizer by name (built-in or registered), or a local tokenizer (a directory,
    a mistral-common file, or the tokenizer inside a .gguf file) called ``name`` (default:
    the directory or file name)."""
    if spec in TOKENIZER_NAMES or spec in registered_tokenizers():
        return get_tokenizer(spec)
    path = Path(spec)
    if not path.exists():
        msg = (
            f"--tokenizer {spec!r} is neither a known tokenizer "
            f"({', '.join(TOKENIZER_NAMES)}) nor an existing path"
        )
        raise CommandError(msg)
    label = name or _slugify(path.stem if path.is_file() else path.name).lower()
    try:
        return load_tokenizer_path(path, name=label)
    except TokenizerBuildError as error:
        raise CommandError(f"cannot load the tokenizer at {path}: {error}") from error


def options_from_args(args: argparse.Namespace) -> RecordOptions:
    label = args.tokenizer_name
    if label is not None and not _SLUG.fullmatch(label):
        msg = f"--tokenizer-name must be letters, digits and _.+- only, got {label!r}"
        raise CommandError(msg)
    tokenizer = _load_tokenizer(args.tokenizer, label) if args.tokenizer else None
    label = label or (tokenizer.name if tokenizer is not None else None)
    return RecordOptions(
        base_url=args.base_url,
        model=args.model,
        out=Path(args.out),
        model_label=args.model_label or default_model_label(args.model),
        server_label=args.server_label,
        tokenizer=tokenizer,
        tokenizer_label=label,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        seed=args.seed,
        api_key=args.api_key,
        timeout=args.timeout,
        overwrite=args.overwrite,
    )


class _Bars:
    """Rich progress on stderr (a terminal only): the requests, and the tokens of the one
    being streamed."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._progress: Progress | None = None
        self._requests: Any = None
        self._tokens: Any = None
        if enabled and sys.stderr.isatty():
            self._progress = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
            )
            self._requests = self._progress.add_task("requests", total=total, detail="")
            self._tokens = self._progress.add_task("", total=None, detail="", visible=False)

    def __enter__(self) -> _Bars:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def start(self, request: RecordRequest, max_tokens: int | None) -> None:
        if self._progress is not None:
            self._progress.reset(
                self._tokens,
                description=request.slug,
                total=max_tokens,
                completed=0,
                detail="tokens",
                visible=True,
            )

    def chunk(self, chunk: Chunk) -> None:
        if self._progress is not None:
            self._progress.advance(self._tokens, len(chunk.token_ids or ()) or 1)

    def done(self) -> None:
        if self._progress is not None:
            self._progress.advance(self._requests)
            self._progress.update(self._tokens, visible=False)


def _summary(recorded: Recorded) -> str:
    stream = recorded.stream
    tokens = recorded.tokens or stream.completion_tokens
    parts = [f"wrote {recorded.path}: {recorded.steps} steps"]
    if tokens:
        parts.append(f"{tokens} tokens in {stream.total_s:.1f} s")
        if stream.first_token_s is not None and stream.total_s > stream.first_token_s:
            rate = (tokens - 1) / (stream.total_s - stream.first_token_s)
            parts.append(f"first after {stream.first_token_s:.1f} s, then {rate:.1f} tokens/s")
    else:
        parts.append(f"{stream.total_s:.1f} s")
    return ", ".join(parts)


def run_record(args: argparse.Namespace) -> int:
    """Run ``toolcall record``: 0 if every request was recorded, 1 if some failed, 2 for an
    unreachable server or a bad requests file (raised as :class:`CommandError`)."""
    requests = read_requests(Path(args.requests), default_parser=args.parser)
    options = options_from_args(args)
    recorder = Recorder(options)
    if not options.overwrite:
        existing = [p for p in map(recorder.case_path, requests) if p.exists()]
        if existing:
            msg = f"{existing[0]} exists (use --overwrite to replace it)"
            raise CommandError(msg, _EXIT_USAGE)
    recorder.check_reachable()
    failed = 0
    with _Bars(len(requests), enabled=not args.no_progress) as bars:
        for request in requests:
            bars.start(request, request.body.get("max_tokens", options.max_tokens))
            try:
                recorded = recorder.record(request, bars.chunk)
            except RequestFailed as error:
                failed += 1
                print(
                    f"error: request {request.slug!r} (line {request.line}): {error}",
                    file=sys.stderr,
                )
            else:
                print(_summary(recorded))
            bars.done()
    if failed:
        print(f"{failed} of {len(requests)} requests failed", file=sys.stderr)
        return _EXIT_FAILED
    return 0
