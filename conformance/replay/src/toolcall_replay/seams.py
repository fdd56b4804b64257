"""The vLLM 0.33 internals the replay engine replaces or reads, and a check that they are there.

The replay swaps one function of the API-server launcher (the one that builds the engine client)
for ``engine.build_replay_engine_client``: it builds vLLM's real ``AsyncLLM``, but with
``EngineCoreClient.make_async_mp_client`` answering a ``ReplayEngineCore`` for that one
constructor call. Everything between the HTTP client and the engine core stays vLLM's own code.
These are private parts of vLLM, so ``check_seams()`` runs before anything is patched and fails
with one message that names every part that moved.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from types import CodeType
from typing import Any

ENTRY_MODULE = "vllm.entrypoints.launchers.api_server.entry"
ENTRY_FUNCTION = "build_async_engine_client_from_engine_args"
#: ``vllm serve --api-server-count N`` (N > 1): the parent starts the engine cores with this
#: (imported into the module's namespace) before it starts the API server processes.
SERVE_MODULE = "vllm.entrypoints.cli.serve"
LAUNCH_FUNCTION = "launch_core_engines"
TARGET_VLLM = "0.33.0"


class SeamError(RuntimeError):
    """The vLLM internals the replay engine relies on are not where it expects them."""


@dataclass(frozen=True)
class Seam:
    """``module:attr`` must exist; ``uses`` are names its code must touch (functions) or members
    it must have (classes); ``params`` are parameters its signature must keep."""

    module: str
    attr: str
    why: str
    uses: tuple[str, ...] = ()
    params: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.module}:{self.attr}"


SEAMS: tuple[Seam, ...] = (
    Seam(
        ENTRY_MODULE,
        ENTRY_FUNCTION,
        "the function the replay replaces",
        params=("engine_args", "usage_context", "client_config"),
    ),
    Seam(
        ENTRY_MODULE,
        "build_async_engine_client",
        "must call the replaced function by its global name",
        uses=(ENTRY_FUNCTION,),
    ),
    Seam(
        SERVE_MODULE,
        "run_multi_api_server",
        "starts several API servers; must launch the engine cores by the replaced name",
        uses=(LAUNCH_FUNCTION, "APIServerProcessManager", "wait_for_completion_or_failure"),
    ),
    Seam(
        SERVE_MODULE,
        LAUNCH_FUNCTION,
        "replaced in the parent of several API servers: no engine core is started",
        params=("vllm_config", "executor_class", "log_stats", "addresses"),
    ),
    Seam(
        "vllm.v1.engine.utils",
        "CoreEngineLaunch",
        "what the replaced launch yields",
        uses=("engine_manager", "coordinator", "addresses", "tensor_queue"),
    ),
    Seam(
        "vllm.v1.engine.async_llm",
        "AsyncLLM.__init__",
        "the engine client the replay builds",
        uses=("EngineCoreClient", "make_async_mp_client", "output_processor", "renderer"),
        params=(
            "vllm_config",
            "executor_class",
            "log_stats",
            "usage_context",
            "log_requests",
            "aggregate_engine_logging",
            "client_addresses",
            "client_count",
            "client_index",
        ),
    ),
    Seam(
        "vllm.v1.engine.async_llm",
        "EngineCoreClient",
        "AsyncLLM must build its core through this class",
    ),
    Seam(
        "vllm.v1.engine.core_client",
        "EngineCoreClient.make_async_mp_client",
        "patched to answer the ReplayEngineCore",
    ),
    Seam(
        "vllm.v1.engine",
        "EngineCoreRequest",
        "what the replay core receives",
        uses=("request_id", "prompt_token_ids", "sampling_params", "external_req_id"),
    ),
    Seam(
        "vllm.v1.engine",
        "EngineCoreOutput",
        "what the replay core emits per request and step",
        uses=("request_id", "new_token_ids", "finish_reason", "stop_reason"),
    ),
    Seam(
        "vllm.v1.engine",
        "EngineCoreOutputs",
        "what get_output_async returns",
        uses=("outputs", "timestamp"),
    ),
    Seam("vllm.v1.engine", "FinishReason", "finish reasons", uses=("STOP", "LENGTH", "ERROR")),
    Seam(
        "vllm.v1.engine.output_processor",
        "OutputProcessor.__init__",
        "read for lockstep",
        uses=("request_states",),
    ),
    Seam(
        "vllm.v1.engine.output_processor",
        "RequestState.__init__",
        "read for lockstep",
        uses=("queue",),
    ),
    Seam(
        "vllm.v1.engine.output_processor",
        "RequestOutputCollector.__init__",
        "lockstep waits until the consumer has taken .output",
        uses=("output",),
    ),
    Seam(
        "vllm.sampling_params",
        "RequestOutputKind",
        "streamed requests are DELTA",
        uses=("DELTA", "FINAL_ONLY"),
    ),
    Seam(
        "vllm.sampling_params",
        "SamplingParams",
        "stop rules and request matching",
        uses=(
            "eos_token_id",
            "stop_token_ids",
            "max_tokens",
            "extra_args",
            "output_kind",
            "structured_outputs",
            "skip_special_tokens",
            "ignore_eos",
        ),
    ),
    Seam(
        "vllm.v1.core.sched.utils",
        "check_stop",
        "the stop rules stopping.py mirrors",
        uses=("eos_token_id", "stop_token_ids", "num_tokens", "num_output_tokens", "max_tokens"),
    ),
)


def _resolve(module: str, attr: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _code_names(obj: Any) -> set[str]:
    fn = inspect.unwrap(obj)
    code: CodeType | None = getattr(fn, "__code__", None)
    names: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, CodeType))
    return names


def _members(obj: Any) -> set[str]:
    if inspect.isclass(obj):
        names = set(dir(obj))
        names.update(getattr(obj, "__struct_fields__", ()))  # msgspec
        names.update(getattr(obj, "__dataclass_fields__", {}))
        return names
    return _code_names(obj)


def _problems(seam: Seam) -> Iterable[str]:
    try:
        obj = _resolve(seam.module, seam.attr)
    except ImportError as e:
        yield f"{seam.where}: cannot import {seam.module} ({e})"
        return
    except AttributeError:
        yield f"{seam.where}: missing"
        return
    missing = sorted(set(seam.uses) - _members(obj))
    if missing:
        yield f"{seam.where}: no longer has or uses {', '.join(missing)}"
    if seam.params:
        try:
            have = set(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            have = set()
        lost = sorted(set(seam.params) - have)
        if lost:
            yield f"{seam.where}: parameters {', '.join(lost)} are gone"


def check_seams(seams: Iterable[Seam] = SEAMS) -> None:
    """Raise ``SeamError`` naming every vLLM internal the replay needs that has moved."""
    problems = [p for seam in seams for p in _problems(seam)]
    if not problems:
        async_llm = importlib.import_module("vllm.v1.engine.async_llm")
        core_client = importlib.import_module("vllm.v1.engine.core_client")
        if async_llm.EngineCoreClient is not core_client.EngineCoreClient:
            problems.append(
                "vllm.v1.engine.async_llm:EngineCoreClient is not "
                "vllm.v1.engine.core_client:EngineCoreClient"
            )
    if problems:
        version = _vllm_version()
        lines = "\n".join(f"  - {p}" for p in problems)
        raise SeamError(
            f"toolcall-replay cannot run on vLLM {version}: vLLM internals it replaces or reads "
            f"have moved (it targets vllm=={TARGET_VLLM}):\n{lines}\n"
            f"Adapt toolcall_replay/seams.py and engine.py, or install vllm=={TARGET_VLLM}."
        )


def _vllm_version() -> str:
    try:
        return metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def install() -> bool:
    """Check the seams, then route vLLM's API servers to the replay engine. Idempotent.

    Every API server process builds its engine client with the replay (one
    ``ReplayEngineCore`` per process); the parent of several API servers starts no
    engine core. Returns ``True`` when this call installed it, ``False`` when it was
    installed already.
    """
    check_seams()
    # only now, with the seams checked: engine.py imports vLLM's engine modules at the top
    from toolcall_replay.engine import (  # noqa: PLC0415
        build_replay_engine_client,
        launch_no_core_engines,
    )

    installed = False
    for module, name, replacement in (
        (ENTRY_MODULE, ENTRY_FUNCTION, build_replay_engine_client),
        (SERVE_MODULE, LAUNCH_FUNCTION, launch_no_core_engines),
    ):
        target = importlib.import_module(module)
        current: Callable[..., Any] = getattr(target, name)
        if current is not replacement:
            setattr(target, name, replacement)
            installed = True
    return installed
