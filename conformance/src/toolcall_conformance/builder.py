"""Build conformance cases with real token ids.

:func:`build_case` takes a raw model output as text, encodes it with the real tokenizer (so
markers that are added tokens become their single ids, as the model emits them) and gives
every token its own step, with the text vLLM's detokenizer releases for it.
:func:`build_case_from_ids` does the same for recorded ids, and
:func:`build_case_under_grammar` for ids generated under the parser's own grammar
(``request.constrained``). Each returns a schema-valid case dict (checked before it is
returned), ready for :func:`toolcall_conformance.cases.write_case`.

The command ``toolcall conformance build`` is :func:`add_build_arguments` + :func:`run_build`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolcall import Parser, ParserContext, Registry, Request, StrictLevel, Vocabulary
from toolcall.strictness import resolve_plan
from toolcall_conformance import __version__
from toolcall_conformance.cases import (
    NEEDS_REVIEW,
    SCHEMA_ID,
    CaseError,
    dumps_case,
    validate_case_data,
    write_case,
)
from toolcall_conformance.tokenizers import TOKENIZER_NAMES, RealTokenizer, get_tokenizer

__all__ = [
    "BUILDER_VERSION",
    "BuildError",
    "Place",
    "add_build_arguments",
    "at",
    "at_end",
    "build_case",
    "build_case_from_ids",
    "build_case_under_grammar",
    "build_corpus_case",
    "expected_parse",
    "request_body",
    "run_build",
    "strict_tool",
    "write_corpus",
]

#: Recorded in ``extra.builder`` of every case built here.
BUILDER_VERSION = 1

PROVENANCE_KINDS = ("recorded", "wild", "template", "constructed")


class BuildError(ValueError):
    """The inputs cannot make a faithful case (the message says why and what to do)."""


def build_case(
    *,
    tokenizer: str,
    parser: str,
    text: str,
    request: Mapping[str, Any],
    provenance: Mapping[str, Any],
    expected: Mapping[str, Any] | None,
    finish_reason: str = "stop",
    case_id: str,
) -> dict[str, Any]:
    """A case for the raw output ``text`` (without the stop token that ended it).

    ``expected=None`` writes an empty expected parse and marks it for review
    (``extra.needs_review``). Raises :class:`BuildError` if the text holds a stop token or
    does not come back unchanged through the tokenizer and vLLM's detokenizer (a Qwen text
    not in NFC, a character tekken splits across tokens), and
    :class:`~toolcall_conformance.cases.CaseError` if the result is not a valid case.
    """
    real = get_tokenizer(tokenizer)
    ids = real.encode(text)
    stops = [i for i in ids if i in real.stop_token_ids]
    if stops:
        name = real.special_id_texts().get(stops[0], str(stops[0]))
        msg = (
            f"the text contains the stop token {name} ({stops[0]}); generation ends there and "
            "vLLM does not pass it to the parser: give the text before it"
        )
        raise BuildError(msg)
    steps = real.decode_steps(ids)
    decoded = "".join(steps)
    if decoded != text:
        at = next(
            (i for i, (a, b) in enumerate(zip(decoded, text, strict=False)) if a != b),
            min(len(decoded), len(text)),
        )
        msg = (
            f"the text does not survive {tokenizer} and vLLM's detokenizer unchanged: from "
            f"character {at} it reads {text[at : at + 20]!r}, the parser would see "
            f"{decoded[at : at + 20]!r}"
            + (" (Qwen normalises text to NFC)" if tokenizer in ("qwen2.5", "qwen3") else "")
            + "; build from recorded ids instead (build_case_from_ids)"
        )
        raise BuildError(msg)
    return _assemble(
        real,
        parser=parser,
        case_id=case_id,
        grouped=[[i] for i in ids],
        request=request,
        provenance=provenance,
        expected=expected,
        finish_reason=finish_reason,
    )


def build_case_from_ids(
    *,
    tokenizer: str,
    parser: str,
    token_ids: Sequence[int] | Sequence[Sequence[int]],
    request: Mapping[str, Any],
    provenance: Mapping[str, Any],
    expected: Mapping[str, Any] | None,
    finish_reason: str = "stop",
    case_id: str,
) -> dict[str, Any]:
    """A case for recorded ids: a flat list (one step per token) or a list of engine steps.

    A stop token at the very end is dropped (vLLM does not pass it to the parser) and then
    requires ``finish_reason="stop"``; a stop token anywhere else is an error.
    """
    real = get_tokenizer(tokenizer)
    grouped: list[list[int]] = [
        [item] if isinstance(item, int) else [int(i) for i in item] for item in token_ids
    ]
    while grouped and not grouped[-1]:
        grouped.pop()
    if grouped and grouped[-1][-1] in real.stop_token_ids:
        if finish_reason != "stop":
            msg = "the ids end with a stop token, so finish_reason must be 'stop'"
            raise BuildError(msg)
        grouped[-1] = grouped[-1][:-1]
        if not grouped[-1]:
            grouped.pop()
    flat = [i for step in grouped for i in step]
    stops = [i for i in flat if i in real.stop_token_ids]
    if stops:
        msg = (
            f"stop token {stops[0]} in the middle of the output: generation would have ended there"
        )
        raise BuildError(msg)
    outside = [i for i in flat if not 0 <= i < real.model_vocab_size]
    if outside:
        msg = f"id {outside[0]} is outside {tokenizer}'s vocabulary ({real.model_vocab_size} ids)"
        raise BuildError(msg)
    return _assemble(
        real,
        parser=parser,
        case_id=case_id,
        grouped=grouped,
        request=request,
        provenance=provenance,
        expected=expected,
        finish_reason=finish_reason,
    )


def build_case_under_grammar(
    parser_class: type[Parser],
    *,
    tokenizer: str,
    text: str,
    request: Mapping[str, Any],
    provenance: Mapping[str, Any],
    expected: Mapping[str, Any] | None,
    case_id: str,
    seed: str,
    response_template: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``request.constrained`` case: ``text`` generated under the structural tag that
    ``parser_class`` builds for ``request`` at the request's own strict level (else the
    parser's default), token by token (:func:`toolcall_conformance.constrained.
    generate_under_grammar`, seeded with ``seed``), ending on a stop token.
    ``response_template`` is the template a data-driven parser (``hf``) reads, carried in
    the vocabulary's metadata as the case carries it.

    ``provenance.notes`` records how the ids were made. Raises :class:`BuildError` when no
    grammar applies to the request or the text cannot be generated under it.
    """
    from toolcall_conformance.constrained import (  # noqa: PLC0415 - needs xgrammar
        GenerationError,
        generate_under_grammar,
    )

    real = get_tokenizer(tokenizer)
    view = Request.from_openai(dict(request))
    own = request.get("strict_level")
    plan = resolve_plan(
        view,
        strict_level=StrictLevel.from_name(own) if isinstance(own, str) else None,
        default_level=parser_class.default_strict_level,
    )
    metadata = {} if response_template is None else {"response_template": response_template}
    vocabulary = Vocabulary(special_tokens=real.special_tokens, metadata=metadata)
    context = ParserContext(request=view, vocabulary=vocabulary)
    tag = parser_class(context).structural_tag(plan) if plan.grammar else None
    if tag is None:
        msg = f"{parser_class.name} applies no grammar to this request at its own strict level"
        raise BuildError(msg)
    try:
        ids = generate_under_grammar(tag, real, text, seed=seed)
    except GenerationError as error:
        raise BuildError(f"{case_id}: {error}") from error
    how = (
        "token ids generated under the grammar: at each step one of the tokens that the "
        f"structural tag of {parser_class.name} for this request (strict level "
        f"{plan.level.name.lower()}, compiled by xgrammar against the real tokenizer) allows "
        "and that continue the text, chosen by toolcall_conformance.constrained."
        f"generate_under_grammar with seed {seed!r}"
    )
    notes = provenance.get("notes")
    case = build_case_from_ids(
        tokenizer=tokenizer,
        parser=parser_class.name,
        token_ids=ids,
        request={**request, "constrained": True},
        provenance={**provenance, "notes": f"{notes}; {how}" if notes else how},
        expected=expected,
        case_id=case_id,
    )
    decoded = "".join(step["text"] for step in case["output"]["steps"])
    if decoded != text:  # pragma: no cover - the ids spell the text byte for byte
        msg = f"{case_id}: the generated ids decode to {decoded[:60]!r}, not the text"
        raise BuildError(msg)
    return case


def _assemble(
    real: RealTokenizer,
    *,
    parser: str,
    case_id: str,
    grouped: list[list[int]],
    request: Mapping[str, Any],
    provenance: Mapping[str, Any],
    expected: Mapping[str, Any] | None,
    finish_reason: str,
) -> dict[str, Any]:
    flat = [i for step in grouped for i in step]
    deltas = iter(real.decode_steps(flat))
    steps = [
        {"text": "".join(next(deltas) for _ in step), "token_ids": list(step)} for step in grouped
    ]
    extra: dict[str, Any] = {
        "builder": {"version": BUILDER_VERSION, "toolcall_conformance": __version__}
    }
    if expected is None:
        expected = {"content": None, "tool_calls": []}
        extra[NEEDS_REVIEW] = ["expected"]
    case: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "id": case_id,
        "parser": parser,
        "tokenizer": real.name,
        "special_tokens": special_tokens_of(real, flat),
        "provenance": dict(provenance),
        "request": dict(request),
        "output": {
            "steps": steps,
            "stop_token_ids": list(real.stop_token_ids),
            "finish_reason": finish_reason,
        },
        "expected": dict(expected),
        "extra": extra,
    }
    errors = validate_case_data(case)
    if errors:
        first = errors[0]
        first.problems = tuple(errors)
        raise first
    return case


def special_tokens_of(tokenizer: RealTokenizer, ids: Sequence[int]) -> dict[str, int]:
    """The tokenizer's added/special tokens among ``ids``, and its stop tokens (text -> id)."""
    texts = tokenizer.special_id_texts()
    wanted = {i for i in ids if i in texts} | set(tokenizer.stop_token_ids)
    return {texts[i]: i for i in sorted(wanted) if i in texts}


# --------------------------------------------------------------------------------------
# Command line: toolcall conformance build


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``toolcall conformance build``."""
    parser.add_argument("--tokenizer", required=True, choices=TOKENIZER_NAMES)
    parser.add_argument(
        "--parser", required=True, help="the --tool-call-parser name the case targets"
    )
    parser.add_argument(
        "--id", required=True, dest="case_id", help="'<parser>/<model-or-tokenizer>/<slug>'"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--text", metavar="FILE|-", help="the raw output, verbatim ('-' reads stdin)"
    )
    source.add_argument(
        "--ids",
        metavar="FILE|-",
        help="recorded ids as JSON: a list of ids, or a list of engine steps (lists of ids)",
    )
    parser.add_argument(
        "--strip-final-newline",
        action="store_true",
        help="drop one newline at the end of the --text file (an editor's, not the model's)",
    )
    parser.add_argument(
        "--request", metavar="FILE", help="JSON: tools, tool_choice, ... (default: no tools)"
    )
    parser.add_argument("--provenance-kind", required=True, choices=PROVENANCE_KINDS)
    parser.add_argument("--source", required=True, help="where the output came from")
    parser.add_argument("--model", help="the model that produced (or would produce) the output")
    parser.add_argument("--notes", help="provenance notes")
    parser.add_argument(
        "--expected",
        metavar="FILE",
        help="JSON: the parse the output must yield (content, tool_calls, ...); "
        "without it the case is marked for review",
    )
    parser.add_argument("--finish-reason", choices=("stop", "length"), default="stop")
    parser.add_argument("--out", metavar="FILE", help="write the case here (default: stdout)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def _read(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    return Path(name).read_text(encoding="utf-8")


def _read_json(name: str, what: str) -> Any:
    try:
        return json.loads(_read(name))
    except json.JSONDecodeError as error:
        msg = f"{what} {name}: not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        raise BuildError(msg) from error


def run_build(args: argparse.Namespace) -> int:
    """Run ``toolcall conformance build``; 0 on success, 1 when the case cannot be built."""
    try:
        out = Path(args.out) if args.out else None
        if out is not None and out.exists() and not args.force:
            msg = f"{out} exists (use --force to overwrite it)"
            raise BuildError(msg)
        request = _read_json(args.request, "--request") if args.request else {"tools": []}
        expected = _read_json(args.expected, "--expected") if args.expected else None
        provenance: dict[str, Any] = {"kind": args.provenance_kind, "source": args.source}
        if args.model:
            provenance["model"] = args.model
        if args.notes:
            provenance["notes"] = args.notes
        common: dict[str, Any] = {
            "tokenizer": args.tokenizer,
            "parser": args.parser,
            "request": request,
            "provenance": provenance,
            "expected": expected,
            "finish_reason": args.finish_reason,
            "case_id": args.case_id,
        }
        if args.text is not None:
            text = _read(args.text)
            if args.strip_final_newline and text.endswith("\n"):
                text = text[:-1]
            case = build_case(text=text, **common)
        else:
            ids = _read_json(args.ids, "--ids")
            if not isinstance(ids, list):
                msg = "--ids must hold a JSON list"
                raise BuildError(msg)
            case = build_case_from_ids(token_ids=ids, **common)
        if out is None:
            sys.stdout.write(dumps_case(case))
        else:
            write_case(case, out)
            print(f"wrote {out} ({len(case['output']['steps'])} steps)", file=sys.stderr)
    except (BuildError, CaseError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


# --------------------------------------------------------------------------------------
# Corpus scripts: where a grammar refusal must happen (expected.grammar_refusal.offset)

#: The offset of a defect, computed from the case's text.
Place = Callable[[str], int]


def at(needle: str, plus: int = 0, *, nth: int = 1) -> Place:
    """The defect's offset: where the ``nth`` ``needle`` starts in the text, plus ``plus``
    (write the defect's place as the format and the schema define it, never from a run)."""

    def offset(text: str) -> int:
        position = -1
        for _ in range(nth):
            position = text.index(needle, position + 1)
        return position + plus

    return offset


def at_end(text: str) -> int:
    """The output ends where the grammar needs more: the stop token is refused."""
    return len(text)


def write_corpus(
    built: Iterable[tuple[Path, dict[str, Any]]],
    argv: Sequence[str] | None = None,
    *,
    label: str,
) -> int:
    """The command line of a corpus script: write each built case to its path, or with
    ``--check`` report the files that differ from what the script builds.

    Returns the exit status: 1 when two cases share an id or a file is stale.
    """
    parser = argparse.ArgumentParser(description=f"Write the {label} conformance cases.")
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    cases = list(built)
    ids = [data["id"] for _, data in cases]
    if len(set(ids)) != len(ids):
        print("error: two cases share an id", file=sys.stderr)
        return 1
    stale = []
    for path, data in cases:
        text = dumps_case(data)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"stale: {path}", file=sys.stderr)
    print(f"{len(cases)} {label} cases {'checked' if args.check else 'written'}")
    return 1 if stale else 0


# -- what corpus scripts share ------------------------------------------------------------


def request_body(
    tools: Sequence[Mapping[str, Any]],
    tool_choice: object = "auto",
    parallel_tool_calls: bool | None = None,
    strict_level: str | None = None,
) -> dict[str, Any]:
    """A case's ``request``: ``parallel_tool_calls`` and ``strict_level`` only when given."""
    request: dict[str, Any] = {"tools": list(tools), "tool_choice": tool_choice}
    if parallel_tool_calls is not None:
        request["parallel_tool_calls"] = parallel_tool_calls
    if strict_level is not None:
        request["strict_level"] = strict_level
    return request


def strict_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat Completions function tool with ``strict: true`` (which puts ``auto`` under the
    grammar with that tool's schema pinned)."""
    return {**tool, "function": {**tool["function"], "strict": True}}


def expected_parse(
    content: str | None,
    calls: Iterable[tuple[str, Mapping[str, Any] | str]],
    *,
    recoveries: Sequence[str] = (),
    grammar: str | None = None,
    refusal: tuple[int, str] | None = None,
) -> dict[str, Any]:
    """A case's ``expected``: content, ``(name, arguments)`` calls (arguments as a JSON
    object, or as exact text), and the recoveries and grammar verdict when given;
    ``refusal`` is the ``(offset, reason)`` of a ``reject`` (``expected.grammar_refusal``:
    compute the offset with :func:`at` or :func:`at_end` on the case's text)."""
    expected: dict[str, Any] = {
        "content": content,
        "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls],
    }
    if recoveries:
        expected["recoveries"] = list(recoveries)
    if grammar is not None:
        expected["grammar"] = grammar
    if refusal is not None:
        offset, reason = refusal
        expected["grammar_refusal"] = {"offset": offset, "reason": reason}
    return expected


def build_corpus_case(
    root: Path,
    *,
    tokenizer: str,
    parser: str,
    slug: str,
    constrained: bool = False,
    **fields: Any,
) -> tuple[Path, dict[str, Any]]:
    """:func:`build_case` for a shipped corpus: the id ``PARSER/TOKENIZER/SLUG`` and the
    file ``root/PARSER/TOKENIZER/SLUG.json`` (``fields``: text, request, provenance,
    expected, finish_reason). With ``constrained``, :func:`build_case_under_grammar` with
    the registered parser of that name, seeded with the id (the case ends on a stop token,
    so ``finish_reason`` is not asked for)."""
    case_id = f"{parser}/{tokenizer}/{slug}"
    path = root / parser / tokenizer / f"{slug}.json"
    if not constrained:
        return path, build_case(tokenizer=tokenizer, parser=parser, case_id=case_id, **fields)
    fields.pop("finish_reason", None)
    data = build_case_under_grammar(
        Registry.load().get(parser), tokenizer=tokenizer, case_id=case_id, seed=case_id, **fields
    )
    return path, data
