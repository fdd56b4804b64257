"""Realistic outputs of a parser's format, sized in tokens of arguments.

Every output is the same turn: a sentence of content, then one ``write_file`` call
whose ``content`` argument is real Python source (the standard library's, cut at a
line end), as a model writes when it saves a file. The parser's family renders the
turn in its own format and its real tokenizer cuts it into vLLM-shaped deltas.

Where the format comes from (the convention a plugin satisfies without editing the
benchmark): the parser class may define

    @classmethod
    def example_output(cls, content: str, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str

returning the text a model of the family writes for ``content`` followed by ``calls``
(the chat template's assistant turn). Without it, the benchmark falls back to the
renderers of the conformance corpus scripts for the formats it knows
(:data:`CORPUS_RENDERERS`); any other parser is an error that says what to add.
The tokenizer is vLLM's default for the name in the conformance kit, else the one
the parser's shipped corpus is recorded with.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toolcall.parser import Parser
from toolcall_conformance.cases import shipped_case_dirs
from toolcall_conformance.tokenizers import RealTokenizer
from toolcall_conformance.vllm_baseline import DEFAULT_TOKENIZERS

__all__ = [
    "CONTENT",
    "CORPUS_RENDERERS",
    "HOOK",
    "REQUEST",
    "TOOL_NAME",
    "BenchError",
    "Feed",
    "Output",
    "Render",
    "arguments_of",
    "build_output",
    "build_output_of_bytes",
    "family_tokenizer",
    "kept_content",
    "metadata_for",
    "renderer_for",
    "renderers_of",
    "variants_of",
]

ROOT = Path(__file__).resolve().parents[2]

#: The parser class method a plugin defines to take part (see the module docstring).
HOOK = "example_output"

Render = Callable[[str, Sequence[tuple[str, Mapping[str, Any]]]], str]

TOOL_NAME = "write_file"
CONTENT = "I'll save the module now."
REQUEST: dict[str, Any] = {
    "tools": [
        {
            "type": "function",
            "function": {
                "name": TOOL_NAME,
                "description": "Write a text file, replacing it only if asked to",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "overwrite": {"type": "boolean"},
                    },
                    "required": ["path", "content"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a text file",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            },
        },
    ],
    "tool_choice": "auto",
}

#: Real code of some size, in a fixed order (CPython's own standard library).
_SOURCES = (
    "textwrap.py",
    "json/decoder.py",
    "json/encoder.py",
    "difflib.py",
    "argparse.py",
    "pathlib.py",
    "inspect.py",
    "typing.py",
    "tarfile.py",
    "pydoc.py",
    "email/_header_value_parser.py",
    "subprocess.py",
    "enum.py",
    "dataclasses.py",
    "collections/__init__.py",
)

#: Renderers of the conformance corpus scripts (conformance/corpus/), per parser name:
#: (script, function of the loaded module that gives the renderer).
CORPUS_RENDERERS: dict[str, tuple[str, Callable[[ModuleType], Render]]] = {
    "hermes": ("hermes.py", lambda module: module.qwen25_turn),
    "qwen3_json": ("hermes.py", lambda module: module.qwen25_turn),
    "glm45": ("glm.py", lambda module: module.glm46_turn),
    "pythonic": ("pythonic.py", lambda module: module.pythonic_turn),
    "olmo3": ("pythonic.py", lambda module: module.olmo3_turn),
    "qwen3_coder": ("qwen.py", lambda module: module.coder_turn),
    "qwen3_xml": ("qwen.py", lambda module: module.coder_turn),
    "deepseek_v3": ("deepseek.py", lambda module: module.v3_turn),
    "deepseek_v31": ("deepseek.py", lambda module: module.v31_turn),
    # xLAM's message is either its text or the JSON list of its calls, never both.
    "xlam": (
        "xlam.py",
        lambda module: lambda content, calls: module.qwen_turn(list(calls)) if calls else content,
    ),
    "glm47": (
        "glm.py",
        lambda module: (
            lambda content, calls: (
                content + "".join(module.glm47_call(name, arguments) for name, arguments in calls)
            )
        ),
    ),
}


#: Parsers measured once per generation of their format: (label, tokenizer, script, renderer).
#: Mistral's built-in takes its legacy path before v11 and vLLM's parser engine from v11 on.
VARIANTS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "mistral": (
        ("mistral pre-v11", "mistral-v3", "mistral.py", "pre_v11_turn"),
        ("mistral v11", "mistral-tekken-v11", "mistral.py", "v11_turn"),
    ),
}


@dataclass(frozen=True)
class Variant:
    """One way a parser is measured: its label, its outputs' renderer and tokenizer."""

    label: str
    render: Render
    source: str
    tokenizer: str


def renderers_of(name: str, parser_class: type[Parser]) -> list[tuple[str, Render, str]]:
    """How ``name``'s outputs are written: ``(label, renderer, source)``, once per
    generation of its format where :data:`VARIANTS` lists them, else once."""
    listed = VARIANTS.get(name)
    if listed is None:
        render, source = renderer_for(name, parser_class)
        return [(name, render, source)]
    found = []
    for label, _, script, function in listed:
        module = _load_script(ROOT / "conformance" / "corpus" / script)
        found.append((label, getattr(module, function), f"conformance/corpus/{script}"))
    return found


def variants_of(name: str, parser_class: type[Parser]) -> list[Variant]:
    """How ``name`` is measured: each of its renderers (:func:`renderers_of`) with the
    tokenizer :data:`VARIANTS` gives it, else the family's."""
    tokenizers = {label: tokenizer for label, tokenizer, _, _ in VARIANTS.get(name, ())}
    return [
        Variant(
            label, render, source, tokenizers.get(label) or family_tokenizer(name, parser_class)
        )
        for label, render, source in renderers_of(name, parser_class)
    ]


class BenchError(RuntimeError):
    """The benchmark cannot run as asked."""


@dataclass(frozen=True)
class Feed:
    """An output cut into deltas of ``tokens_per_delta`` tokens."""

    tokens_per_delta: int
    texts: tuple[str, ...]
    #: Each delta's ids as a list (what vLLM passes) and as a tuple (the core protocol).
    id_lists: tuple[list[int], ...]
    id_tuples: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Output:
    """One generated output, with what a correct parse of it contains."""

    text: str
    ids: tuple[int, ...]
    steps: tuple[str, ...]  # per-token deltas as vLLM's detokenizer releases them
    argument_tokens: int
    arguments: Mapping[str, Any]
    content: str  # what a correct parse gives as content (:func:`kept_content`)

    @property
    def tokens(self) -> int:
        return len(self.ids)

    def feed(self, tokens_per_delta: int) -> Feed:
        n = tokens_per_delta
        cuts = range(0, len(self.ids), n)
        ids = [list(self.ids[i : i + n]) for i in cuts]
        return Feed(
            tokens_per_delta=n,
            texts=tuple("".join(self.steps[i : i + n]) for i in cuts),
            id_lists=tuple(ids),
            id_tuples=tuple(tuple(chunk) for chunk in ids),
        )


def renderer_for(name: str, parser_class: type[Parser]) -> tuple[Render, str]:
    """The function that writes outputs of ``name``'s format, and where it comes from."""
    hook = getattr(parser_class, HOOK, None)
    if callable(hook):
        return hook, f"{parser_class.__module__}.{parser_class.__qualname__}.{HOOK}"
    known = CORPUS_RENDERERS.get(name)
    if known is None:
        msg = (
            f"parser {name!r} ({parser_class.__module__}.{parser_class.__qualname__}) has no "
            f"example output: define the classmethod {HOOK}(content, calls) -> str on it, "
            f"returning the text its model writes for that content and those "
            f"(name, arguments) calls"
        )
        raise BenchError(msg)
    script, pick = known
    path = ROOT / "conformance" / "corpus" / script
    return pick(_load_script(path)), f"conformance/corpus/{script}"


def metadata_for(parser_class: type[Parser]) -> dict[str, Any]:
    """The tokenizer metadata ``parser_class`` is run with: a format that is data (hf)
    defines the classmethod ``example_template()``, the ``response_template`` a
    checkpoint of its :data:`HOOK` output's format carries."""
    example_template = getattr(parser_class, "example_template", None)
    if callable(example_template):
        return {"response_template": example_template()}
    return {}


def family_tokenizer(name: str, parser_class: type[Parser]) -> str:
    """The name of the real tokenizer ``name``'s outputs are tokenized with."""
    default = DEFAULT_TOKENIZERS.get(name)
    if default is not None:
        return default
    for directory in shipped_case_dirs(parser_class.corpus or name):
        recorded = sorted(p.name for p in directory.iterdir() if p.is_dir())
        if recorded:
            return recorded[0]
    msg = f"no tokenizer known for parser {name!r}: it has no default and no shipped corpus"
    raise BenchError(msg)


def arguments_of(code: str) -> dict[str, Any]:
    return {"path": "src/example/module.py", "content": code, "overwrite": True}


def build_output(render: Render, tokenizer: RealTokenizer, argument_tokens: int) -> Output:
    """The shortest output whose arguments take at least ``argument_tokens`` tokens.

    Tokens of arguments: the output's tokens minus those of the same turn with ``{}``.
    """
    lines = _code_lines()
    base = len(tokenizer.encode(_turn(render, {})))

    def cost(count: int) -> int:
        return len(tokenizer.encode(_turn(render, arguments_of(_code(lines, count))))) - base

    count = _least(cost, argument_tokens, len(lines))
    arguments = arguments_of(_code(lines, count))
    text = _turn(render, arguments)
    ids = tokenizer.encode(text)
    steps = tokenizer.decode_steps(ids)
    if "".join(steps) != text:
        msg = f"tokenizer {tokenizer.name} does not decode the output back to its text"
        raise BenchError(msg)
    return Output(text, tuple(ids), tuple(steps), len(ids) - base, arguments, kept_content(render))


def build_output_of_bytes(render: Render, size: int) -> tuple[str, Mapping[str, Any], int]:
    """An output (text only) whose arguments' JSON takes at least ``size`` bytes."""
    lines = _code_lines()

    def cost(count: int) -> int:
        return len(json.dumps(arguments_of(_code(lines, count)), ensure_ascii=False).encode())

    count = _least(cost, size, len(lines))
    arguments = arguments_of(_code(lines, count))
    return _turn(render, arguments), arguments, cost(count)


def kept_content(render: Render) -> str:
    """The content a correct parse of a rendered turn gives: :data:`CONTENT`, or nothing
    for a format whose calls stand alone (xLAM: the message is the list of calls)."""
    calls = [(TOOL_NAME, {"path": "a.txt"})]
    return "" if render(CONTENT, calls) == render("", calls) else CONTENT


def _turn(render: Render, arguments: Mapping[str, Any]) -> str:
    return render(CONTENT, [(TOOL_NAME, arguments)])


def _code(lines: Sequence[str], count: int) -> str:
    return "".join(lines[:count]).rstrip()


def _least(cost: Callable[[int], int], target: int, available: int) -> int:
    """The least count in ``1..available`` with ``cost(count) >= target`` (``cost`` grows)."""
    high = 1
    while cost(high) < target:
        if high >= available:
            msg = f"not enough source text for {target} (have {cost(available)})"
            raise BenchError(msg)
        high = min(high * 2, available)
    low = high // 2  # cost(low) < target, or low == 0
    while high - low > 1:
        middle = (low + high) // 2
        if cost(middle) >= target:
            high = middle
        else:
            low = middle
    return high


@functools.cache
def _code_lines() -> tuple[str, ...]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    text = "".join((stdlib / name).read_text(encoding="utf-8") for name in _SOURCES)
    return tuple(text.splitlines(keepends=True))


@functools.cache
def _load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"toolcall_bench._corpus_{path.stem}", path)
    if spec is None or spec.loader is None:
        msg = f"cannot load {path}"
        raise BenchError(msg)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
