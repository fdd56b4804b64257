"""``ReplayServer``: the literal ``vllm serve`` as a subprocess, answering from recordings.

    with ReplayServer(model_dir, tool_call_parser="hermes", recordings=[rec]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="unused")
        ...
        server.add(another_recording)      # picked up by the running server
        server.requests()                  # the engine-side request log

The server runs in its own process group and gets SIGTERM (then SIGKILL) on exit.
``VLLM_CACHE_ROOT`` is persistent (``~/.cache/toolcall/vllm-cache``) so that only the first start
on a machine pays for vLLM's model inspection.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from toolcall_replay.plugin import ENV_LOG, ENV_SCRIPT, ENV_TOKENS_PER_STEP
from toolcall_replay.requestlog import read_request_log
from toolcall_replay.script import Recording, ReplayScript

PLUGIN_NAME = "toolcall_replay"


class ServerError(RuntimeError):
    """The server did not come up (the message carries the end of its log)."""


def default_vllm_cache() -> Path:
    env = os.environ.get("TOOLCALL_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "toolcall"
    return root / "vllm-cache"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ReplayServer:
    """A ``vllm serve`` subprocess with the replay engine.

    ``plugins``: the ``vllm.general_plugins`` to load besides the replay (``VLLM_PLUGINS``); ``()``
    loads only the replay, so vLLM's built-in tool parsers serve; ``None`` loads every installed
    plugin. ``venv``: the vLLM environment (default: the running interpreter's).
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        tool_call_parser: str | None,
        recordings: Iterable[Recording] = (),
        served_model_name: str = "replay",
        extra_args: Sequence[str] = (),
        plugins: Sequence[str] | None = (),
        tokens_per_step: int | None = None,
        env: Mapping[str, str] | None = None,
        venv: Path | None = None,
        workdir: Path | None = None,
        vllm_cache: Path | None = None,
        startup_timeout: float = 900.0,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.tool_call_parser = tool_call_parser
        self.served_model_name = served_model_name
        self.extra_args = tuple(extra_args)
        self.plugins = None if plugins is None else tuple(plugins)
        self.tokens_per_step = tokens_per_step
        self.extra_env = dict(env or {})
        self.venv = Path(venv) if venv is not None else Path(sys.prefix)
        self.vllm_cache = vllm_cache if vllm_cache is not None else default_vllm_cache()
        self.startup_timeout = startup_timeout
        self.workdir = (
            Path(workdir)
            if workdir is not None
            else Path(tempfile.mkdtemp(prefix="toolcall-replay-"))
        )
        self.script_path = self.workdir / "replay-script.json"
        self.request_log_path = self.workdir / "requests.jsonl"
        self.log_path = self.workdir / "server.log"
        self._script = ReplayScript(tuple(recordings))
        self.port = 0
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    # -- addresses ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``.../v1``)."""
        return f"{self.url}/v1"

    # -- recordings and logs -----------------------------------------------------------------

    def add(self, *recordings: Recording) -> None:
        """Add (or replace, by name) recordings; a running server reloads the script."""
        self._script = self._script.with_recordings(*recordings)
        self._script.write(self.script_path)

    def requests(self) -> list[dict[str, Any]]:
        """The engine's request log: ``event`` is ``request``, ``finish`` or ``abort``."""
        return read_request_log(self.request_log_path)

    def engine_requests(self, recording: str | None = None) -> list[dict[str, Any]]:
        """The ``request`` events, optionally only those a given recording answered."""
        return [
            r
            for r in self.requests()
            if r["event"] == "request" and (recording is None or r.get("recording") == recording)
        ]

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    # -- life cycle --------------------------------------------------------------------------

    def command(self) -> list[str]:
        cmd = [str(self.venv / "bin" / "vllm"), "serve", str(self.model_dir)]
        cmd += ["--served-model-name", self.served_model_name]
        if self.tool_call_parser is not None:
            cmd += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_call_parser]
        cmd += list(self.extra_args)
        cmd += ["--host", "127.0.0.1", "--port", str(self.port)]
        return cmd

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "VLLM_TARGET_DEVICE": "cpu",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "VLLM_CACHE_ROOT": str(self.vllm_cache),
                "PYTHONUNBUFFERED": "1",
                ENV_SCRIPT: str(self.script_path),
                ENV_LOG: str(self.request_log_path),
            }
        )
        if self.tokens_per_step is not None:
            env[ENV_TOKENS_PER_STEP] = str(self.tokens_per_step)
        if self.plugins is not None:
            env["VLLM_PLUGINS"] = ",".join((PLUGIN_NAME, *self.plugins))
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        if self._proc is not None:
            raise ServerError("the server is already running")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.vllm_cache.mkdir(parents=True, exist_ok=True)
        self._script.write(self.script_path)
        self.request_log_path.unlink(missing_ok=True)
        self.port = free_port()
        self._log_file = self.log_path.open("wb")
        started = time.monotonic()
        self._proc = subprocess.Popen(
            self.command(),
            env=self.environment(),
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # own process group: stop() signals all of vLLM's processes
        )
        try:
            self._wait_healthy(started)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    def _wait_healthy(self, started: float) -> None:
        assert self._proc is not None
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ServerError(
                    f"vllm serve exited with {code} before it was healthy; "
                    f"command: {' '.join(self.command())}\n{self._log_tail()}"
                )
            if self._healthy():
                return
            if time.monotonic() - started > self.startup_timeout:
                raise ServerError(
                    f"vllm serve was not healthy after {self.startup_timeout:.0f} s\n"
                    + self._log_tail()
                )
            time.sleep(0.25)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def _log_tail(self, lines: int = 60) -> str:
        tail = self.log_text().splitlines()[-lines:]
        return f"--- last lines of {self.log_path} ---\n" + "\n".join(tail)

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM the process group, SIGKILL what is left after ``timeout``.

        Returns the server's exit code (``None`` if it was not running)."""
        proc, self._proc = self._proc, None
        code: int | None = None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                code = proc.wait()
            # children that outlived the leader
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        return code

    @property
    def pid(self) -> int | None:
        """The ``vllm serve`` process (the leader of its process group), while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> ReplayServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
