"""``ReplayEngineCore``: stands where vLLM's engine-core client stands and replays recorded ids.

``AsyncLLM`` talks to its engine core through a small surface (see ``seams.py``):
``add_request_async``, ``get_output_async``, ``abort_requests_async`` and a few more. This class
implements that surface and nothing else. Each call of ``get_output_async`` is one engine step: it
emits the next recorded step of every running request, cut where vLLM's scheduler would stop
(``stopping.take_step``).

Lockstep: for a streamed request (``RequestOutputKind.DELTA``) the next step is emitted only after
the consumer has taken the previous one from the request's ``RequestOutputCollector``; otherwise
the collector merges steps and the SSE chunking stops matching the recording.

This module imports vLLM's engine; ``seams.install()`` imports it only after ``check_seams()``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from vllm.sampling_params import RequestOutputKind
from vllm.usage.usage_lib import UsageContext
from vllm.v1.engine import EngineCoreOutput, EngineCoreOutputs, EngineCoreRequest, FinishReason
from vllm.v1.engine.async_llm import AsyncLLM
from vllm.v1.engine.core_client import EngineCoreClient
from vllm.v1.engine.utils import CoreEngineLaunch

from toolcall_replay.plugin import settings_from_env
from toolcall_replay.requestlog import RequestLog
from toolcall_replay.script import ScriptError, ScriptFile
from toolcall_replay.stopping import Finish, StopRules, take_step

# A child of vLLM's logger, so the lines reach the server log with vLLM's formatting.
logger = logging.getLogger("vllm.toolcall_replay")

XARG_RECORDING = "replay"
XARG_TOKENS_PER_STEP = "replay_tokens_per_step"
_POLL_SECONDS = 0.001

_FINISH = {Finish.STOP: FinishReason.STOP, Finish.LENGTH: FinishReason.LENGTH}


@dataclass
class _Replay:
    """The mutable progress of one engine request."""

    request_id: str
    recording: str
    steps: tuple[tuple[int, ...], ...]
    rules: StopRules
    streaming: bool
    matched_by: str
    tokens_per_step: int | None
    next_step: int = 0
    emitted: int = 0


@dataclass
class _Resources:
    engine_dead: bool = False


def sampling_summary(request: EngineCoreRequest) -> dict[str, Any]:
    """The parts of a request's sampling parameters that tool-call tests look at."""
    sp = request.sampling_params
    if sp is None:
        return {}
    so = sp.structured_outputs
    structured: dict[str, Any] | None = None
    if so is not None:
        structured = {
            f.name: getattr(so, f.name)
            for f in dataclasses.fields(so)
            if getattr(so, f.name) not in (None, False)
        }
    return {
        "n": sp.n,
        "max_tokens": sp.max_tokens,
        "min_tokens": sp.min_tokens,
        "eos_token_id": sp.eos_token_id,
        "stop_token_ids": sorted(sp.stop_token_ids or ()),
        "stop": list(sp.stop or ()),
        "ignore_eos": sp.ignore_eos,
        "skip_special_tokens": sp.skip_special_tokens,
        "include_stop_str_in_output": sp.include_stop_str_in_output,
        "output_kind": sp.output_kind.name,
        "structured_outputs": structured,
        "extra_args": sp.extra_args,
    }


class ReplayEngineCore:
    """The engine-core client of a replaying ``AsyncLLM`` (one per server process)."""

    def __init__(
        self,
        *,
        script: ScriptFile,
        max_model_len: int,
        request_log: RequestLog,
        tokens_per_step: int | None = None,
    ) -> None:
        self._script = script
        self._max_model_len = max_model_len
        self._log = request_log
        self._tokens_per_step = tokens_per_step
        self._active: dict[str, _Replay] = {}
        self._failed: list[str] = []
        self._wake = asyncio.Event()
        self._output_processor: Any = None
        self._tokenizer: Any = None
        self.engine_ranks_managed = [0]
        self.resources = _Resources()

    def attach(self, output_processor: Any, tokenizer: Any) -> None:
        """Give the core the ``AsyncLLM``'s output processor (for lockstep) and tokenizer."""
        self._output_processor = output_processor
        self._tokenizer = tokenizer

    def __getattr__(self, name: str) -> Any:
        # Reached only for members this class lacks: vLLM used more of the engine core than the
        # replay provides, which a test should hear about by name.
        raise AttributeError(
            f"ReplayEngineCore does not implement {name!r}: this vLLM uses a part of the "
            "engine-core client that toolcall-replay does not replace"
        )

    # -- the surface AsyncLLM uses ---------------------------------------------------------

    async def get_supported_tasks_async(self) -> tuple[str, ...]:
        return ("generate",)

    async def reset_mm_cache_async(self) -> None:
        return None

    async def add_request_async(self, request: EngineCoreRequest) -> None:
        rid = request.request_id
        prompt = self._prompt_text(request)
        record: dict[str, Any] = {
            "event": "request",
            "request_id": rid,
            "external_req_id": request.external_req_id,
            "prompt": prompt,
            "prompt_len": len(request.prompt_token_ids or ()),
            "sampling": sampling_summary(request),
        }
        try:
            replay = self._plan(request, prompt)
        except ScriptError as e:
            record.update(recording=None, error=str(e))
            self._log.write(record)
            logger.error("replay: request %s gets no recording: %s\nprompt: %r", rid, e, prompt)
            self._failed.append(rid)
        else:
            record.update(
                recording=replay.recording,
                matched_by=replay.matched_by,
                steps=len(replay.steps),
                tokens_per_step=replay.tokens_per_step,
            )
            self._log.write(record)
            self._active[rid] = replay
        self._wake.set()

    async def abort_requests_async(self, request_ids: Iterable[str]) -> None:
        for rid in request_ids:
            replay = self._active.pop(rid, None)
            if replay is not None:
                self._log.write(
                    {
                        "event": "abort",
                        "request_id": rid,
                        "emitted": replay.emitted,
                        "steps_done": replay.next_step,
                    }
                )

    async def get_output_async(self) -> EngineCoreOutputs:
        while True:
            outputs = [
                EngineCoreOutput(request_id=rid, new_token_ids=[], finish_reason=FinishReason.ERROR)
                for rid in self._failed
            ]
            self._failed.clear()
            for rid, replay in list(self._active.items()):
                state = self._output_processor.request_states.get(rid)
                if state is None:
                    # The front end dropped the request (finished or aborted) before telling us.
                    self._active.pop(rid)
                    continue
                queue = state.queue
                if replay.streaming and queue is not None and queue.output is not None:
                    continue  # lockstep: the consumer has not taken the previous step yet
                outputs.append(self._step(replay))
            if outputs:
                return EngineCoreOutputs(outputs=outputs, timestamp=time.monotonic())
            if self._active:
                await asyncio.sleep(_POLL_SECONDS)
            else:
                self._wake.clear()
                await self._wake.wait()

    def shutdown(self, timeout: float | None = None) -> None:  # noqa: ARG002 - vLLM's signature
        self.resources.engine_dead = True
        self._active.clear()

    # -- replay ----------------------------------------------------------------------------

    def _plan(self, request: EngineCoreRequest, prompt: str) -> _Replay:
        sp = request.sampling_params
        if sp is None:
            raise ScriptError("the replay engine serves generation requests only (no pooling)")
        xargs = sp.extra_args or {}
        name = xargs.get(XARG_RECORDING)
        if name is not None and not isinstance(name, str):
            raise ScriptError(
                f"vllm_xargs {XARG_RECORDING!r} must be a recording name, not {name!r}"
            )
        k = xargs.get(XARG_TOKENS_PER_STEP, self._tokens_per_step)
        if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
            raise ScriptError(f"vllm_xargs {XARG_TOKENS_PER_STEP!r} must be an int >= 1, not {k!r}")
        script = self._script.current()
        match = script.match(prompt, name)
        if match is None:
            wanted = (
                f"no recording named {name!r}" if name else "no recording's marker is in the prompt"
            )
            problem = (
                f" (the script file is broken: {self._script.error})" if self._script.error else ""
            )
            raise ScriptError(f"{wanted}{problem}")
        rules = StopRules.of(
            eos_token_id=sp.eos_token_id,
            stop_token_ids=sp.stop_token_ids,
            max_tokens=sp.max_tokens,
            prompt_len=len(request.prompt_token_ids or ()),
            max_model_len=self._max_model_len,
        )
        return _Replay(
            request_id=request.request_id,
            recording=match.recording.name,
            steps=match.recording.engine_steps(k),
            rules=rules,
            streaming=sp.output_kind == RequestOutputKind.DELTA,
            matched_by=match.matched_by,
            tokens_per_step=k if k is not None else match.recording.tokens_per_step,
        )

    def _step(self, replay: _Replay) -> EngineCoreOutput:
        if replay.next_step < len(replay.steps):
            step = replay.steps[replay.next_step]
            replay.next_step += 1
        elif replay.rules.eos_token_id is not None:
            step = (replay.rules.eos_token_id,)  # the recording ends: the model would emit eos
        else:
            # ignore_eos: a real model would go on to max_tokens; the recording cannot.
            logger.warning(
                "replay: recording %r ran out on request %s with ignore_eos set; "
                "finishing with length",
                replay.recording,
                replay.request_id,
            )
            return self._finish(replay, (), FinishReason.LENGTH, None)
        outcome = take_step(replay.rules, step, replay.emitted)
        replay.emitted += len(outcome.token_ids)
        if outcome.finish is None:
            return EngineCoreOutput(
                request_id=replay.request_id, new_token_ids=list(outcome.token_ids)
            )
        return self._finish(replay, outcome.token_ids, _FINISH[outcome.finish], outcome.stop_reason)

    def _finish(
        self,
        replay: _Replay,
        token_ids: tuple[int, ...],
        reason: FinishReason,
        stop_reason: int | None,
    ) -> EngineCoreOutput:
        self._active.pop(replay.request_id, None)
        self._log.write(
            {
                "event": "finish",
                "request_id": replay.request_id,
                "recording": replay.recording,
                "finish_reason": str(reason),
                "stop_reason": stop_reason,
                "emitted": replay.emitted,
                "steps_done": replay.next_step,
            }
        )
        return EngineCoreOutput(
            request_id=replay.request_id,
            new_token_ids=list(token_ids),
            finish_reason=reason,
            stop_reason=stop_reason,
        )

    def _prompt_text(self, request: EngineCoreRequest) -> str:
        ids = request.prompt_token_ids or []
        if self._tokenizer is not None:
            return str(self._tokenizer.decode(ids, skip_special_tokens=False))
        state = self._output_processor.request_states.get(request.request_id)
        return str(getattr(state, "prompt", None) or "")


@contextmanager
def launch_no_core_engines(
    vllm_config: Any, executor_class: Any, log_stats: bool, addresses: Any
) -> Iterator[CoreEngineLaunch]:
    """Stands in for vLLM's ``launch_core_engines`` in the parent process of ``vllm serve
    --api-server-count N``: each API server process replays by itself, so no engine core
    (and no data-parallel coordinator) is started, and the API servers start at once."""
    del vllm_config, executor_class, log_stats
    yield CoreEngineLaunch(
        engine_manager=None, coordinator=None, addresses=addresses, tensor_queue=None
    )


@asynccontextmanager
async def build_replay_engine_client(
    engine_args: Any,
    *,
    usage_context: UsageContext = UsageContext.OPENAI_API_SERVER,
    client_config: dict[str, Any] | None = None,
) -> AsyncIterator[AsyncLLM]:
    """Stands in for vLLM's ``build_async_engine_client_from_engine_args`` (same signature): the
    real ``AsyncLLM``, built from the real engine config, whose engine core is a
    ``ReplayEngineCore``."""
    settings = settings_from_env()
    if settings is None:
        raise RuntimeError("the replay engine is installed but TOOLCALL_REPLAY is not set")
    # With --api-server-count N every API server process gets here with its own
    # client_config, and replays by itself: the script and the request log are files.
    del client_config
    vllm_config = engine_args.create_engine_config(usage_context=usage_context)
    core = ReplayEngineCore(
        script=ScriptFile(settings.script),
        max_model_len=vllm_config.model_config.max_model_len,
        request_log=RequestLog(settings.request_log),
        tokens_per_step=settings.tokens_per_step,
    )

    def make_replay_client(*_args: Any, **_kwargs: Any) -> ReplayEngineCore:
        return core

    # No executor and no workers, so nothing touches a device: make_async_mp_client, the only
    # reader of executor_class, is ours.
    no_executor: Any = None
    with mock.patch.object(EngineCoreClient, "make_async_mp_client", make_replay_client):
        async_llm = AsyncLLM(
            vllm_config=vllm_config,
            executor_class=no_executor,
            log_stats=not engine_args.disable_log_stats,
            usage_context=usage_context,
            log_requests=engine_args.enable_log_requests,
            aggregate_engine_logging=engine_args.aggregate_engine_logging,
        )
    try:
        core.attach(async_llm.output_processor, async_llm.renderer.tokenizer)
        await async_llm.reset_mm_cache()
        yield async_llm
    finally:
        async_llm.shutdown(timeout=vllm_config.shutdown_timeout)
