"""Parity of the strictness resolver with vLLM 0.33 itself, over the whole grid.

For every grid point a real ``ChatCompletionRequest`` goes through vLLM's own
``ParserManager.get_parser`` composition and ``DelegatingParser.adjust_request``
(the renderer's call, which runs ``_apply_structural_tag``), with a probe
``ToolParser`` whose ``structural_tag_model`` is a probe key. The probe records
each ``get_structural_tag`` call (the strict level, the ``tool_choice`` vLLM asks
for) and lets vLLM's base method run; the builder registered for the probe key
records what ``resolve_tool_strictness`` and xgrammar's ``normalize_tool_choice``
hand it (the allowed tools with ``strict`` pinned, the simplified choice) and
returns a real ``xgrammar.StructuralTag`` without ``stop_after_first``, so what
``limit_to_single_tool_call`` does shows in the tag vLLM finally attaches.

``VLLM_ENFORCE_STRICT_TOOL_CALLING`` is read by vLLM when a ``ToolParser``
subclass is created and again per request, so the probe class is created after
the variable is set, once per grid slice.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from toolcall.strictness import Obligation, Plan, enforce_from_env, resolve_plan
from toolcall.types import Request, StrictLevel

pytest.importorskip("vllm", reason="the parity test needs vLLM 0.33 (the vllm nox session)")

from vllm import envs
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.exceptions import VLLMValidationError
from vllm.parser.parser_manager import ParserManager
from vllm.tool_parsers import ToolParser, ToolParserManager
from vllm.tool_parsers import structural_tag_registry as registry
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
from xgrammar import StructuralTag
from xgrammar.structural_tag import (
    JSONSchemaFormat,
    TagFormat,
    TagsWithSeparatorFormat,
    TriggeredTagsFormat,
)

pytestmark = pytest.mark.vllm

ENV = "VLLM_ENFORCE_STRICT_TOOL_CALLING"
PROBE_PARSER = "toolcall_strictness_probe"
PROBE_MODEL = "toolcall-strictness-probe"

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OUTPUT_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}
ABSENT = object()

TOOL_CHOICES: dict[str, Any] = {
    "auto": "auto",
    "absent": ABSENT,
    "required": "required",
    "named-first": {"type": "function", "function": {"name": "first"}},
    "named-second": {"type": "function", "function": {"name": "second"}},
    "none": "none",
    "null": None,
}
CLI_LEVELS: tuple[str | None, ...] = (None, "auto", "function", "parameter")
STRICTNESS: tuple[Any, ...] = (ABSENT, True, False)
#: Every ordered pair of per-tool ``strict`` values: all absent / true / false,
#: and every mix (true+absent, true+false, false+absent, both orders).
TOOL_SETS = tuple(itertools.product(STRICTNESS, repeat=2))
PARALLEL: tuple[Any, ...] = (True, False, ABSENT, None)
DEFAULT_LEVELS = {"hermes-like": ToolStrictLevel.AUTO, "glm-like": ToolStrictLevel.FUNCTION}
#: 7 x 4 x 9 x 4 = 1008 points per slice; 8 slices (variable on/off x parser default
#: AUTO/FUNCTION x structured output or not) make 8064.
SLICE_SIZE = len(TOOL_CHOICES) * len(CLI_LEVELS) * len(TOOL_SETS) * len(PARALLEL)

SIMPLIFIED = {
    "auto": Obligation.OPTIONAL,
    "required": Obligation.AT_LEAST_ONE,
    "forced": Obligation.NAMED,
}


@dataclass
class Recorder:
    """What vLLM handed the probe during one ``adjust_request``."""

    tag_calls: list[tuple[int, Any]] = field(default_factory=list)
    builds: list[tuple[list[tuple[str, bool | None]], str]] = field(default_factory=list)

    def clear(self) -> None:
        self.tag_calls.clear()
        self.builds.clear()


def probe_builder(recorder: Recorder) -> registry.StructuralTagBuilder:
    def build(
        function_tools: list[Any],
        builtin_tools: list[Any],
        tool_choice: str,
        reasoning: bool,
        token_suffix: str,
    ) -> StructuralTag:
        recorder.builds.append(
            ([(tool.function.name, tool.function.strict) for tool in function_tools], tool_choice)
        )
        tags = [
            TagFormat(
                begin=f"<call>{tool.function.name}:",
                content=JSONSchemaFormat(
                    json_schema=registry.get_function_parameters(tool.function)
                ),
                end="</call>",
            )
            for tool in function_tools
        ]
        if tool_choice == "auto":
            return StructuralTag(format=TriggeredTagsFormat(triggers=["<call>"], tags=tags))
        return StructuralTag(
            format=TagsWithSeparatorFormat(tags=tags, separator="", at_least_one=True)
        )

    return build


def probe_class(default_level: ToolStrictLevel, recorder: Recorder) -> type[ToolParser]:
    """A fresh ``ToolParser`` subclass: vLLM's ``__init_subclass__`` reads the
    environment variable now."""

    def get_structural_tag(
        self: ToolParser,
        request: Any,
        *,
        reasoning: bool = False,
        strict_level: ToolStrictLevel = ToolStrictLevel.AUTO,
    ) -> Any:
        recorder.tag_calls.append((int(strict_level), request.tool_choice))
        return ToolParser.get_structural_tag(
            self, request, reasoning=reasoning, strict_level=strict_level
        )

    return type(
        "Probe",
        (ToolParser,),
        {
            "structural_tag_model": PROBE_MODEL,
            "default_tool_strict_level": default_level,
            "get_structural_tag": get_structural_tag,
        },
    )


def body(
    choice: Any, strictness: tuple[Any, Any], parallel: Any, structured: bool
) -> dict[str, Any]:
    tools = []
    for name, strict in zip(("first", "second"), strictness, strict=True):
        function: dict[str, Any] = {"name": name, "parameters": SCHEMA}
        if strict is not ABSENT:
            function["strict"] = strict
        tools.append({"type": "function", "function": function})
    data: dict[str, Any] = {
        "model": "probe",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": tools,
    }
    if choice is not ABSENT:
        data["tool_choice"] = choice
    if parallel is not ABSENT:
        data["parallel_tool_calls"] = parallel
    if structured:
        data["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": OUTPUT_SCHEMA},
        }
    return data


def grid(structured: bool) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
    for (label, choice), cli, strictness, parallel in itertools.product(
        TOOL_CHOICES.items(), CLI_LEVELS, TOOL_SETS, PARALLEL
    ):
        point = f"{label} cli={cli} strict={strictness} parallel={parallel}"
        yield (
            point.replace(repr(ABSENT), "absent"),
            cli,
            body(choice, strictness, parallel, structured),
        )


def adjust_request(parser_cls: Any, request: Any) -> None:
    """The renderer's call (``online_renderer.py:864-877``), in place. The tokenizer
    is ``None``: neither the probe nor ``DelegatingParser`` reads it here."""
    parser_cls(None, request.tools).adjust_request(request)


def list_formats(node: Any) -> Iterator[dict[str, Any]]:
    """The tool-call list formats of a dumped tag (those vLLM limits to one call)."""
    if isinstance(node, dict):
        if node.get("type") in ("triggered_tags", "token_triggered_tags", "tags_with_separator"):
            yield node
        for value in node.values():
            yield from list_formats(value)
    elif isinstance(node, list):
        for item in node:
            yield from list_formats(item)


def disagreements(ours: Plan, ours_if_enforced: Plan, recorder: Recorder, tag: Any) -> list[str]:
    """How vLLM's decision differs from ``ours`` (empty when they agree)."""
    found = []
    grammar = tag is not None
    if ours.grammar != grammar:
        found.append(f"grammar: ours {ours.grammar}, vLLM {grammar}")
    # vLLM asks the parser for a tag whenever resolve_tool_strictness says one
    # applies; only the base method then looks at the environment variable.
    asked = bool(recorder.tag_calls)
    if ours_if_enforced.grammar != asked:
        found.append(f"get_structural_tag called: ours {ours_if_enforced.grammar}, vLLM {asked}")
    for level, choice in recorder.tag_calls:
        if level != int(ours.level):
            found.append(f"level: ours {ours.level!r}, vLLM {ToolStrictLevel(level)!r}")
        if ours.or_structured_output and choice != "required":
            found.append(f"auto with structured output asked the tag for {choice!r}")
    if grammar != bool(recorder.builds):
        found.append(f"grammar {grammar} but builder calls {recorder.builds}")
    for tools, choice in recorder.builds:
        pinned = [(entry.tool.name, entry.pinned) for entry in ours.tools]
        if tools != pinned:
            found.append(f"tools: ours {pinned}, vLLM {tools}")
        if SIMPLIFIED[choice] is not ours.obligation:
            found.append(f"obligation: ours {ours.obligation}, vLLM {choice!r}")
        if choice == "forced" and [name for name, _ in tools] != [ours.named]:
            found.append(f"named: ours {ours.named}, vLLM {tools}")
    if grammar:
        formats = list(list_formats(tag["format"]))
        limited = bool(formats) and all(node["stop_after_first"] for node in formats)
        if limited != ours.at_most_one:
            found.append(f"at_most_one: ours {ours.at_most_one}, vLLM stop_after_first {limited}")
        ored = tag["format"]["type"] == "or"
        if ored != ours.or_structured_output:
            found.append(f"or_structured_output: ours {ours.or_structured_output}, vLLM {ored}")
    return found


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setitem(
        registry._VLLM_STRUCTURAL_TAG_REGISTRY, PROBE_MODEL, probe_builder(recorder)
    )
    return recorder


@pytest.mark.parametrize("structured", [False, True], ids=["plain", "structured-output"])
@pytest.mark.parametrize("default", list(DEFAULT_LEVELS), ids=list(DEFAULT_LEVELS))
@pytest.mark.parametrize("enforce", [True, False], ids=["enforce-on", "enforce-off"])
def test_parity_with_vllm(
    monkeypatch: pytest.MonkeyPatch,
    recorder: Recorder,
    enforce: bool,
    default: str,
    structured: bool,
) -> None:
    if enforce:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, "0")
    assert envs.VLLM_ENFORCE_STRICT_TOOL_CALLING is enforce
    assert enforce_from_env() is enforce

    default_level = DEFAULT_LEVELS[default]
    probe = probe_class(default_level, recorder)
    # __init_subclass__ read the variable when the class was created.
    assert probe.supports_required_and_named is (not enforce)
    monkeypatch.setitem(ToolParserManager.tool_parsers, PROBE_PARSER, probe)

    failures: list[str] = []
    points = grammars = limited = ored = 0
    for point, cli, data in grid(structured):
        parser_cls = ParserManager.get_parser(
            tool_parser_name=PROBE_PARSER, enable_auto_tools=True, tool_strict_level=cli
        )
        assert parser_cls is not None
        vllm_request = ChatCompletionRequest.model_validate(copy.deepcopy(data))
        recorder.clear()
        adjust_request(parser_cls, vllm_request)
        attached = vllm_request.structured_outputs
        tag = (
            json.loads(attached.structural_tag)
            if attached is not None and attached.structural_tag is not None
            else None
        )

        request = Request.from_openai(data)
        options: dict[str, Any] = {
            "strict_level": None if cli is None else StrictLevel.from_name(cli),
            "default_level": StrictLevel(int(default_level)),
            "structured_output": structured,
        }
        ours = resolve_plan(request, enforce=enforce_from_env(), **options)
        ours_if_enforced = resolve_plan(request, enforce=True, **options)
        failures += [
            f"{point}: {problem}"
            for problem in disagreements(ours, ours_if_enforced, recorder, tag)
        ]
        points += 1
        if tag is not None:
            grammars += 1
            limited += any(node["stop_after_first"] for node in list_formats(tag["format"]))
            ored += tag["format"]["type"] == "or"

    assert points == SLICE_SIZE
    assert not failures, "\n".join(failures[:40])
    # The slice is not vacuous: vLLM attached a grammar to some points and not to others
    # (with the variable off, to none), limited some to one call, and OR-ed the
    # structured output in where there was one.
    if enforce:
        assert 0 < grammars < points
        assert 0 < limited < grammars
        assert (ored > 0) is structured
    else:
        assert grammars == 0


@pytest.mark.parametrize(
    "value", ["True", "true", "TRUE", "1", "0", "false", "", "yes", "on", " 1", "true ", "2"]
)
def test_enforce_env_parsed_like_vllm(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(ENV, value)
    assert enforce_from_env() is envs.VLLM_ENFORCE_STRICT_TOOL_CALLING


def test_enforce_env_unset_like_vllm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert enforce_from_env() is envs.VLLM_ENFORCE_STRICT_TOOL_CALLING is True


def test_named_tool_missing_is_rejected_by_both() -> None:
    data = body({"type": "function", "function": {"name": "third"}}, (True, True), True, False)
    with pytest.raises(VLLMValidationError, match="does not match"):
        ChatCompletionRequest.model_validate(copy.deepcopy(data))
    with pytest.raises(ValueError, match="'third'"):
        resolve_plan(Request.from_openai(data))


def test_named_tool_declared_twice_is_rejected_by_both(
    monkeypatch: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    probe = probe_class(ToolStrictLevel.AUTO, recorder)
    monkeypatch.setitem(ToolParserManager.tool_parsers, PROBE_PARSER, probe)
    parser_cls = ParserManager.get_parser(tool_parser_name=PROBE_PARSER, enable_auto_tools=True)
    assert parser_cls is not None
    data = body({"type": "function", "function": {"name": "first"}}, (True, False), True, False)
    data["tools"][1]["function"]["name"] = "first"
    vllm_request = ChatCompletionRequest.model_validate(data)
    with pytest.raises(ValueError, match="exactly one tool"):
        adjust_request(parser_cls, vllm_request)
    with pytest.raises(ValueError, match="2 tools"):
        resolve_plan(Request.from_openai(data))
