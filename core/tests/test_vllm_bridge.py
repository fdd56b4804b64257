"""The vLLM bridge, against vLLM 0.33's real parser machinery (no server).

Runs in the vLLM venv. A test parser defined here (a Hermes-like
``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` format) is wrapped by the
adapter and driven through vLLM's own ``ParserManager`` / ``DelegatingParser``,
with a real HF tokenizer built offline (a small byte-level BPE with
``<tool_call>`` and ``</tool_call>`` as added tokens).
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
vllm = pytest.importorskip(
    "vllm", reason="the vLLM bridge tests need vLLM 0.33 installed (the vllm nox session)"
)

import xgrammar  # noqa: E402 - after the skip: vLLM brings it
from plugin_dists import Site, parsers_plugin  # noqa: E402
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.parser import ParserManager  # noqa: E402
from vllm.tokenizers.hf import get_cached_tokenizer  # noqa: E402
from vllm.tool_parsers import ToolParser, ToolParserManager  # noqa: E402
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel  # noqa: E402

import toolcall.vllm  # noqa: E402
from toolcall import (  # noqa: E402
    Delta,
    Event,
    Obligation,
    Parser,
    Plan,
    PluginError,
    Span,
    StrictLevel,
    ToolCallDelta,
    Vocabulary,
)
from toolcall.vllm import adapters  # noqa: E402
from toolcall.vllm.adapter import adapter_for, vocabulary_of  # noqa: E402
from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS, VLLM_VERSION  # noqa: E402

pytestmark = pytest.mark.vllm

START, END = "<tool_call>", "</tool_call>"
EOS = "<|endoftext|>"
TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ARGUMENTS = '{"city": "Paris"}'
CALL = f'{START}{{"name": "get_weather", "arguments": {ARGUMENTS}}}{END}'
OUTPUT = f"Let me check.\n{CALL}"


# -- the test format -------------------------------------------------------------------


class JsonTagStream:
    """Content outside ``<tool_call>...</tool_call>``; each block is a JSON call.

    A prefix of ``<tool_call>`` at the end of the text so far is held back. A
    complete block releases the call as three deltas (id and name, then the
    arguments in two halves), so that the adapter has to merge them. A block
    that is not a JSON call is content, verbatim.
    """

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.buffer = ""
        self.offset = 0  # of the buffer in the output
        self.block = 0  # where the open block started
        self.inside = False
        self.index = 0
        self.events: tuple[Event, ...] = ()
        self.framing: tuple[Span, ...] = ()

    def take(self, count: int) -> str:
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        self.offset += count
        return taken

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        self.buffer += text
        out: list[Delta] = []
        while True:
            if not self.inside:
                at = self.buffer.find(START)
                if at < 0:
                    keep = max(
                        (n for n in range(1, len(START)) if self.buffer.endswith(START[:n])),
                        default=0,
                    )
                    released = self.take(len(self.buffer) - keep)
                    if released:
                        out.append(Delta(content=released))
                    return out
                if at:
                    out.append(Delta(content=self.take(at)))
                self.block = self.offset
                self.take(len(START))
                self.inside = True
            else:
                at = self.buffer.find(END)
                if at < 0:
                    return out
                body = self.take(at)
                self.take(len(END))
                self.inside = False
                out += self.call(body)

    def call(self, body: str) -> list[Delta]:
        try:
            data = json.loads(body)
            name = data["name"]
            arguments = json.dumps(data["arguments"], ensure_ascii=False)
        except (ValueError, KeyError, TypeError):
            self.events += (Event("unparsed-markup"),)
            return [Delta(content=START + body + END)]
        self.framing += (Span(self.block, self.offset),)
        index, self.index = self.index, self.index + 1
        half = len(arguments) // 2
        return [
            Delta(tool_calls=(ToolCallDelta(index, id=self.parser.new_call_id(), name=name),)),
            Delta(tool_calls=(ToolCallDelta(index, arguments=arguments[:half]),)),
            Delta(tool_calls=(ToolCallDelta(index, arguments=arguments[half:]),)),
        ]

    def finish(self) -> list[Delta]:
        if self.inside:
            self.events += (Event("unparsed-markup"),)
        rest = (START if self.inside else "") + self.take(len(self.buffer))
        self.inside = False
        return [Delta(content=rest)] if rest else []


class JsonTagParser(Parser):
    name = "tc_json_tag"
    markers = (START, END)
    default_strict_level = StrictLevel.FUNCTION

    @classmethod
    def check_vocabulary(cls, vocabulary: Vocabulary) -> None:
        missing = [marker for marker in cls.markers if vocabulary.id_of(marker) is None]
        if missing:
            msg = f"the tokenizer has no token {missing[0]!r}"
            raise ValueError(msg)

    def stream(self) -> JsonTagStream:
        return JsonTagStream(self)

    def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
        if not plan.grammar:
            return None
        tags = [
            {
                "type": "tag",
                "begin": f'{START}{{"name": "{item.tool.name}", "arguments": ',
                "content": {
                    "type": "json_schema",
                    "json_schema": dict(item.tool.parameters or {}) if item.pinned else True,
                },
                "end": f"}}{END}",
            }
            for item in plan.tools
        ]
        if plan.obligation is Obligation.OPTIONAL:
            return {"type": "triggered_tags", "triggers": [START], "tags": tags}
        return {
            "type": "tags_with_separator",
            "tags": tags,
            "separator": "",
            "at_least_one": True,
            "stop_after_first": plan.at_most_one or plan.obligation is Obligation.NAMED,
        }


Adapter = adapter_for(JsonTagParser)


# -- fixtures ---------------------------------------------------------------------------


def build_tokenizer(*, with_markers: bool = True) -> Any:
    model = Tokenizer(models.BPE())
    model.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[EOS],
    )
    model.train_from_iterator([OUTPUT, "Hello there, let me check the weather."] * 20, trainer)
    if with_markers:
        model.add_tokens([AddedToken(marker, normalized=False) for marker in (START, END)])
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=model, eos_token=EOS, response_template={"kind": "test"}
    )
    return get_cached_tokenizer(tokenizer)  # what vLLM hands to parsers


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer()


def token_steps(tokenizer: Any, text: str) -> list[tuple[str, list[int]]]:
    """One step per token: the text each token adds, as vLLM's detokenizer gives it."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    steps, previous = [], ""
    for end in range(1, len(ids) + 1):
        current = tokenizer.decode(ids[:end], skip_special_tokens=False)
        steps.append((current[len(previous) :], [ids[end - 1]]))
        previous = current
    assert "".join(text for text, _ in steps) == text
    return steps


def chat_request(tool_choice: Any = "auto", **fields: Any) -> Any:
    return ChatCompletionRequest(
        model="test",
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[TOOL],
        tool_choice=tool_choice,
        **fields,
    )


NAMED = {"type": "function", "function": {"name": "get_weather"}}


@pytest.fixture
def vllm_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Private copies of vLLM's parser tables and fresh adapter caches for one test."""
    monkeypatch.setattr(ToolParserManager, "tool_parsers", dict(ToolParserManager.tool_parsers))
    monkeypatch.setattr(ToolParserManager, "lazy_parsers", dict(ToolParserManager.lazy_parsers))
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()
    yield
    adapters.registry.cache_clear()
    adapters.adapter_class.cache_clear()


@pytest.fixture
def composed(vllm_registry: None, tokenizer: Any) -> Any:
    """vLLM's own composed parser class for ``--tool-call-parser tc_json_tag``."""
    ToolParserManager.register_module(name=JsonTagParser.name, module=Adapter)
    return ParserManager.get_parser(
        tool_parser_name=JsonTagParser.name, enable_auto_tools=True, tokenizer=tokenizer
    )


def stream_through(parser_cls: Any, tokenizer: Any, text: str, request: Any) -> list[Any]:
    """Every ``parse_delta`` result of one streamed request, one token per step, and
    the EOS step as vLLM sends it (no text, the EOS id) with ``finished=True``."""
    parser = parser_cls(tokenizer, request.tools)
    steps = [*token_steps(tokenizer, text), ("", [tokenizer.convert_tokens_to_ids(EOS)])]
    messages = []
    for number, (delta, ids) in enumerate(steps):
        messages.append(
            parser.parse_delta(
                delta, ids, request, prompt_token_ids=[1], finished=number == len(steps) - 1
            )
        )
    return [message for message in messages if message is not None]


def dumped(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return [message.model_dump(exclude_unset=True) for message in messages]


def content_of(messages: Sequence[Any]) -> str:
    return "".join(message.content or "" for message in messages)


def entries_of(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return [entry for data in dumped(messages) for entry in data.get("tool_calls", [])]


# -- what vLLM knows about -------------------------------------------------------------


def test_builtin_names_match_vllm() -> None:
    if vllm.__version__ != VLLM_VERSION:
        pytest.skip(f"the built-in list is for vLLM {VLLM_VERSION}, not {vllm.__version__}")
    assert set(ToolParserManager.list_registered()) == VLLM_BUILTIN_TOOL_PARSERS


def test_general_plugin_entry_point() -> None:
    (entry,) = [
        entry
        for entry in importlib.metadata.entry_points(group="vllm.general_plugins")
        if entry.name == "toolcall"
    ]
    assert entry.value == "toolcall.vllm:register"
    assert entry.load() is toolcall.vllm.register


def test_adapter_class_attributes() -> None:
    assert issubclass(Adapter, ToolParser)
    assert Adapter.engine_based_streaming is True
    assert "supports_required_and_named" in vars(toolcall.vllm.adapter.ToolcallToolParser)
    assert Adapter.supports_required_and_named is False
    assert Adapter.structural_tag_model == "toolcall"
    assert Adapter.default_tool_strict_level is ToolStrictLevel.FUNCTION
    assert Adapter.__module__ == "toolcall.vllm.adapters"
    assert Adapter.__qualname__ == "ToolcallParser_tc_json_tag"


# -- register() ------------------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return Site(path)


def test_register_replaces_a_builtin_lazily(
    site: Site, vllm_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLCALL_BLOCK", raising=False)
    assert "jamba" in VLLM_BUILTIN_TOOL_PARSERS
    site.add_plugin(
        "tc-bridge", parsers_plugin("jamba", "tc_bridge_new"), ("jamba", "tc_bridge_new")
    )
    toolcall.vllm.register()
    expected = ("toolcall.vllm.adapters", "ToolcallParser_jamba")
    assert ToolParserManager.lazy_parsers["jamba"] == expected
    assert ToolParserManager.lazy_parsers["tc_bridge_new"][1] == "ToolcallParser_tc_bridge_new"
    assert adapters.adapter_class.cache_info().currsize == 0, "register() built an adapter"

    toolcall.vllm.register()  # vLLM may load plugins twice
    assert ToolParserManager.lazy_parsers["jamba"] == expected

    parser_cls = ToolParserManager.get_tool_parser("jamba")
    assert issubclass(parser_cls, ToolParser)
    assert parser_cls.toolcall_parser_class.name == "jamba"
    assert parser_cls.toolcall_parser_class.__module__ == site.module_name("tc_bridge")
    assert "tc_bridge_new" in ToolParserManager.list_registered()

    toolcall.vllm.register()  # and again, after the lookup cached our class
    assert ToolParserManager.get_tool_parser("jamba") is parser_cls


def test_register_replaces_a_builtin_already_looked_up(
    site: Site, vllm_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLCALL_BLOCK", raising=False)
    builtin = ToolParserManager.get_tool_parser("jamba")  # now cached: lazy entries lose
    assert builtin.__module__.startswith("vllm.")
    site.add_plugin("tc-bridge", parsers_plugin("jamba"), ("jamba",))
    toolcall.vllm.register()
    parser_cls = ToolParserManager.get_tool_parser("jamba")
    assert parser_cls is not builtin
    assert parser_cls.toolcall_parser_name == "jamba"


def test_register_honours_blocks(
    site: Site, vllm_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    builtin = ToolParserManager.lazy_parsers["jamba"]
    site.add_plugin(
        "tc-bridge", parsers_plugin("jamba", "tc_bridge_new"), ("jamba", "tc_bridge_new")
    )
    monkeypatch.setenv("TOOLCALL_BLOCK", "jamba")
    toolcall.vllm.register()
    assert ToolParserManager.lazy_parsers["jamba"] == builtin
    assert ToolParserManager.lazy_parsers["tc_bridge_new"][0] == "toolcall.vllm.adapters"


def test_broken_plugin_name_fails_with_the_original_error(
    site: Site, vllm_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLCALL_BLOCK", raising=False)
    site.add_plugin(
        "tc-bridge-broken", "raise RuntimeError('plugin boom')\n", ("tc_bridge_broken",)
    )
    toolcall.vllm.register()
    with pytest.raises(PluginError) as raised:
        ToolParserManager.get_tool_parser("tc_bridge_broken")
    assert isinstance(raised.value.error, RuntimeError)
    assert "tc-bridge-broken 1.0" in str(raised.value)
    assert "plugin boom" in str(raised.value)


def test_register_never_raises(
    vllm_registry: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(*args: Any, **kwargs: Any) -> None:
        raise OSError("metadata unreadable")

    monkeypatch.setattr("toolcall.registry.Registry.load", explode)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        toolcall.vllm.register()
    (record,) = [record for record in caplog.records if record.name == "toolcall"]
    assert "OSError: metadata unreadable" in record.getMessage()


def test_register_reports_names_it_could_not_register(
    site: Site,
    vllm_registry: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("TOOLCALL_BLOCK", raising=False)
    site.add_plugin("tc-bridge", parsers_plugin("tc_bridge_new"), ("tc_bridge_new",))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise KeyError("registry locked")

    monkeypatch.setattr(ToolParserManager, "register_lazy_module", refuse)
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        toolcall.vllm.register()
    (record,) = [record for record in caplog.records if record.name == "toolcall"]
    assert "tc_bridge_new" in record.getMessage()
    assert "registry locked" in record.getMessage()


# -- logging through vLLM's ------------------------------------------------------------

#: What ``vllm serve`` does around our plugin, in its order: plugins load while the
#: arguments are parsed (our ``register()``), then logging is set up from the arguments
#: (``configure_logging_from_args``), then the API server looks the tool parser up.
SERVE_LIKE = """
import toolcall.vllm
from vllm.plugins import load_general_plugins
load_general_plugins()
from vllm.config.logging import LoggingConfig
from vllm.logger import configure_logging
configure_logging(LoggingConfig())
from vllm.tool_parsers import ToolParserManager
for name in ("jamba", "tc_bridge_new", "jamba"):
    ToolParserManager.get_tool_parser(name)
"""


def test_startup_lines_show_under_vllms_default_logging(site: Site) -> None:
    """Which distribution serves each name, and a broken plugin, once each, in vLLM's own
    format on vLLM's own stream, with vLLM's default logging configuration."""
    site.add_plugin(
        "tc-bridge", parsers_plugin("jamba", "tc_bridge_new"), ("jamba", "tc_bridge_new")
    )
    site.add_plugin("tc-bridge-broken", "raise RuntimeError('plugin boom')\n", ("tc_broken",))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("VLLM_LOGGING", "VLLM_CONFIGURE_LOGGING", "VLLM_PLUGINS"))
    }
    env |= {"PYTHONPATH": str(site.path), "VLLM_TARGET_DEVICE": "cpu", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE_LIKE], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    module = site.module_name("tc_bridge")
    lines = [line for line in done.stdout.splitlines() if "] toolcall" in line]
    replaced = (
        f"toolcall: jamba → tc-bridge 1.0 ({module}.tag_parser.<locals>.TagParser; "
        "replaces vLLM's built-in)"
    )
    new = f"toolcall: tc_bridge_new → tc-bridge 1.0 ({module}.tag_parser.<locals>.TagParser; new)"
    for message, level in [(replaced, "INFO"), (new, "INFO"), ("tc-bridge-broken 1.0", "ERROR")]:
        said = [line for line in lines if message in line]
        assert len(said) == 1, (message, done.stdout)
        # vLLM's format: (PROCESS pid=N) LEVEL mm-dd hh:mm:ss [FILE:LINE] MESSAGE
        assert said[0].startswith("("), said[0]
        assert f") {level} " in said[0]
    assert "RuntimeError: plugin boom" in next(line for line in lines if "tc-bridge-broken" in line)


@pytest.fixture
def toolcall_logger() -> Iterator[logging.Logger]:
    """The ``toolcall`` and ``vllm`` loggers, restored after the test."""
    ours, theirs = logging.getLogger("toolcall"), logging.getLogger(toolcall.vllm.VLLM_LOGGER)
    saved = (ours.handlers[:], ours.level, theirs.handlers[:])
    ours.handlers.clear()
    ours.setLevel(logging.NOTSET)
    yield ours
    ours.handlers[:], theirs.handlers[:] = saved[0], saved[2]
    ours.setLevel(saved[1])


def test_route_logging_hands_records_to_vllms_handlers(toolcall_logger: logging.Logger) -> None:
    vllm_logger = logging.getLogger(toolcall.vllm.VLLM_LOGGER)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    vllm_logger.handlers[:] = [handler]
    toolcall.vllm.route_logging()
    toolcall.vllm.route_logging()  # idempotent: one handler
    assert len(toolcall_logger.handlers) == 1
    toolcall_logger.debug("toolcall: below vLLM's level")
    toolcall_logger.info("toolcall: hermes → toolcall-hermes 0.1.0")
    assert stream.getvalue() == "INFO toolcall toolcall: hermes → toolcall-hermes 0.1.0\n"


def test_route_logging_keeps_a_configured_logger(toolcall_logger: logging.Logger) -> None:
    mine = logging.NullHandler()
    toolcall_logger.addHandler(mine)
    toolcall.vllm.route_logging()
    assert toolcall_logger.handlers == [mine]


# -- construction and the tokenizer ----------------------------------------------------


def test_vocabulary_is_the_added_and_special_tokens(tokenizer: Any) -> None:
    vocabulary = vocabulary_of(tokenizer)
    assert vocabulary.special_tokens == {
        text: tokenizer.convert_tokens_to_ids(text) for text in (EOS, START, END)
    }
    # The tokenizer has no chat template; its end-of-sequence token is passed on for one.
    assert vocabulary.metadata == {"response_template": {"kind": "test"}, "eos_token": EOS}
    assert vocabulary_of(tokenizer) is vocabulary  # built once per tokenizer


def test_tokenizer_without_markers_is_rejected_at_startup(vllm_registry: None) -> None:
    plain = build_tokenizer(with_markers=False)
    with pytest.raises(ValueError, match="no token '<tool_call>'"):
        Adapter(plain)
    ToolParserManager.register_module(name=JsonTagParser.name, module=Adapter)
    with pytest.raises(TypeError, match="cannot be used with the tokenizer"):
        ParserManager.get_parser(
            tool_parser_name=JsonTagParser.name, enable_auto_tools=True, tokenizer=plain
        )


# -- streaming -------------------------------------------------------------------------


def test_streaming_through_vllm(composed: Any, tokenizer: Any) -> None:
    messages = stream_through(composed, tokenizer, OUTPUT, chat_request())
    assert content_of(messages) == "Let me check.\n"
    (entry,) = entries_of(messages)
    assert entry["index"] == 0
    assert entry["id"].startswith("chatcmpl-tool-")
    assert entry == {
        "index": 0,
        "id": entry["id"],
        "type": "function",
        "function": {"name": "get_weather", "arguments": ARGUMENTS},
    }
    # content comes out token by token, not held to the end
    steps = [text for text, _ in token_steps(tokenizer, OUTPUT)]
    before_call = steps[: steps.index(START)]
    assert [message.content for message in messages if message.content] == before_call


def test_one_feed_gives_one_message_with_one_entry_per_call(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    request = chat_request()
    text = f"{CALL}\n{CALL.replace('Paris', 'Rome')}"
    message = parser.extract_tool_calls_streaming("", text, text, [], [], [], request)
    data = message.model_dump(exclude_unset=True)
    first, second = data["tool_calls"]
    assert data == {
        "content": "\n",
        "tool_calls": [
            {
                "index": 0,
                "id": first["id"],
                "type": "function",
                "function": {"name": "get_weather", "arguments": ARGUMENTS},
            },
            {
                "index": 1,
                "id": second["id"],
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            },
        ],
    }
    assert first["id"] != second["id"]
    assert parser.prev_tool_call_arr == [
        {"name": "get_weather", "arguments": ARGUMENTS},
        {"name": "get_weather", "arguments": '{"city": "Rome"}'},
    ]
    assert parser.streamed_args_for_tool == [ARGUMENTS, '{"city": "Rome"}']
    assert parser.get_remaining_unstreamed_args() == ""
    assert parser.finish_streaming() is None


def test_bookkeeping_follows_what_was_emitted(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    request = chat_request()
    seen: list[str] = []
    for text, ids in token_steps(tokenizer, OUTPUT):
        message = parser.extract_tool_calls_streaming("", text, text, [], ids, ids, request)
        for entry in entries_of([message] if message is not None else []):
            seen.append(entry["function"].get("arguments", ""))
        assert parser.streamed_args_for_tool in ([], ["".join(seen)])
    assert parser.prev_tool_call_arr == [{"name": "get_weather", "arguments": ARGUMENTS}]
    assert parser.current_tool_id == 0


def test_finish_flushes_a_held_marker_prefix(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    request = chat_request()
    text = "Checking <tool_"
    released = []
    for piece, ids in token_steps(tokenizer, text):
        message = parser.extract_tool_calls_streaming("", piece, piece, [], ids, ids, request)
        if message is not None:
            released.append(message.content)
    # "<tool_" could still become "<tool_call>": held until the end of output
    assert "".join(released) == "Checking "
    final = parser.finish_streaming()
    assert final.model_dump(exclude_unset=True) == {"content": "<tool_"}
    assert parser.finish_streaming() is None  # at most once


def test_finish_returns_an_unfinished_call_as_content(composed: Any, tokenizer: Any) -> None:
    cut = f'Sure.\n{START}{{"name": "get_weather", "argu'
    messages = stream_through(composed, tokenizer, cut, chat_request())
    assert content_of(messages) == cut
    assert entries_of(messages) == []


def test_finish_on_an_instance_never_fed(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    assert parser.finish_streaming() is None
    assert parser.finish_streaming() is None
    assert Adapter(tokenizer).finish_streaming() is None


def test_empty_and_eos_only_steps(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    request = chat_request()
    assert parser.extract_tool_calls_streaming("", "", "", [], [], [], request) is None
    eos = tokenizer.convert_tokens_to_ids(EOS)
    assert parser.extract_tool_calls_streaming("", "", "", [], [eos], [eos], request) is None
    assert parser.finish_streaming() is None


class ClosedAtEndStream:
    """A call whose body is closed by ``finish()``, as GLM closes a call whose output
    ends right after a value: the text is argument text of call 0, then ``}``."""

    events: tuple[Event, ...] = ()
    framing: tuple[Span, ...] = ()

    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.started = False

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        if not text:
            return []
        if not self.started:
            self.started = True
            head = ToolCallDelta(0, id=self.parser.new_call_id(), name="get_weather")
            return [Delta(tool_calls=(head, ToolCallDelta(0, arguments=text)))]
        return [Delta(tool_calls=(ToolCallDelta(0, arguments=text),))]

    def finish(self) -> list[Delta]:
        return [Delta(tool_calls=(ToolCallDelta(0, arguments="}"),))] if self.started else []


class ClosedAtEndParser(JsonTagParser):
    name = "tc_closed_at_end"

    def stream(self) -> Any:
        return ClosedAtEndStream(self)


def test_vllm_merges_the_flush_into_the_last_step(vllm_registry: None, tokenizer: Any) -> None:
    """What core/README.md documents: the adapter returns one entry per call index per
    message, from ``extract_tool_calls_streaming`` and from ``finish_streaming`` alike; in
    the step that ends the stream, vLLM's ``DelegatingParser._flush_engine_parsers``
    appends the flush's entries to that step's message, so call 0 has two entries there.
    If a vLLM release stops doing this, this test says so."""
    adapter = adapter_for(ClosedAtEndParser)
    ToolParserManager.register_module(name=ClosedAtEndParser.name, module=adapter)
    parser_cls = ParserManager.get_parser(
        tool_parser_name=ClosedAtEndParser.name, enable_auto_tools=True, tokenizer=tokenizer
    )
    request = chat_request()
    parser = parser_cls(tokenizer, request.tools)
    steps = ['{"city": ', '"Paris"']
    messages = [
        parser.parse_delta(text, [], request, prompt_token_ids=[1], finished=last)
        for text, last in zip(steps, [False, True], strict=True)
    ]
    first, final = (message.model_dump(exclude_unset=True) for message in messages)
    assert [entry["index"] for entry in first["tool_calls"]] == [0]
    assert final["tool_calls"] == [
        {"index": 0, "function": {"arguments": '"Paris"'}},
        {"index": 0, "function": {"arguments": "}"}},
    ]
    # the adapter alone: one entry per index in each message it returns
    alone = adapter(tokenizer, [TOOL])
    for text in steps:
        message = alone.extract_tool_calls_streaming("", text, text, [], [], [], request)
        assert len(message.tool_calls) == 1
    assert len(alone.finish_streaming().tool_calls) == 1


# -- how the messages are built ------------------------------------------------------------


def test_messages_are_built_the_fast_way_in_vllm_0_33() -> None:
    """The fast builders give exactly what the validating constructors give in vLLM 0.33's
    pydantic (checked at import); if a release changes the classes, they step aside."""
    from toolcall.vllm import _compat

    assert _compat.FAST_MESSAGES is True


SHAPES: list[tuple[str | None, list[dict[str, Any]], str | None]] = [
    ("Hello", [], None),
    (None, [], "thinking"),
    (None, [{"index": 0, "id": "chatcmpl-tool-1", "name": "get_weather"}], None),
    (None, [{"index": 0, "id": "chatcmpl-tool-1", "name": "f", "arguments": '{"a": '}], None),
    (None, [{"index": 2, "arguments": "1}"}], None),
    ("x", [{"index": 0, "arguments": "}"}, {"index": 1, "id": "i", "name": "g"}], "r"),
]


@pytest.mark.parametrize(("content", "calls", "reasoning"), SHAPES)
def test_fast_messages_are_the_validated_ones(
    content: str | None, calls: list[dict[str, Any]], reasoning: str | None
) -> None:
    """Same fields, same fields-set, same JSON, also after the changes vLLM makes to a
    message it got from a parser (finalize_generation, _flush_engine_parsers, the chat
    stream's tool_calls filter)."""
    from vllm.entrypoints.generate.base.protocol import (
        DeltaFunctionCall,
        DeltaMessage,
        DeltaToolCall,
    )

    from toolcall.vllm import _compat

    fast = _compat.delta_message(
        content, [_compat.delta_tool_call(**call) for call in calls], reasoning
    )
    entries = []
    for call in calls:
        function = {k: call[k] for k in ("name", "arguments") if k in call}
        fields: dict[str, Any] = {"index": call["index"]}
        if "id" in call:
            fields |= {"id": call["id"], "type": "function"}
        entries.append(DeltaToolCall(**fields, function=DeltaFunctionCall(**function)))
    fields = {"content": content, "reasoning": reasoning, "tool_calls": entries}
    slow = DeltaMessage(**{k: v for k, v in fields.items() if v})
    for message in (fast, slow):
        assert message.model_dump_json(exclude_unset=True) == slow.model_dump_json(
            exclude_unset=True
        )
    assert fast == slow
    assert fast.model_fields_set == slow.model_fields_set
    for message in (fast, slow):
        if message.tool_calls:
            message.tool_calls[-1].function.arguments = (
                message.tool_calls[-1].function.arguments or ""
            ) + "!"
        message.content = (message.content or "") + "."
        message.tool_calls = [*message.tool_calls, DeltaToolCall(index=9)]
    assert fast.model_dump_json(exclude_unset=True) == slow.model_dump_json(exclude_unset=True)
    one = _compat.arguments_message(3, '"x"')
    assert one.model_dump(exclude_unset=True) == {
        "tool_calls": [{"index": 3, "function": {"arguments": '"x"'}}]
    }


def test_the_validating_constructors_when_the_classes_change(
    monkeypatch: pytest.MonkeyPatch, composed: Any, tokenizer: Any
) -> None:
    from vllm.entrypoints.generate.base.protocol import DeltaToolCall

    from toolcall.vllm import _compat

    monkeypatch.setattr(DeltaToolCall, "__pydantic_post_init__", "model_post_init")
    assert _compat._fast_is_exact() is False
    monkeypatch.setattr(_compat, "FAST_MESSAGES", False)
    messages = stream_through(composed, tokenizer, OUTPUT, chat_request())
    (entry,) = entries_of(messages)
    assert entry["function"] == {"name": "get_weather", "arguments": ARGUMENTS}
    assert content_of(messages) == "Let me check.\n"


class ReasoningStream(JsonTagStream):
    """The test format, with text between ``<r>`` and ``</r>`` at the start as reasoning."""

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        if text.startswith("<r>"):
            return [Delta(reasoning=text[3:-4])]
        return super().feed(text, token_ids)


class ReasoningParser(JsonTagParser):
    name = "tc_reasoning"

    def stream(self) -> JsonTagStream:
        return ReasoningStream(self)


def test_reasoning_a_format_marks_reaches_vllm_as_reasoning(tokenizer: Any) -> None:
    """DESIGN §6: text the format marks as reasoning is the message's reasoning."""
    parser = adapter_for(ReasoningParser)(tokenizer, [TOOL])
    request = chat_request()
    message = parser.extract_tool_calls_streaming(
        "", "", "<r>Paris, then.</r>", [], [], [], request
    )
    assert message.model_dump(exclude_unset=True) == {"reasoning": "Paris, then."}


# -- tool_choice ---------------------------------------------------------------------


def test_none_passes_everything_through(composed: Any, tokenizer: Any) -> None:
    request = chat_request("none")
    messages = stream_through(composed, tokenizer, OUTPUT, request)
    assert content_of(messages) == OUTPUT
    assert entries_of(messages) == []
    # the adapter alone: nothing held back, so nothing to flush
    parser = Adapter(tokenizer, [TOOL])
    for text, ids in token_steps(tokenizer, OUTPUT):
        message = parser.extract_tool_calls_streaming("", text, text, [], ids, ids, request)
        assert message.model_dump(exclude_unset=True) == {"content": text}
    assert parser.finish_streaming() is None
    # non-streaming
    info = Adapter(tokenizer, [TOOL]).extract_tool_calls(OUTPUT, request)
    assert (info.tools_called, info.tool_calls, info.content) == (False, [], OUTPUT)
    _, content, calls = composed(tokenizer, [TOOL]).parse(OUTPUT, request, enable_auto_tools=True)
    assert content == OUTPUT
    assert not calls


def test_request_without_tools_passes_through(tokenizer: Any) -> None:
    request = ChatCompletionRequest(model="test", messages=[{"role": "user", "content": "hi"}])
    assert request.tool_choice == "none"
    info = Adapter(tokenizer).extract_tool_calls(OUTPUT, request)
    assert info.content == OUTPUT
    assert not info.tools_called


def test_auto_without_tools_passes_through(tokenizer: Any) -> None:
    """vLLM's Anthropic endpoint sends ``tool_choice: "auto"`` with no tools, and its chat
    layer then drops every call (``keeps_tool_calls``): a call parsed would lose its text."""
    request = ChatCompletionRequest(model="test", messages=[{"role": "user", "content": "hi"}])
    request.tool_choice = "auto"  # as AnthropicServingMessages sets it, after validation
    info = Adapter(tokenizer).extract_tool_calls(OUTPUT, request)
    assert (info.tools_called, info.content) == (False, OUTPUT)
    parser = Adapter(tokenizer)
    streamed = [
        parser.extract_tool_calls_streaming("", text, text, [], ids, ids, request)
        for text, ids in token_steps(tokenizer, OUTPUT)
    ]
    assert "".join(m.content for m in streamed if m is not None) == OUTPUT
    assert all(m is None or not m.tool_calls for m in streamed)
    assert parser.finish_streaming() is None


@pytest.mark.parametrize("enforce", ["1", "0"])
@pytest.mark.parametrize("choice", ["auto", "required", NAMED])
def test_calls_are_read_from_our_format_for_every_choice(
    composed: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch, choice: Any, enforce: str
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", enforce)
    request = chat_request(choice)
    _, content, calls = composed(tokenizer, [TOOL]).parse(OUTPUT, request, enable_auto_tools=True)
    assert content == "Let me check.\n"
    (call,) = calls
    assert (call.name, call.arguments) == ("get_weather", ARGUMENTS)
    messages = stream_through(composed, tokenizer, OUTPUT, request)
    (entry,) = entries_of(messages)
    assert entry["function"] == {"name": "get_weather", "arguments": ARGUMENTS}
    assert content_of(messages) == "Let me check.\n"


@pytest.mark.parametrize(
    ("choice", "called"),
    [
        ("auto", True),
        ({"type": "function", "name": "get_weather"}, True),
        ({"type": "allowed_tools", "mode": "required", "tools": [NAMED["function"]]}, True),
        ("none", False),
    ],
)
def test_responses_api_requests(tokenizer: Any, choice: Any, called: bool) -> None:
    from vllm.entrypoints.openai.responses.protocol import ResponsesRequest

    function = TOOL["function"]
    request = ResponsesRequest(
        model="test",
        input="Weather in Paris?",
        tools=[{"type": "function", **function}],
        tool_choice=choice,
    )
    info = Adapter(tokenizer, request.tools).extract_tool_calls(OUTPUT, request)
    assert info.tools_called is called
    if called:
        (call,) = info.tool_calls
        assert (call.function.name, call.function.arguments) == ("get_weather", ARGUMENTS)
        assert info.content == "Let me check.\n"
    else:
        assert info.content == OUTPUT


# -- reading the request: vLLM's request types, its test doubles, namespaced tools --------


def call_of(info: Any) -> tuple[str, str] | None:
    """The one call of an ``ExtractedToolCallInformation`` (``None``: no call)."""
    if not info.tools_called:
        return None
    (call,) = info.tool_calls
    return call.function.name, call.function.arguments


class NoDump(ChatCompletionRequest):  # type: ignore[misc]
    """A chat request that refuses ``model_dump``: the adapter must read attributes."""

    def model_dump(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the adapter called model_dump()")


def test_the_request_is_read_through_its_attributes(tokenizer: Any) -> None:
    request = NoDump(
        model="test", messages=[{"role": "user", "content": "hi"}], tools=[TOOL], tool_choice="auto"
    )
    assert call_of(Adapter(tokenizer, request.tools).extract_tool_calls(OUTPUT, request)) == (
        "get_weather",
        ARGUMENTS,
    )


def test_vllm_test_doubles(tokenizer: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The request doubles of vLLM's own tool-parser tests (tests/tool_parsers):
    ``Mock(spec=ChatCompletionRequest)`` with ``tools`` and ``tool_choice`` set, and
    ``request=None`` with the tools given to the constructor."""
    from unittest.mock import Mock

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionToolsParam

    tools = [ChatCompletionToolsParam.model_validate(TOOL)]
    mock = Mock(spec=ChatCompletionRequest)
    mock.tools = tools
    mock.tool_choice = "auto"
    expected = ("get_weather", ARGUMENTS)
    assert call_of(Adapter(tokenizer, tools).extract_tool_calls(OUTPUT, mock)) == expected
    parser = Adapter(tokenizer, tools)
    messages = [
        parser.extract_tool_calls_streaming("", text, text, [], ids, ids, mock)
        for text, ids in token_steps(tokenizer, OUTPUT)
    ]
    (entry,) = entries_of([m for m in [*messages, parser.finish_streaming()] if m is not None])
    assert entry["function"] == {"name": "get_weather", "arguments": ARGUMENTS}
    assert call_of(Adapter(tokenizer, tools).extract_tool_calls(OUTPUT, None)) == expected
    # pydantic fields are not class attributes: a spec'd Mock has no tool_choice unless it
    # is set, which reads as an explicit null (parsed like auto, vLLM's rule)
    unset = Mock(spec=ChatCompletionRequest)
    unset.tools = tools
    assert not hasattr(unset, "tool_choice")
    with caplog.at_level(logging.WARNING, logger="toolcall"):
        assert call_of(Adapter(tokenizer, tools).extract_tool_calls(OUTPUT, unset)) == expected
    assert not [r for r in caplog.records if r.name == "toolcall"]
    # a tool_choice that is no choice at all is read as auto, with a warning
    odd = Mock(spec=ChatCompletionRequest)
    odd.tools = tools
    odd.tool_choice = Mock()
    with caplog.at_level(logging.WARNING, logger="toolcall"):
        assert call_of(Adapter(tokenizer, tools).extract_tool_calls(OUTPUT, odd)) == expected
    (record,) = [r for r in caplog.records if r.name == "toolcall"]
    assert "reads the request as tool_choice auto" in record.getMessage()


NAMESPACE = {
    "type": "namespace",
    "name": "mcp__fs",
    "description": "The file system.",
    "tools": [
        {"type": "function", "name": "get_weather", "parameters": TOOL["function"]["parameters"]},
        {"type": "custom", "name": "patch"},
    ],
}
FLAT = "mcp__fs__get_weather"


def responses_request(tools: list[Any], choice: Any = "auto") -> Any:
    from vllm.entrypoints.openai.responses.protocol import ResponsesRequest

    return ResponsesRequest(model="test", input="Weather?", tools=tools, tool_choice=choice)


def test_namespaced_tools_are_seen_as_vllm_names_them(tokenizer: Any) -> None:
    """A Responses request whose only tools are a namespace group: vLLM 0.33 shows the
    model ``mcp__fs__get_weather``; a call to it is a call, not content."""
    request = responses_request([NAMESPACE])
    output = OUTPUT.replace('"get_weather"', f'"{FLAT}"')
    info = Adapter(tokenizer, request.tools).extract_tool_calls(output, request)
    assert call_of(info) == (FLAT, ARGUMENTS)
    assert info.content == "Let me check.\n"
    parser = Adapter(tokenizer, request.tools)
    messages = [
        parser.extract_tool_calls_streaming("", text, text, [], ids, ids, request)
        for text, ids in token_steps(tokenizer, output)
    ]
    (entry,) = entries_of([m for m in [*messages, parser.finish_streaming()] if m is not None])
    assert entry["function"] == {"name": FLAT, "arguments": ARGUMENTS}


def test_the_structural_tag_constrains_namespaced_tools(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "1")
    request = responses_request([NAMESPACE], {"type": "function", "name": FLAT})
    tag = Adapter(tokenizer).get_structural_tag(request, strict_level=ToolStrictLevel.PARAMETER)
    assert isinstance(tag, xgrammar.StructuralTag)
    # the custom member is dropped, as vLLM drops it; the function is pinned by its schema
    (item,) = tag.format.tags
    assert item.begin == f'{START}{{"name": "{FLAT}", "arguments": '
    assert item.content.json_schema == TOOL["function"]["parameters"]


def test_tools_are_read_exactly_as_vllm_shows_them_to_the_model(tokenizer: Any) -> None:
    """Our reading of a Responses request's tools against vLLM's own
    ``get_function_tools``: the same names, schemas, descriptions and strictness, in order."""
    from vllm.tool_parsers.utils import get_function_tools

    from toolcall.types import Request
    from toolcall.vllm import _compat

    tools = [
        {"type": "function", "name": "lookup", "description": "Find.", "strict": True},
        NAMESPACE,
        {"type": "custom", "name": "run_sql", "description": "Run SQL."},
        {"type": "web_search"},
        {"type": "namespace", "name": "crm", "description": "CRM.", "tools": [
            {"type": "function", "name": "find", "parameters": {"type": "object"}},
        ]},
    ]  # fmt: skip
    request = responses_request(tools)
    ours = Request.from_openai(_compat.request_data(request)).tools
    theirs = get_function_tools(request.tools)
    assert [(t.name, t.parameters, t.description, t.strict) for t in ours] == [
        (t.name, t.parameters, t.description, t.strict) for t in theirs
    ]
    assert [t.name for t in ours] == ["lookup", FLAT, "run_sql", "crm__find"]


def test_non_streaming_result(tokenizer: Any) -> None:
    parser = Adapter(tokenizer, [TOOL])
    info = parser.extract_tool_calls(OUTPUT + "\nThat is all.", chat_request())
    assert info.tools_called is True
    (call,) = info.tool_calls
    assert call.id.startswith("chatcmpl-tool-")
    assert (call.type, call.function.name, call.function.arguments) == (
        "function",
        "get_weather",
        ARGUMENTS,
    )
    assert info.content == "Let me check.\n\nThat is all."
    assert parser.prev_tool_call_arr == [{"name": "get_weather", "arguments": ARGUMENTS}]


# -- adjust_request and the structural tag --------------------------------------------------


def test_adjust_request_keeps_special_tokens(tokenizer: Any) -> None:
    request = chat_request()
    assert request.skip_special_tokens is None
    assert Adapter(tokenizer).adjust_request(request) is request
    assert request.model_dump()["skip_special_tokens"] is False
    untouched = chat_request("none")
    Adapter(tokenizer).adjust_request(untouched)
    assert untouched.skip_special_tokens is None


class RefusingParser(JsonTagParser):
    """Reads no calls with any tokenizer, as ``auto`` does when it derived no format."""

    name = "refusing"

    @classmethod
    def tools_refused(cls, vocabulary: Vocabulary) -> str | None:
        return "the chat template renders no tool calls"


def test_a_parser_that_reads_no_calls_refuses_requests_that_could_call(tokenizer: Any) -> None:
    adapter = adapter_for(RefusingParser)
    for choice in ("auto", "required"):
        with pytest.raises(VLLMValidationError) as raised:
            adapter(tokenizer).adjust_request(chat_request(choice))
        assert "reads no tool calls: the chat template renders no tool calls" in str(raised.value)
        assert raised.value.parameter == "tools"
    # Nothing to call: served as text.
    adapter(tokenizer).adjust_request(chat_request("none"))
    adapter(tokenizer).adjust_request(
        ChatCompletionRequest(model="test", messages=[{"role": "user", "content": "Hi"}])
    )


def test_structural_tag_for_required(tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "1")
    tag = Adapter(tokenizer).get_structural_tag(
        chat_request("required"), reasoning=False, strict_level=ToolStrictLevel.FUNCTION
    )
    assert isinstance(tag, xgrammar.StructuralTag)
    assert tag.format.type == "tags_with_separator"
    assert tag.format.at_least_one is True
    (item,) = tag.format.tags
    assert item.begin == f'{START}{{"name": "get_weather", "arguments": '
    xgrammar.Grammar.from_structural_tag(tag)  # compiles


def test_structural_tag_off_when_not_enforced(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "0")
    parser = Adapter(tokenizer)
    for choice in ("auto", "required", NAMED):
        assert parser.get_structural_tag(chat_request(choice), strict_level=2) is None


def test_structural_tag_through_vllm(
    composed: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "1")
    # auto with no strict tool gets a grammar only because the parser's default
    # level is FUNCTION: this shows default_tool_strict_level reaches vLLM
    request = chat_request("auto")
    composed(tokenizer, [TOOL]).adjust_request(request)
    tag = json.loads(request.structured_outputs.structural_tag)
    assert tag["format"]["type"] == "triggered_tags"
    assert tag["format"]["triggers"] == [START]
    assert request.skip_special_tokens is False

    named = chat_request(NAMED, parallel_tool_calls=False)
    composed(tokenizer, [TOOL]).adjust_request(named)
    tag = json.loads(named.structured_outputs.structural_tag)
    assert tag["format"]["type"] == "tags_with_separator"
    assert tag["format"]["stop_after_first"] is True


def test_structural_tag_not_applied_when_not_enforced(
    composed: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "0")
    for choice in ("auto", "required", NAMED):
        request = chat_request(choice)
        composed(tokenizer, [TOOL]).adjust_request(request)
        assert request.structured_outputs is None
        assert request.skip_special_tokens is False


def test_structural_tag_errors_give_none(
    tokenizer: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "1")

    class BadTag(JsonTagParser):
        def structural_tag(self, plan: Plan) -> dict[str, Any] | None:
            return {"type": "no_such_format"}

    with caplog.at_level(logging.ERROR, logger="toolcall"):
        tag = adapter_for(BadTag)(tokenizer).get_structural_tag(
            chat_request("required"), strict_level=0
        )
    assert tag is None
    (record,) = [record for record in caplog.records if record.name == "toolcall"]
    assert "could not build a structural tag" in record.getMessage()


# -- failures ---------------------------------------------------------------------------


class ExplodingStream(JsonTagStream):
    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        if "BOOM" in text:
            raise RuntimeError("stream bug")
        return super().feed(text, token_ids)


class ExplodingParser(JsonTagParser):
    name = "tc_exploding"

    def stream(self) -> JsonTagStream:
        return ExplodingStream(self)


def test_a_failing_stream_passes_the_rest_through(
    tokenizer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    parser = adapter_for(ExplodingParser)(tokenizer, [TOOL])
    request = chat_request()
    pieces = ["Hello ", "BOOM", " and ", CALL]
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        messages = [
            parser.extract_tool_calls_streaming("", piece, piece, [], [], [], request)
            for piece in pieces
        ]
        assert parser.finish_streaming() is None
    assert [message.content for message in messages] == pieces
    (record,) = [record for record in caplog.records if record.name == "toolcall"]
    assert "RuntimeError: stream bug" in record.getMessage()


class LeakyStream(JsonTagStream):
    """Breaks the delta contract: releases the start marker as content."""

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        return [Delta(content=text)] if text else []

    def finish(self) -> list[Delta]:
        return []


class LeakyParser(JsonTagParser):
    name = "tc_leaky"

    def stream(self) -> JsonTagStream:
        return LeakyStream(self)


@pytest.mark.parametrize(("parser_class", "broken"), [(JsonTagParser, False), (LeakyParser, True)])
def test_contract_checking_at_run_time(
    tokenizer: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    parser_class: type[Parser],
    broken: bool,
) -> None:
    monkeypatch.setenv("TOOLCALL_CHECK_CONTRACT", "1")
    parser = adapter_for(parser_class)(tokenizer, [TOOL])
    request = chat_request()
    with caplog.at_level(logging.ERROR, logger="toolcall"):
        for text, ids in token_steps(tokenizer, OUTPUT):
            parser.extract_tool_calls_streaming("", text, text, [], ids, ids, request)
        parser.finish_streaming()
    lines = [
        record.getMessage()
        for record in caplog.records
        if record.name == "toolcall" and "delta contract" in record.getMessage()
    ]
    assert bool(lines) is broken
    if broken:
        assert any(f"'{LeakyParser.name}'" in line and "§4.4" in line for line in lines)


# -- content after a call's last fragment (vLLM's Responses stream) ----------------------


class LateContentStream(JsonTagStream):
    """A call announced in one step whose last fragment, content and another call come in
    the next step, in that order (as GLM's repeated key pair after a call's "}")."""

    def feed(self, text: str, token_ids: Sequence[int] = ()) -> list[Delta]:
        if text == "open":
            head = ToolCallDelta(0, self.parser.new_call_id(), "get_weather", '{"city": ')
            return [Delta(tool_calls=(head,))]
        if text == "close":
            return [
                Delta(tool_calls=(ToolCallDelta(0, arguments='"Paris"}'),)),
                Delta(content="after"),
                Delta(tool_calls=(ToolCallDelta(1, self.parser.new_call_id(), "get_time", "{}"),)),
            ]
        return [Delta(content=text)] if text else []

    def finish(self) -> list[Delta]:
        return []


class LateContentParser(JsonTagParser):
    name = "tc_late_content"

    def stream(self) -> JsonTagStream:
        return LateContentStream(self)


def test_content_after_a_calls_fragment_waits_for_the_next_message(tokenizer: Any) -> None:
    """vLLM's Responses stream splits a message into its content first and its tool calls
    after (split_delta) and closes the open function call at that content: a fragment of
    that call in the same message would come after it and break the stream."""
    from vllm.entrypoints.openai.responses.streaming_events import split_delta

    parser = adapter_for(LateContentParser)(tokenizer, [TOOL])
    request = chat_request()
    messages = [
        parser.extract_tool_calls_streaming("", step, step, [], [], [], request)
        for step in ("open", "close")
    ]
    messages.append(parser.finish_streaming())
    assert [dumped([m])[0] for m in messages[1:]] == [
        {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
        {
            "content": "after",
            "tool_calls": [
                {
                    "index": 1,
                    "id": entries_of(messages)[2]["id"],
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                }
            ],
        },
    ]
    # In the order vLLM's Responses stream handles them, a fragment always continues the
    # function call item still open: content closes it.
    open_item: int | None = None
    for message in messages:
        for part in split_delta(message):
            if part.content:
                open_item = None
            for entry in part.tool_calls or ():
                if entry.id is not None:
                    open_item = entry.index
                else:
                    assert entry.index == open_item
