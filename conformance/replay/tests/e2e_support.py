"""Support for the end-to-end tests (``test_e2e_*.py``).

* **Servers.** :data:`SERVERS` describes every ``vllm serve`` the tests share; :class:`Fleet`
  starts the ones a run needs, several at a time, each once per session.
* **Requests.** :class:`Ask` is one request in API-neutral terms; :class:`Endpoint` sends it
  through Chat Completions, the Responses API or the Anthropic Messages endpoint, streaming or
  not, with the real ``openai`` and ``anthropic`` clients, and normalises what came back into an
  :class:`Answer` (content, calls, finish, reasoning, the HTTP error).
* **Expectations.** :func:`expect` derives what a client must receive for a conformance case
  from the case's ``expected`` parse and vLLM 0.33's own rules for each API (never from our
  parser's output): ``tool_choice: "none"`` keeps no calls, ``parallel_tool_calls: false``
  keeps the first, Chat's ``finish_reason`` is ``tool_calls`` iff calls were made, the engine
  stopped and no function was named, ``length`` stays ``length``; the Responses status is
  ``incomplete`` on a cut; Anthropic's ``stop_reason`` is ``max_tokens`` on a cut, else
  ``tool_use`` with calls, else ``end_turn``, and a non-streaming Messages request whose call
  arguments are not JSON fails with HTTP 400 (vLLM ``json.loads`` them into ``input``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolcall import Parsed, ToolCall
from toolcall_conformance.cases import Case, ExpectedCall, load_cases, shipped_case_dirs
from toolcall_conformance.compare import first_difference
from toolcall_replay.model_dir import build_model_dir
from toolcall_replay.script import Recording, case_marker
from toolcall_replay.server import ReplayServer

#: The six ways a case is asked.
APIS = (
    "chat",
    "chat-stream",
    "responses",
    "responses-stream",
    "messages",
    "messages-stream",
)

#: The reasoning the think recordings open with (tokenized with the model's real tokenizer).
REASONING = "The user wants something done; pick the right tool and its arguments."

#: A line of vLLM 0.33's default log format (``_FORMAT``, vllm/logger.py:27-31):
#: ``(PROCESS pid=N) LEVEL mm-dd hh:mm:ss [FILE:LINE] MESSAGE``. The servers run with
#: vLLM's default logging, as a user's ``vllm serve`` does.
VLLM_LOG_LINE = re.compile(
    r"^\((?P<process>[^()]*) pid=(?P<pid>\d+)\) "
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d "
    r"\[(?P<where>[^\]]*)\] (?P<message>.*)$"
)

#: The plugin distribution that raises at import (served next to glm47, see SERVERS).
BROKEN_DISTRIBUTION = "toolcall-broken-e2e"
BROKEN_PARSER = "broken_e2e"
BROKEN_MESSAGE = "toolcall-broken-e2e fails at import on purpose"


# -- the corpus ----------------------------------------------------------------------------


def corpus(parser: str, tokenizer: str) -> list[Case]:
    """The shipped cases of ``parser`` recorded with ``tokenizer``, by id."""
    cases, errors = load_cases(shipped_case_dirs(parser))
    if errors:
        raise AssertionError(f"the shipped {parser} corpus does not load: {errors[0]}")
    return sorted((c for c in cases if c.tokenizer == tokenizer), key=lambda c: c.id)


def think_prefix(family: str) -> str:
    """The reasoning block a think recording starts with, in the family's shape."""
    if family == "mistral-tekken-v11":  # Magistral: the [THINK] and [/THINK] control tokens
        return f"[THINK]{REASONING}[/THINK]"
    if family == "glm4.5":  # GLM-4.5: <think>…</think> then the answer
        return f"<think>\n{REASONING}\n</think>\n"
    return f"<think>\n{REASONING}\n</think>\n\n"  # Qwen3


def think_marker(case: Case) -> str:
    return f"[think:{case.id}]"


def think_recording(case: Case, tokenizer: Any, family: str) -> Recording:
    """``case``'s recorded steps after a reasoning block (one token per step), named
    ``think:<id>`` and answered to :func:`think_marker`."""
    prefix = tokenizer.encode(think_prefix(family))
    steps = [(t,) for t in prefix] + [tuple(s.token_ids or ()) for s in case.steps]
    return Recording.from_steps(f"think:{case.id}", steps, prompt_contains=think_marker(case))


def think_length(tokenizer: Any, family: str) -> int:
    """The number of ids the reasoning block adds in front of a case."""
    return len(tokenizer.encode(think_prefix(family)))


#: The APIs every case is asked through: our parser's two paths (one-shot and streamed).
PARSER_APIS = APIS[:2]


def shaping(case: Case) -> tuple[object, ...]:
    """What vLLM's rules for each API (:func:`expect`) depend on in a case: the tool
    choice, ``parallel_tool_calls: false``, a cut, how many calls (none, one, several),
    whether there is content or reasoning, and whether every call's arguments are JSON."""
    choice = case.request.get("tool_choice", "auto")
    calls = case.expected.tool_calls
    return (
        choice if isinstance(choice, str) else "named",
        case.request.get("parallel_tool_calls") is False,
        case.finish_reason == "length",
        min(len(calls), 2),
        bool((case.expected.content or "").strip()),
        case.expected.reasoning is not None,
        all(_not_json(call.arguments) is None for call in calls),
    )


def case_params(parser: str, tokenizer: str, *, sample: bool = True) -> list[Any]:
    """One test per (case, API) of the shipped corpus of ``parser`` with ``tokenizer``.

    Every case is asked through Chat Completions, streamed and not (:data:`PARSER_APIS`:
    the parser's one-shot and streaming paths, which differ per case). The Responses and
    Messages APIs shape the same parser output by vLLM's rules, which depend only on
    :func:`shaping`: with ``sample``, the first case (by id) of each shaping is asked
    through them, the rest would repeat its check; without, every case is."""
    import pytest

    cases = corpus(parser, tokenizer)
    first: dict[tuple[object, ...], str] = {}
    for case in cases:
        first.setdefault(shaping(case), case.id)
    shown = set(first.values())
    return [
        pytest.param(case, api, id=f"{case.id}-{api}")
        for case in cases
        for api in APIS
        if api in PARSER_APIS or not sample or case.id in shown
    ]


# -- servers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    """One ``vllm serve`` the tests share."""

    name: str
    family: str  # model directory (toolcall_replay.build_model_dir)
    parser: str  # --tool-call-parser
    plugins: tuple[str, ...] = ("toolcall",)  # vllm.general_plugins besides the replay
    extra_args: tuple[str, ...] = ()
    corpus: tuple[str, str] | None = None  # (parser, tokenizer) of the recorded cases
    think: bool = False  # the corpus with a reasoning block in front (think recordings)
    broken_plugin: bool = False  # a toolcall plugin that raises at import is installed too
    strict_level: str | None = None  # --tool-strict-level, if given
    select: Callable[[Case], bool] | None = None  # which corpus cases are recorded
    #: Keys put into the model directory's tokenizer_config.json (a chat template, say).
    tokenizer_config: tuple[tuple[str, str], ...] = ()

    def args(self) -> tuple[str, ...]:
        level = ("--tool-strict-level", self.strict_level) if self.strict_level else ()
        return (*self.extra_args, *level)


#: The names of toolcall-deepseek, and the prompt end their served cases assume (V3.1's
#: non-thinking mode, which the weightless model directory's template renders).
DEEPSEEK = ("deepseek_v3", "deepseek_v31")
DEEPSEEK_PROMPT = "<｜Assistant｜></think>"  # noqa: RUF001 (DeepSeek's own markup)


def deepseek_served(case: Case) -> bool:
    # Reasoning is left out: a name made of data is served as an ordinary tool parser,
    # whose interface carries reasoning only when streaming (hf plugin README).
    return case.prompt in (None, DEEPSEEK_PROMPT) and case.expected.reasoning is None


#: family -> the hf engine's shipped template of the format its chat template renders (the
#: hf cases written under that template; other templates on the same tokenizer say other
#: formats, which the family's chat template does not).
AUTO_FAMILIES = {"qwen2.5": "hermes", "glm4.5": "glm"}


def shipped_template(name: str) -> dict[str, Any]:
    """The hf engine's shipped response template ``name``."""
    from importlib import resources

    resource = resources.files("toolcall_hf_response_template.templates") / f"{name}.json"
    data: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return data


def derivable(case: Case) -> bool:
    """An hf case `auto` must read on its family's chat template: written under the shipped
    template of the format that chat template renders, with no prefilled prompt and no
    reasoning."""
    template = shipped_template(AUTO_FAMILIES[case.tokenizer])
    return (
        case.prompt is None
        and case.expected.reasoning is None
        and case.response_template == template
    )


#: A chat template that renders no tools and no calls: nothing to derive a format from.
NO_TOOLS_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


SERVERS: dict[str, ServerSpec] = {
    spec.name: spec
    for spec in (
        ServerSpec("hermes", "qwen2.5", "hermes", corpus=("hermes", "qwen2.5")),
        # Hermes 3 (Llama 3.1): the hermes cases recorded with the Llama 3.1 tokenizer.
        ServerSpec("hermes-llama", "llama3.1", "hermes", corpus=("hermes", "llama3.1")),
        ServerSpec("glm45", "glm4.5", "glm45", corpus=("glm45", "glm4.5")),
        ServerSpec("llama3-json", "llama3.1", "llama3_json", corpus=("llama3_json", "llama3.1")),
        ServerSpec("qwen3-coder", "qwen3", "qwen3_coder", corpus=("qwen3_coder", "qwen3")),
        ServerSpec("llama4-json", "llama4", "llama4_json", corpus=("llama4_json", "llama4")),
        ServerSpec(
            "llama4-pythonic", "llama4", "llama4_pythonic", corpus=("llama4_pythonic", "llama4")
        ),
        # Also proves that a broken plugin distribution stops nothing else.
        ServerSpec("glm47", "glm4.5", "glm47", corpus=("glm47", "glm4.5"), broken_plugin=True),
        ServerSpec(
            "hermes-qwen3",
            "qwen2.5",
            "hermes",
            extra_args=("--reasoning-parser", "qwen3"),
            corpus=("hermes", "qwen2.5"),
            think=True,
            strict_level="function",
        ),
        ServerSpec(
            "glm45-reasoning",
            "glm4.5",
            "glm45",
            extra_args=("--reasoning-parser", "glm45"),
            corpus=("glm45", "glm4.5"),
            think=True,
            strict_level="parameter",
        ),
        # Two API server processes (vLLM's multi-process front end), each with its replay.
        ServerSpec(
            "hermes-2api",
            "qwen2.5",
            "hermes",
            extra_args=("--api-server-count", "2"),
            corpus=("hermes", "qwen2.5"),
        ),
        # Mistral's own tokenizer (mistral-common renders the prompt), v11 tekken.
        ServerSpec(
            "mistral",
            "mistral-tekken-v11",
            "mistral",
            extra_args=("--tokenizer-mode", "mistral"),
            corpus=("mistral", "mistral-tekken-v11"),
        ),
        # Magistral: [THINK]...[/THINK] taken off by vLLM's mistral reasoning parser.
        ServerSpec(
            "mistral-reasoning",
            "mistral-tekken-v11",
            "mistral",
            extra_args=("--tokenizer-mode", "mistral", "--reasoning-parser", "mistral"),
            corpus=("mistral", "mistral-tekken-v11"),
            think=True,
        ),
        # Names made of data (a template on the hf engine), and `auto`.
        *(
            ServerSpec(
                name.replace("_", "-"),
                "deepseek-v3",
                name,
                corpus=(name, "deepseek-v3"),
                select=deepseek_served,
            )
            for name in DEEPSEEK
        ),
        *(ServerSpec(f"xlam-{t}", t, "xlam", corpus=("xlam", t)) for t in ("llama3.1", "qwen2.5")),
        *(
            ServerSpec(f"auto-{family}", family, "auto", corpus=("hf", family), select=derivable)
            for family in AUTO_FAMILIES
        ),
        ServerSpec(
            "auto-underived",
            "qwen2.5",
            "auto",
            corpus=("hf", "qwen2.5"),
            select=derivable,
            tokenizer_config=(("chat_template", NO_TOOLS_TEMPLATE),),
        ),
        # vLLM's built-in hermes (VLLM_PLUGINS names only the replay, not toolcall).
        ServerSpec("builtin-hermes", "qwen2.5", "hermes", plugins=(), corpus=("hermes", "qwen2.5")),
        # vLLM's built-in glm45 (test_replay_smoke.py adds its own recording).
        ServerSpec("builtin-glm45", "glm4.5", "glm45", plugins=()),
    )
}

#: The fixture that serves each server of the fleet (conftest.py), for working out which ones
#: a run needs; a fixture with parameters serves several. The servers of names made of data
#: and of ``auto`` run one at a time, each for its module (conftest.py ``_alone``).
SERVER_FIXTURES: dict[str, str | tuple[str, ...]] = {
    "e2e_hermes": "hermes",
    "e2e_hermes_llama": "hermes-llama",
    "e2e_glm45": "glm45",
    "e2e_llama3_json": "llama3-json",
    "e2e_qwen3_coder": "qwen3-coder",
    "e2e_llama4_json": "llama4-json",
    "e2e_llama4_pythonic": "llama4-pythonic",
    "e2e_glm47": "glm47",
    "e2e_hermes_qwen3": "hermes-qwen3",
    "e2e_glm45_reasoning": "glm45-reasoning",
    "e2e_hermes_2api": "hermes-2api",
    "e2e_mistral": "mistral",
    "e2e_mistral_reasoning": "mistral-reasoning",
    "hermes_server": "builtin-hermes",
    "glm_server": "builtin-glm45",
}


def served_cases(name: str) -> list[Case]:
    """The cases server ``name`` has recorded (its corpus, as its spec selects them)."""
    spec = SERVERS[name]
    assert spec.corpus is not None, name
    cases = corpus(*spec.corpus)
    return [case for case in cases if spec.select is None or spec.select(case)]


def write_broken_plugin(site: Path) -> Path:
    """A directory for ``PYTHONPATH`` holding a toolcall plugin distribution (real
    ``dist-info`` metadata, entry point group ``toolcall``) whose module raises at import."""
    site.mkdir(parents=True, exist_ok=True)
    module = BROKEN_DISTRIBUTION.replace("-", "_")
    (site / f"{module}.py").write_text(f"raise RuntimeError({BROKEN_MESSAGE!r})\n", "utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {BROKEN_DISTRIBUTION}\nVersion: 1.0\n", "utf-8"
    )
    (info / "entry_points.txt").write_text(f"[toolcall]\n{BROKEN_PARSER} = {module}\n", "utf-8")
    return site


class Fleet:
    """The shared servers: started on first use, ``parallel`` at a time, stopped at the end.

    Starting them together is what keeps the session short: a start is mostly imports and
    vLLM's set-up in one Python process, so two starts on two cores take little longer
    than one.
    """

    def __init__(self, needed: Sequence[str], workdir: Path, *, parallel: int = 4) -> None:
        self.needed = [name for name in SERVERS if name in needed]
        self.workdir = workdir
        self.parallel = parallel
        self._servers: dict[str, ReplayServer] = {}
        self._futures: dict[str, Future[ReplayServer]] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def server(self, name: str) -> ReplayServer:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.parallel)
                for wanted in [*self.needed, *([name] if name not in self.needed else [])]:
                    self._submit(wanted)
            elif name not in self._futures:
                self._submit(name)
            future = self._futures[name]
        return future.result()

    def _submit(self, name: str) -> None:
        # Built here, in the calling thread (tokenizers, model directories, recordings:
        # transformers' lazy imports are not thread-safe); only the starts run in the pool.
        assert self._pool is not None
        server = build_server(SERVERS[name], self.workdir / name)
        self._servers[name] = server
        self._futures[name] = self._pool.submit(_started, server)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for server in self._servers.values():
            server.stop()


def _started(server: ReplayServer) -> ReplayServer:
    server.start()
    return server


def build_server(spec: ServerSpec, workdir: Path) -> ReplayServer:
    """The (not yet started) server for ``spec``, with its corpus recorded."""
    from toolcall_conformance.tokenizers import get_tokenizer

    workdir.mkdir(parents=True, exist_ok=True)
    recordings: list[Recording] = []
    if spec.corpus is not None:
        tokenizer_name = spec.corpus[1]
        cases = served_cases(spec.name)
        if spec.think:
            tokenizer = get_tokenizer(tokenizer_name)
            recordings = [think_recording(c, tokenizer, spec.family) for c in cases]
        else:
            recordings = [Recording.from_case(c) for c in cases]
    env: dict[str, str] = {}
    if spec.plugins:
        env["TOOLCALL_CHECK_CONTRACT"] = "1"  # the bridge checks the delta contract live
    if spec.broken_plugin:
        site = write_broken_plugin(workdir / "broken-site")
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p
        )
    model_dir = (
        build_model_dir(spec.family, tokenizer_config=dict(spec.tokenizer_config))
        if spec.tokenizer_config
        else build_model_dir(spec.family)
    )
    return ReplayServer(
        model_dir,
        tool_call_parser=spec.parser,
        recordings=recordings,
        extra_args=spec.args(),
        plugins=spec.plugins,
        env=env,
        workdir=workdir,
    )


@dataclass(frozen=True)
class LogLine:
    """A line of the server log in vLLM's format."""

    process: str  # vLLM's process name: APIServer, ApiServer_0, EngineCore, ...
    pid: int
    level: str
    where: str  # FILE:LINE
    message: str

    @classmethod
    def parse(cls, line: str) -> LogLine | None:
        found = VLLM_LOG_LINE.match(line)
        if found is None:
            return None
        return cls(
            found["process"], int(found["pid"]), found["level"], found["where"], found["message"]
        )

    @property
    def ours(self) -> bool:
        """Logged by toolcall (every message of the ``toolcall`` logger starts so)."""
        return self.message.startswith("toolcall")


def log_lines(text: str) -> list[LogLine]:
    return [parsed for line in text.splitlines() if (parsed := LogLine.parse(line)) is not None]


def served_lines() -> dict[str, str]:
    """Our bridge's start-up line for every parser name, from the registry of this (the
    server's) environment: which distribution serves the name, and whether it replaces
    vLLM's built-in of that name."""
    from toolcall.registry import Registry
    from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS

    lines = {}
    for entry in Registry.load().entries():
        cls = entry.parser_class
        replaces = "replaces vLLM's built-in" if entry.name in VLLM_BUILTIN_TOOL_PARSERS else "new"
        lines[entry.name] = (
            f"toolcall: {entry.name} → {entry.distribution} {entry.version} "
            f"({cls.__module__}.{cls.__qualname__}; {replaces})"
        )
    return lines


class LogWatch:
    """Lines toolcall logged at WARNING or above since the last :meth:`take`."""

    def __init__(self, server: ReplayServer) -> None:
        self.server = server
        self._offset = self._size()

    def _size(self) -> int:
        try:
            return self.server.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def take(self) -> list[str]:
        try:
            with self.server.log_path.open("rb") as log:
                log.seek(self._offset)
                new = log.read()
        except FileNotFoundError:
            return []
        complete = new[: new.rfind(b"\n") + 1]  # a line still being written waits
        self._offset += len(complete)
        return [
            f"{line.level} {line.message}"
            for line in log_lines(complete.decode("utf-8", "replace"))
            if line.ours and line.level not in ("DEBUG", "INFO")
        ]

    def toolcall_lines(self) -> list[LogLine]:
        return [line for line in log_lines(self.server.log_text()) if line.ours]


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    """One request in API-neutral terms (tools in Chat Completions' shape)."""

    marker: str
    tools: tuple[Mapping[str, Any], ...] = ()
    tool_choice: Any = None  # None: not sent
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    n: int | None = None
    extra_body: Mapping[str, Any] | None = None

    @property
    def named(self) -> str | None:
        choice = self.tool_choice
        return choice["function"]["name"] if isinstance(choice, Mapping) else None

    def chat_body(self, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": f"Please help. {self.marker}"}],
        }
        if self.tools:
            body["tools"] = [dict(t) for t in self.tools]
        if self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        if self.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = self.parallel_tool_calls
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.n is not None:
            body["n"] = self.n
        if self.extra_body:
            body["extra_body"] = dict(self.extra_body)
        return body

    def responses_body(self, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "input": f"Please help. {self.marker}"}
        if self.tools:
            body["tools"] = [{"type": "function", **t["function"]} for t in self.tools]
        if isinstance(self.tool_choice, Mapping):
            body["tool_choice"] = {"type": "function", "name": self.named}
        elif self.tool_choice is not None:
            body["tool_choice"] = self.tool_choice
        if self.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = self.parallel_tool_calls
        if self.max_tokens is not None:
            body["max_output_tokens"] = self.max_tokens
        return body

    def messages_body(self, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": self.max_tokens if self.max_tokens is not None else 2048,
            "messages": [{"role": "user", "content": f"Please help. {self.marker}"}],
        }
        if self.tools:
            body["tools"] = [_anthropic_tool(t) for t in self.tools]
        choice: dict[str, Any] | None = None
        if isinstance(self.tool_choice, Mapping):
            choice = {"type": "tool", "name": self.named}
        elif self.tool_choice in ("auto", "none"):
            choice = {"type": self.tool_choice}
        elif self.tool_choice == "required":
            choice = {"type": "any"}
        if self.parallel_tool_calls is False:
            choice = {**(choice or {"type": "auto"}), "disable_parallel_tool_use": True}
        if choice is not None:
            body["tool_choice"] = choice
        return body


def _anthropic_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool["function"]
    out: dict[str, Any] = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        out["description"] = function["description"]
    if "strict" in function:
        out["strict"] = function["strict"]
    return out


def ask_for(case: Case, *, marker: str | None = None, extra_ids: int = 0) -> Ask:
    """The request of ``case`` (its tools, tool_choice and parallel_tool_calls); a case that
    ended with ``length`` gets ``max_tokens`` = its number of ids (+ ``extra_ids``)."""
    request = case.request
    max_tokens = None
    if case.finish_reason == "length":
        max_tokens = len(case.token_ids or ()) + extra_ids
    return Ask(
        marker=marker or case_marker(case.id),
        tools=tuple(request.get("tools") or ()),
        tool_choice=request.get("tool_choice"),
        parallel_tool_calls=request.get("parallel_tool_calls"),
        max_tokens=max_tokens,
    )


@dataclass(frozen=True)
class Answer:
    """What one choice of one response came to, as a client sees it."""

    content: str | None = None
    calls: tuple[ToolCall, ...] = ()
    finish: str | None = None  # Chat finish_reason, Responses status, Anthropic stop_reason
    reasoning: str | None = None
    error: tuple[int, str] | None = None  # HTTP status and error message
    problems: tuple[str, ...] = ()  # stream-shape problems seen on the wire

    def parsed(self) -> Parsed:
        return Parsed(content=self.content, tool_calls=self.calls)


class Endpoint:
    """The clients of one running server (closed by :meth:`close`)."""

    def __init__(self, server: ReplayServer, spec: ServerSpec) -> None:
        import anthropic
        import openai

        self.server = server
        self.spec = spec
        self.model = server.served_model_name
        self.openai = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
        self.anthropic = anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0)
        self.log = LogWatch(server)

    def close(self) -> None:
        self.openai.close()
        self.anthropic.close()

    def send(self, api: str, ask: Ask) -> Answer:
        """Ask through ``api`` (one of :data:`APIS`)."""
        import anthropic
        import openai

        try:
            if api == "chat":
                return chat_answers(
                    self.openai.chat.completions.create(**ask.chat_body(self.model))
                )[0]
            if api == "chat-stream":
                stream = self.openai.chat.completions.create(
                    **ask.chat_body(self.model), stream=True
                )
                with stream:
                    return chat_stream_answers(stream)[0]
            if api == "responses":
                return responses_answer(
                    self.openai.responses.create(**ask.responses_body(self.model))
                )
            if api == "responses-stream":
                stream = self.openai.responses.create(**ask.responses_body(self.model), stream=True)
                with stream:
                    return responses_stream_answer(stream)
            if api == "messages":
                return messages_answer(
                    self.anthropic.messages.create(**ask.messages_body(self.model))
                )
            if api == "messages-stream":
                stream = self.anthropic.messages.create(
                    **ask.messages_body(self.model), stream=True
                )
                with stream:
                    return messages_stream_answer(stream)
        except (openai.APIStatusError, anthropic.APIStatusError) as error:
            return Answer(error=(error.status_code, _error_message(error.body)))
        raise ValueError(f"unknown API {api!r}")


def _error_message(body: object) -> str:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and "message" in inner:
            return str(inner["message"])
        if "message" in body:
            return str(body["message"])
    return str(body)


def _join(parts: Sequence[str]) -> str | None:
    text = "".join(parts)
    return text or None


def chat_answers(response: Any) -> list[Answer]:
    answers = []
    for choice in sorted(response.choices, key=lambda c: c.index):
        message = choice.message
        calls = tuple(
            ToolCall(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls or ()
        )
        answers.append(
            Answer(
                content=message.content,
                calls=calls,
                finish=choice.finish_reason,
                reasoning=getattr(message, "reasoning", None),
            )
        )
    return answers


@dataclass
class _CallParts:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """One streamed choice or message, put together the way a client must."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[Any, _CallParts] = field(default_factory=dict)
    order: list[Any] = field(default_factory=list)
    finish: str | None = None
    problems: list[str] = field(default_factory=list)

    def head(self, key: Any, call_id: str | None, name: str | None, where: str) -> None:
        if key in self.calls:
            self.problems.append(f"{where}: a second head for call {key!r}")
            return
        if not call_id or not name:
            self.problems.append(f"{where}: the first delta of call {key!r} lacks its id or name")
        self.calls[key] = _CallParts(call_id or "", name or "")
        self.order.append(key)

    def arguments(self, key: Any, text: str | None, where: str) -> None:
        if key not in self.calls:
            self.problems.append(f"{where}: arguments for call {key!r} before its head")
            return
        if text:
            self.calls[key].arguments.append(text)

    def answer(self, *, error: tuple[int, str] | None = None) -> Answer:
        calls = tuple(
            ToolCall(self.calls[k].id, self.calls[k].name, "".join(self.calls[k].arguments))
            for k in self.order
        )
        return Answer(
            content=_join(self.content),
            calls=calls,
            finish=self.finish,
            reasoning=_join(self.reasoning),
            error=error,
            problems=tuple(self.problems),
        )


def chat_stream_answers(chunks: Any) -> list[Answer]:
    """Assemble a Chat Completions stream per choice, checking each call's first delta and
    that no chunk carries two entries for one call index (DESIGN §4.2).

    One exception, exactly where vLLM 0.33 makes it: the chunk that carries the
    ``finish_reason``. There vLLM appends what the parser's ``finish_streaming()`` flushes
    to the last step's message (``DelegatingParser._flush_engine_parsers``,
    vllm/parser/abstract_parser.py:994-996,1046-1050), so a call whose last fragment came
    with that step and whose end came from the flush (GLM's ``}`` after a closed value at
    the end of the output) has two argument entries there. core/README.md says why the
    adapter cannot prevent it.
    """
    choices: dict[int, _Assembly] = {}
    for number, chunk in enumerate(chunks):
        for choice in chunk.choices:
            state = choices.setdefault(choice.index, _Assembly())
            delta = choice.delta
            where = f"chunk {number}"
            if delta.content:
                state.content.append(delta.content)
            reasoning = getattr(delta, "reasoning", None)
            if reasoning:
                state.reasoning.append(reasoning)
            indexes = [entry.index for entry in delta.tool_calls or ()]
            for index in sorted({i for i in indexes if indexes.count(i) > 1}):
                entries = [e for e in delta.tool_calls if e.index == index]
                merged = choice.finish_reason is not None and not any(
                    e.id or (e.function is not None and e.function.name) for e in entries[1:]
                )
                if not merged:
                    state.problems.append(f"{where}: {len(entries)} entries for call {index}")
            for entry in delta.tool_calls or ():
                function = entry.function
                name = function.name if function is not None else None
                if entry.index not in state.calls:
                    if entry.type != "function":
                        state.problems.append(
                            f"{where}: call {entry.index} has type {entry.type!r}"
                        )
                    if entry.index != len(state.order):
                        state.problems.append(f"{where}: call index {entry.index} out of order")
                    state.head(entry.index, entry.id, name, where)
                elif entry.id or name:
                    state.problems.append(f"{where}: call {entry.index} got a second id or name")
                state.arguments(entry.index, function.arguments if function else None, where)
            if choice.finish_reason is not None:
                if state.finish is not None:
                    state.problems.append(f"{where}: a second finish_reason")
                state.finish = choice.finish_reason
    return [choices[i].answer() for i in sorted(choices)]


def responses_answer(response: Any) -> Answer:
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for item in response.output:
        if item.type == "message":
            content += [part.text for part in item.content if part.type == "output_text"]
        elif item.type == "function_call":
            calls.append(ToolCall(item.call_id, item.name, item.arguments))
        elif item.type == "reasoning":
            reasoning += [part.text for part in item.content or () if part.type == "reasoning_text"]
    return Answer(
        content=_join(content),
        calls=tuple(calls),
        finish=response.status,
        reasoning=_join(reasoning),
    )


def responses_stream_answer(events: Any) -> Answer:
    state = _Assembly()
    for number, event in enumerate(events):
        where = f"event {number} ({event.type})"
        if event.type == "response.output_text.delta":
            state.content.append(event.delta)
        elif event.type == "response.reasoning_text.delta":
            state.reasoning.append(event.delta)
        elif event.type == "response.output_item.added" and event.item.type == "function_call":
            state.head(event.item.id, event.item.call_id, event.item.name, where)
        elif event.type == "response.function_call_arguments.delta":
            state.arguments(event.item_id, event.delta, where)
        elif event.type in ("response.completed", "response.incomplete", "response.failed"):
            state.finish = event.response.status
    return state.answer()


def messages_answer(message: Any) -> Answer:
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if block.type == "text":
            content.append(block.text)
        elif block.type == "thinking":
            reasoning.append(block.thinking)
        elif block.type == "tool_use":
            calls.append(
                ToolCall(block.id, block.name, json.dumps(block.input, ensure_ascii=False))
            )
    return Answer(
        content=_join(content),
        calls=tuple(calls),
        finish=message.stop_reason,
        reasoning=_join(reasoning),
    )


def messages_stream_answer(events: Any) -> Answer:
    state = _Assembly()
    blocks: dict[int, str] = {}
    error: tuple[int, str] | None = None
    for number, event in enumerate(events):
        where = f"event {number} ({event.type})"
        if event.type == "content_block_start":
            block = event.content_block
            blocks[event.index] = block.type
            if block.type == "tool_use":
                state.head(event.index, block.id, block.name, where)
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                state.content.append(delta.text)
            elif delta.type == "thinking_delta":
                state.reasoning.append(delta.thinking)
            elif delta.type == "input_json_delta":
                state.arguments(event.index, delta.partial_json, where)
        elif event.type == "message_delta":
            state.finish = event.delta.stop_reason
        elif event.type == "error":
            error = (200, str(getattr(event, "error", event)))
    return state.answer(error=error)


# -- expectations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    content: str | None
    calls: tuple[ExpectedCall, ...]
    finish: str | None
    reasoning: str | None = None
    error: tuple[int, str] | None = None

    @property
    def tool_calls(self) -> tuple[ExpectedCall, ...]:  # toolcall_conformance.compare reads these
        return self.calls

    @property
    def recoveries(self) -> tuple[str, ...]:
        return ()


def _text(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _not_json(arguments: Mapping[str, Any] | str) -> str | None:
    """The message of ``json.loads(arguments)``'s error, or ``None`` when it is JSON."""
    try:
        json.loads(_text(arguments))
    except json.JSONDecodeError as error:
        return str(error)
    return None


def expect(
    content: str | None,
    calls: Sequence[ExpectedCall],
    api: str,
    ask: Ask,
    *,
    length: bool,
    reasoning: str | None = None,
) -> Expectation:
    """What ``api`` returns when our parser reads ``content`` and ``calls`` for ``ask``.

    ``length``: the engine stopped on ``max_tokens``.
    """
    if ask.tool_choice == "none":
        calls = ()  # the parser passes everything through as content
    if ask.parallel_tool_calls is False:
        calls = calls[:1]  # vLLM's maybe_filter_parallel_tool_calls
    calls = tuple(calls)
    if api.startswith("chat"):
        if length:
            finish = "length"
        elif calls and ask.named is None:
            finish = "tool_calls"
        else:
            finish = "stop"  # OpenAI's rule for a forced (named) function
    elif api.startswith("responses"):
        finish = "incomplete" if length else "completed"
    else:
        finish = "max_tokens" if length else "tool_use" if calls else "end_turn"
        if api == "messages":
            failures = [message for call in calls if (message := _not_json(call.arguments))]
            if failures:
                # vLLM's messages_full_converter json.loads each call's arguments into
                # ``input``; the ValueError becomes HTTP 400 invalid_request_error.
                return Expectation(None, (), None, error=(400, failures[0]))
    return Expectation(content, calls, finish, reasoning)


def expect_case(case: Case, api: str, ask: Ask, *, reasoning: str | None = None) -> Expectation:
    return expect(
        case.expected.content,
        case.expected.tool_calls,
        api,
        ask,
        length=case.finish_reason == "length",
        reasoning=reasoning,
    )


def difference(expected: Expectation, answer: Answer, api: str = "") -> str | None:
    """The first way ``answer`` differs from ``expected`` (case rules for content and calls:
    content compared stripped, ``null`` equal to ``""``; arguments by JSON value, or exactly
    where a string is expected)."""
    if answer.problems:
        return f"stream shape: {'; '.join(answer.problems)}"
    if expected.error is not None or answer.error is not None:
        if expected.error != answer.error:
            return f"error: expected {expected.error}, got {answer.error}"
        return None
    if api.startswith("messages"):
        # Anthropic carries arguments as a JSON value (``input``), so compare by value.
        calls = tuple(
            replace(call, arguments=json.loads(call.arguments))
            if isinstance(call.arguments, str) and _not_json(call.arguments) is None
            else call
            for call in expected.calls
        )
        expected = replace(expected, calls=calls)
    found = first_difference(expected, answer.parsed(), recoveries=False)
    if found is not None:
        return found
    if expected.finish != answer.finish:
        return f"finish: expected {expected.finish!r}, got {answer.finish!r}"
    if expected.reasoning is not None and (answer.reasoning or "").strip() != (
        expected.reasoning.strip()
    ):
        return f"reasoning: expected {expected.reasoning!r}, got {answer.reasoning!r}"
    if any(not call.id for call in answer.calls):
        return "a call has no id"
    return None


# -- many streams at once ---------------------------------------------------------------------


async def stream_all(endpoint: Endpoint, cases: Sequence[Case], concurrency: int) -> list[Answer]:
    """Each case's request as a Chat Completions stream, at most ``concurrency`` in flight
    (asyncio, ``AsyncOpenAI``, loopback only), assembled per :func:`chat_stream_answers`."""
    import asyncio

    import openai

    gate = asyncio.Semaphore(concurrency)
    async with openai.AsyncOpenAI(
        base_url=endpoint.server.base_url, api_key="unused", max_retries=0, timeout=600
    ) as client:

        async def one(case: Case) -> Answer:
            body = ask_for(case).chat_body(endpoint.model)
            async with gate:
                stream = await client.chat.completions.create(**body, stream=True)
                async with stream:
                    chunks = [chunk async for chunk in stream]
            return chat_stream_answers(chunks)[0]

        return list(await asyncio.gather(*(one(case) for case in cases)))


def max_in_flight(log: Sequence[Mapping[str, Any]], recordings: set[str]) -> int:
    """The most requests of ``recordings`` an engine (any API server's) held at once."""
    ours = {
        (r["pid"], r["request_id"])
        for r in log
        if r["event"] == "request" and r.get("recording") in recordings
    }
    live: dict[int, int] = {}
    most = 0
    for entry in log:
        key = (entry.get("pid"), entry.get("request_id"))
        if key in ours:
            pid = entry["pid"]
            live[pid] = live.get(pid, 0) + (1 if entry["event"] == "request" else -1)
            most = max(most, live[pid])
    return most


@contextlib.contextmanager
def no_bridge_errors(endpoint: Endpoint) -> Iterator[None]:
    """Fail if our bridge logged a warning or an error while the block ran (a parser
    failure, a delta-contract violation found by ``TOOLCALL_CHECK_CONTRACT``)."""
    endpoint.log.take()
    yield
    lines = endpoint.log.take()
    assert not lines, "the toolcall bridge logged:\n" + "\n".join(lines)
