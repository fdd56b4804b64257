"""Replay scripts: the recordings a replay server answers with, as one JSON file.

A script is written by the test (``ReplayScript.write``, atomic) and read by the engine core in
the server process (``ScriptFile``, reloaded when the file changes), so a test can add recordings
to a running server. Nothing here imports vLLM.

File format::

    {"recordings": [
        {"name": "hermes-single-call",
         "prompt_contains": "[case:hermes-single-call]",
         "steps": [[151657], [198], [4913, 606], ...],
         "tokens_per_step": null}
    ]}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ScriptError(ValueError):
    """A replay script (or one recording in it) is not usable."""


def case_marker(case_id: str) -> str:
    """The marker a test puts in its user message to be answered by a case's recording."""
    return f"[case:{case_id}]"


@dataclass(frozen=True)
class Recording:
    """One recorded model output, as engine steps of token ids.

    ``steps`` holds one tuple of ids per recorded engine step; a step may hold several ids
    (speculative decoding, or a recorder that merged steps). ``tokens_per_step`` regroups the ids:
    ``None`` keeps the recorded steps, ``k`` emits ``k`` ids per engine step. The stop token that
    ended the recorded generation is not part of ``steps``: when a replay runs out without a stop,
    the engine emits the request's eos id, as the model would have.

    A request is answered by this recording when ``vllm_xargs={"replay": name}`` names it, or when
    its prompt text contains ``prompt_contains`` (a unique marker such as ``[case:<id>]`` in the
    user message; when several markers occur, the one that occurs last in the prompt wins).
    """

    name: str
    steps: tuple[tuple[int, ...], ...]
    prompt_contains: str | None = None
    tokens_per_step: int | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ScriptError("a recording needs a non-empty name")
        if self.prompt_contains == "":
            raise ScriptError(f"recording {self.name!r}: prompt_contains must not be empty")
        if self.tokens_per_step is not None and self.tokens_per_step < 1:
            raise ScriptError(
                f"recording {self.name!r}: tokens_per_step must be >= 1, not {self.tokens_per_step}"
            )
        for i, step in enumerate(self.steps):
            values: tuple[object, ...] = step  # from JSON: check what the types claim
            if not values:
                raise ScriptError(f"recording {self.name!r}: step {i} holds no token id")
            if any(not isinstance(t, int) or isinstance(t, bool) or t < 0 for t in values):
                raise ScriptError(f"recording {self.name!r}: step {i} holds a non-token {step!r}")

    @classmethod
    def from_token_ids(
        cls,
        name: str,
        token_ids: Iterable[int],
        *,
        prompt_contains: str | None = None,
        tokens_per_step: int | None = None,
    ) -> Recording:
        """A recording of one token per step."""
        return cls(name, tuple((t,) for t in token_ids), prompt_contains, tokens_per_step)

    @classmethod
    def from_steps(
        cls,
        name: str,
        steps: Iterable[Sequence[int]],
        *,
        prompt_contains: str | None = None,
        tokens_per_step: int | None = None,
    ) -> Recording:
        """A recording of the given engine steps (steps without ids are dropped)."""
        kept = tuple(tuple(s) for s in steps if len(s) > 0)
        return cls(name, kept, prompt_contains, tokens_per_step)

    @classmethod
    def from_case(
        cls,
        case: Any,
        *,
        name: str | None = None,
        prompt_contains: str | None = None,
        tokens_per_step: int | None = None,
    ) -> Recording:
        """The recorded steps of a conformance case (``toolcall_conformance.cases.Case``).

        Named after the case id, and matched by ``case_marker(case.id)`` unless told otherwise. A
        case that ends with ``finish_reason: length`` needs the request's ``max_tokens`` set to its
        number of ids; otherwise the replay ends it with eos, as the model would have.
        """
        steps = [step.token_ids for step in case.steps]
        if any(ids is None for ids in steps):
            raise ScriptError(f"case {case.id!r} has no token ids (a text-only case cannot replay)")
        return cls.from_steps(
            name or case.id,
            steps,
            prompt_contains=prompt_contains or case_marker(case.id),
            tokens_per_step=tokens_per_step,
        )

    @property
    def token_ids(self) -> tuple[int, ...]:
        return tuple(t for step in self.steps for t in step)

    def engine_steps(self, tokens_per_step: int | None = None) -> tuple[tuple[int, ...], ...]:
        """The steps to emit: regrouped by ``tokens_per_step`` (argument, else the recording's)."""
        k = tokens_per_step if tokens_per_step is not None else self.tokens_per_step
        if k is None:
            return self.steps
        if k < 1:
            raise ScriptError(f"tokens_per_step must be >= 1, not {k}")
        ids = self.token_ids
        return tuple(ids[i : i + k] for i in range(0, len(ids), k))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "prompt_contains": self.prompt_contains,
            "steps": [list(s) for s in self.steps],
            "tokens_per_step": self.tokens_per_step,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recording:
        if not isinstance(data, Mapping):
            raise ScriptError(f"a recording must be an object, not {type(data).__name__}")
        unknown = set(data) - {"name", "prompt_contains", "steps", "tokens_per_step"}
        if unknown:
            raise ScriptError(f"recording {data.get('name')!r}: unknown keys {sorted(unknown)}")
        steps = data.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, list) for s in steps):
            raise ScriptError(f"recording {data.get('name')!r}: steps must be a list of id lists")
        return cls(
            name=str(data.get("name") or ""),
            steps=tuple(tuple(s) for s in steps),
            prompt_contains=data.get("prompt_contains"),
            tokens_per_step=data.get("tokens_per_step"),
        )


@dataclass(frozen=True)
class Match:
    recording: Recording
    matched_by: str  # "xargs" or "prompt"


@dataclass(frozen=True)
class ReplayScript:
    recordings: tuple[Recording, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for rec in self.recordings:
            if rec.name in seen:
                raise ScriptError(f"two recordings are named {rec.name!r}")
            seen.add(rec.name)

    def with_recordings(self, *recordings: Recording) -> ReplayScript:
        """This script plus ``recordings``; a recording replaces an earlier one of the same name."""
        names = {r.name for r in recordings}
        kept = tuple(r for r in self.recordings if r.name not in names)
        return ReplayScript(kept + tuple(recordings))

    def get(self, name: str) -> Recording | None:
        return next((r for r in self.recordings if r.name == name), None)

    def match(self, prompt: str, name: str | None = None) -> Match | None:
        """The recording that answers a request: by name if one is given, else by the marker
        that occurs last in the prompt."""
        if name is not None:
            rec = self.get(name)
            return Match(rec, "xargs") if rec is not None else None
        best: tuple[int, Recording] | None = None
        for rec in self.recordings:
            if rec.prompt_contains is None:
                continue
            pos = prompt.rfind(rec.prompt_contains)
            if pos >= 0 and (best is None or pos > best[0]):
                best = (pos, rec)
        return Match(best[1], "prompt") if best is not None else None

    def to_json(self) -> dict[str, Any]:
        return {"recordings": [r.to_json() for r in self.recordings]}

    @classmethod
    def from_json(cls, data: Any) -> ReplayScript:
        if not isinstance(data, Mapping) or not isinstance(data.get("recordings"), list):
            raise ScriptError('a replay script is an object {"recordings": [...]}')
        return cls(tuple(Recording.from_json(r) for r in data["recordings"]))

    def write(self, path: Path) -> None:
        """Write atomically (a reader never sees half a file)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.to_json(), f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def read(cls, path: Path) -> ReplayScript:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ScriptError(f"replay script {path} does not exist") from None
        except json.JSONDecodeError as e:
            raise ScriptError(f"replay script {path} is not JSON: {e}") from None
        try:
            return cls.from_json(data)
        except ScriptError as e:
            raise ScriptError(f"replay script {path}: {e}") from None


class ScriptFile:
    """A script on disk, re-read when the file changes (checked on each ``current()`` call).

    A change that does not load keeps the previous script and is reported in ``error`` until a good
    version is written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp = self._stat()
        self._script = ReplayScript.read(path)  # at start-up a bad script is fatal
        self.error: str | None = None

    def _stat(self) -> tuple[int, int, int]:
        st = self.path.stat()
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def current(self) -> ReplayScript:
        try:
            stamp = self._stat()
        except OSError as e:
            self.error = f"replay script {self.path} cannot be read: {e}"
            return self._script
        if stamp != self._stamp:
            try:
                self._script = ReplayScript.read(self.path)
                self.error = None
            except ScriptError as e:
                self.error = str(e)
            self._stamp = stamp
        return self._script
