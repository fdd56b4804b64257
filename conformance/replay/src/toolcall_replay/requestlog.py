"""The replay engine's JSON-lines request log (``TOOLCALL_REPLAY_LOG``), written in the server and
read by tests. One object per line; ``event`` is ``request`` (with the prompt text, the sampling
parameters that matter to tool calling and the recording that answered), ``finish`` or ``abort``;
``pid`` is the API server process that wrote it (``--api-server-count N`` has N of them, each
appending whole lines)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class RequestLog:
    """Appends one JSON object per line; with no path it logs nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: Mapping[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps(
            {"time": time.time(), "pid": os.getpid(), **record}, ensure_ascii=False, default=repr
        )
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


def read_request_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
