"""The same cases through vLLM's built-in parser of the same name (``--against-vllm``).

Each built-in is driven through vLLM 0.33's own ``DelegatingParser`` (composed the way
``ParserManager.get_parser`` composes it, with no reasoning parser), so it gets exactly
the input the server gives it:

* non-streaming: ``DelegatingParser.parse(text, request, enable_auto_tools=True)``, which
  calls the tool parser's ``extract_tool_calls`` and applies the serving layer's rules
  (a legacy parser that reports no call gets the original text back as content; an
  engine-based one its own content);
* streaming: ``parse_delta(delta_text, delta_token_ids, request, prompt_token_ids=[],
  finished=...)`` per step, which hands legacy parsers (hermes) the accumulated
  ``previous_text``/``current_text`` and token ids and appends
  ``get_remaining_unstreamed_args()`` to the final delta, and engine-based ones (glm45,
  glm47: ``engine_based_streaming``) delta-only input and ``finish_streaming()``.

The request is a real ``ChatCompletionRequest`` built from the case's request, and the
tokenizer the real one (a transformers object) for the case. The built-in class comes
from vLLM's table of lazy registrations (``vllm.tool_parsers._TOOL_PARSERS_TO_REGISTER``),
so it is vLLM's own even when a toolcall plugin has replaced the name in the manager.

The results are compared with ``expected`` by the same rules as ours (except the named
recoveries: the built-ins record no events), and each streamed
call's first delta is checked for an index, an id, type ``function`` and its name
(what Chat, Responses and Anthropic streaming need). The chat layer's later filters
(``keeps_tool_calls``, ``parallel_tool_calls``) are not applied, to ours or to vLLM's.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolcall import Parsed, ToolCall
from toolcall_conformance.cases import case_tokenizer
from toolcall_conformance.checks import (
    STREAM_CHECKS,
    CheckResult,
    Split,
    case_splits,
    plan_checks,
)
from toolcall_conformance.compare import first_difference
from toolcall_conformance.tokenizers import RealTokenizer, get_tokenizer

if TYPE_CHECKING:
    from toolcall_conformance.cases import Case

__all__ = [
    "BASELINE_CHECKS",
    "DEFAULT_TOKENIZERS",
    "VllmBaseline",
    "VllmUnavailable",
    "baseline_name",
    "replay",
]

BASELINE_CHECKS = ("parse", *STREAM_CHECKS)

#: The tokenizer a text-only case (``tokenizer: null``) is parsed with, per parser name:
#: vLLM always builds its parsers with one.
DEFAULT_TOKENIZERS = {
    "hf": "qwen2.5",
    "hermes": "qwen2.5",
    "qwen3_json": "qwen2.5",
    "qwen3_coder": "qwen3",
    "qwen3_xml": "qwen3",
    "glm45": "glm4.5",
    "glm47": "glm4.5",
    "llama3_json": "llama3.1",
    "llama4_json": "llama4",
    "llama4_pythonic": "llama4",
    "pythonic": "llama3.1",
    "olmo3": "olmo3",
}


class VllmUnavailable(RuntimeError):
    """vLLM cannot be imported here."""


def baseline_name(parser_name: str) -> str:
    """How the built-in's results are labelled: ``vllm:NAME``."""
    return f"vllm:{parser_name}"


@dataclass(frozen=True)
class _Outcome:
    parsed: Parsed
    problem: str | None = None


class VllmBaseline:
    """vLLM's built-in tool parsers, loaded once per run."""

    def __init__(self) -> None:
        try:
            self._tool_parsers = importlib.import_module("vllm.tool_parsers")
            abstract = importlib.import_module("vllm.parser.abstract_parser")
            protocol = importlib.import_module("vllm.entrypoints.openai.chat_completion.protocol")
            self.version = str(importlib.import_module("vllm").__version__)
        except Exception as error:
            msg = (
                f"--against-vllm needs vLLM 0.33 importable in this environment "
                f"({type(error).__name__}: {error})"
            )
            raise VllmUnavailable(msg) from error
        self._delegating: type[Any] = abstract.DelegatingParser
        self._request_class: type[Any] = protocol.ChatCompletionRequest
        self._table: dict[str, tuple[str, str]] = dict(self._tool_parsers._TOOL_PARSERS_TO_REGISTER)

    def has_builtin(self, name: str) -> bool:
        return name in self._table

    def builtin_class(self, name: str) -> type[Any]:
        """vLLM's own class for ``name``, from its table of lazy registrations."""
        module_name, class_name = self._table[name]
        module = importlib.import_module(f"vllm.tool_parsers.{module_name}")
        cls: type[Any] = getattr(module, class_name)
        return cls

    def run_case(self, name: str, case: Case) -> list[CheckResult]:
        """Run ``parse`` and the stream checks of ``case`` that repeat no other through the
        built-in ``name``."""
        label = baseline_name(name)
        return [
            self.run_check(name, case, entry.check, label)
            for entry in plan_checks(case, grammar=False)
            if entry.applicable and entry.check in BASELINE_CHECKS
        ]

    def run_check(self, name: str, case: Case, check: str, label: str = "") -> CheckResult:
        label = label or baseline_name(name)
        try:
            detail = self._check(name, case, check)
        except Exception as error:
            detail = f"raised {type(error).__name__}: {' '.join(str(error).split())}"
        return CheckResult(case.id, label, check, detail is None, detail or "")

    def _check(self, name: str, case: Case, check: str) -> str | None:
        parser_class = self.compose(self.builtin_class(name))
        tokenizer = self._tokenizer(name, case)
        request = self._request(case)
        if check == "parse":
            ids = [i for step in case.steps for i in (step.token_ids or ())]
            outcome = _parse(parser_class, tokenizer, request, case.text, ids)
            difference = first_difference(case.expected, outcome.parsed, recoveries=False)
            return None if difference is None else f"parse() differs from expected: {difference}"
        splits = case_splits(case, check)
        for split in splits:
            outcome = _stream(parser_class, tokenizer, request, split)
            problems = []
            difference = first_difference(case.expected, outcome.parsed, recoveries=False)
            if difference is not None:
                problems.append(f"stream differs from expected: {difference}")
            if outcome.problem is not None:
                problems.append(outcome.problem)
            if problems:
                where = f" in {split.describe()}" if len(splits) > 1 else ""
                return "; ".join(problems) + where
        return None

    def compose(self, tool_parser_class: type[Any]) -> type[Any]:
        """``tool_parser_class`` inside vLLM's ``DelegatingParser``, as
        ``ParserManager._compose_parser``'s default branch composes it (no reasoning
        parser); a response-template tool parser (``hf``) inside the parser of the whole
        message it stands for, as ``ParserManager`` composes that one. Build an instance
        per output with ``(tokenizer, request.tools)``; for a response-template parser the
        tokenizer carries the template (:meth:`vllm_tokenizer`)."""
        unified = getattr(tool_parser_class, "unified_parser_cls", None)
        if callable(unified):
            return type(
                f"Conformance{tool_parser_class.__name__}",
                (unified(),),
                {
                    "reasoning_parser_cls": None,
                    "tool_parser_cls": tool_parser_class,
                    "tool_strict_level": None,
                    "_enable_auto_tools": True,
                },
            )
        return type(
            f"Conformance{tool_parser_class.__name__}",
            (self._delegating,),
            {
                "reasoning_parser_cls": None,
                "tool_parser_cls": tool_parser_class,
                "tool_strict_level": None,
            },
        )

    def _tokenizer(self, name: str, case: Case) -> Any:
        if case.tokenizer is not None:
            return self._as_vllm(case_tokenizer(case), response_template=case.response_template)
        tokenizer_name = DEFAULT_TOKENIZERS.get(name)
        if tokenizer_name is None:
            msg = f"text-only case and no default tokenizer for vLLM's {name!r}"
            raise ValueError(msg)
        return self.vllm_tokenizer(tokenizer_name, response_template=case.response_template)

    def vllm_tokenizer(
        self, tokenizer_name: str, *, response_template: Mapping[str, Any] | None = None
    ) -> Any:
        """The real tokenizer ``tokenizer_name`` as the object vLLM builds parsers with
        (carrying ``response_template`` as a checkpoint's ``tokenizer_config.json`` would)."""
        return self._as_vllm(get_tokenizer(tokenizer_name), response_template=response_template)

    def _as_vllm(
        self, tokenizer: RealTokenizer, *, response_template: Mapping[str, Any] | None = None
    ) -> Any:
        if tokenizer.tokenizer_json_path is None:
            # mistral-common: vLLM wraps transformers' MistralCommonBackend (over the same
            # file) in its own MistralTokenizer, as --tokenizer-mode mistral does.
            mistral = importlib.import_module("vllm.tokenizers.mistral")
            backend = importlib.import_module("transformers.tokenization_mistral_common")
            path = tokenizer.hf_tokenizer.instruct_tokenizer.tokenizer.file_path
            return mistral.MistralTokenizer(backend.MistralCommonBackend(tokenizer_path=str(path)))
        if response_template is None:
            return tokenizer.hf_tokenizer
        # A copy: the shared tokenizer is left alone.
        carrying = copy.copy(tokenizer.hf_tokenizer)
        carrying.response_template = dict(response_template)
        return carrying

    def _request(self, case: Case) -> Any:
        return self.chat_request(case.request)

    def chat_request(self, request: Mapping[str, Any]) -> Any:
        """A real ``ChatCompletionRequest`` with the ``tools``, ``tool_choice`` and
        ``parallel_tool_calls`` of ``request`` (an OpenAI request body or part of one)."""
        body: dict[str, Any] = {
            "model": "toolcall-conformance",
            "messages": [{"role": "user", "content": "(conformance case)"}],
        }
        for key in ("tools", "tool_choice", "parallel_tool_calls"):
            if key in request and not (key == "tools" and not request[key]):
                body[key] = request[key]
        return self._request_class.model_validate(body)


def _parse(
    parser_class: type[Any], tokenizer: Any, request: Any, text: str, ids: Sequence[int]
) -> _Outcome:
    parser = parser_class(tokenizer, request.tools)
    _reasoning, content, calls = parser.parse(
        text, request, enable_auto_tools=True, model_output_token_ids=list(ids)
    )
    tool_calls = tuple(
        ToolCall(id=call.id or "", name=call.name, arguments=call.arguments) for call in calls or ()
    )
    return _Outcome(_parsed(content, tool_calls))


def replay(
    parser: Any,
    request: Any,
    steps: Sequence[str],
    token_ids: Sequence[list[int]] | None = None,
) -> list[Any]:
    """Stream ``steps`` through a composed parser (see :meth:`VllmBaseline.compose`) as
    vLLM's chat stream does: one ``parse_delta`` per step, ``finished`` on the last.

    ``token_ids`` holds each step's ids as a list (vLLM concatenates them for legacy
    parsers). Returns what each call returned (a ``DeltaMessage`` or ``None``).
    """
    last = len(steps) - 1
    return [
        parser.parse_delta(
            text,
            token_ids[number] if token_ids is not None else [],
            request,
            prompt_token_ids=[],
            finished=number == last,
        )
        for number, text in enumerate(steps)
    ]


def _stream(parser_class: type[Any], tokenizer: Any, request: Any, split: Split) -> _Outcome:
    token_ids = None if split.token_ids is None else [list(ids) for ids in split.token_ids]
    deltas = replay(parser_class(tokenizer, request.tools), request, split.steps, token_ids)
    content: list[str] = []
    names: dict[int, str] = {}
    ids: dict[int, str] = {}
    arguments: dict[int, list[str]] = {}
    problems: list[str] = []
    for number, delta in enumerate(deltas):
        if delta is None:
            continue
        if delta.content:
            content.append(delta.content)
        for entry in delta.tool_calls or ():
            function = entry.function
            name = function.name if function is not None else None
            fragment = (function.arguments if function is not None else None) or ""
            if entry.index not in names:
                missing = [
                    what
                    for what, ok in (
                        ("id", bool(entry.id)),
                        ("type 'function'", entry.type == "function"),
                        ("name", bool(name)),
                    )
                    if not ok
                ]
                if missing and not problems:
                    problems.append(
                        f"call {entry.index}: its first delta (step {number}) lacks "
                        f"{', '.join(missing)}"
                    )
                if entry.index != len(names) and not problems:
                    problems.append(
                        f"call index {entry.index} at step {number} after {len(names)} call(s)"
                    )
                names[entry.index] = name or ""
                ids[entry.index] = entry.id or ""
                arguments[entry.index] = []
            elif name and not problems:
                problems.append(f"call {entry.index}: name sent again at step {number}")
            if fragment:
                arguments[entry.index].append(fragment)
    calls = tuple(
        ToolCall(id=ids[index], name=names[index], arguments="".join(arguments[index]))
        for index in sorted(names)
    )
    text = "".join(content)
    problem = f"streaming: {problems[0]}" if problems else None
    return _Outcome(_parsed(text, calls), problem)


def _parsed(content: str | None, calls: tuple[ToolCall, ...]) -> Parsed:
    return Parsed(content=content if content and content.strip() else None, tool_calls=calls)
