"""Conformance cases: loading, validating and writing case files.

A case file holds one JSON object in the format of ``schema/case.schema.json`` (a copy of
the project's normative schema, JSON Schema draft 2020-12). Loading validates it against
the schema, then checks what a schema cannot say (below); every problem is a
:class:`CaseError` naming the file, the field as a JSON path (``$.output.steps[3].text``)
and the problem. :func:`load_cases` reports a bad file and still loads the others.

Checks beyond the schema:

- the id starts with the parser name (``<parser>/<model-or-tokenizer>/<slug>``);
- a case with a tokenizer carries token ids on every step, a text-only case
  (``tokenizer: null``) on none;
- no step holds a stop token id (the stop token that ended generation is not passed to
  the parser, and any other would have ended generation earlier);
- ``expected.grammar`` needs token ids, and ``accept`` needs stop token ids and
  ``finish_reason: stop`` (the matcher must terminate on a stop token);
- ``expected.grammar_refusal`` (an addition of this kit's schema copy, see
  :data:`SCHEMA_ADDITIONS`) goes with ``grammar: reject`` and places the refusal inside the
  output text (or at its end);
- ``expected.recoveries`` are named tolerances of the parsing policy;
- the request reads as a :class:`toolcall.Request`;
- ids are unique across the files loaded together.

:func:`verify_ids` goes further and re-decodes the ids with the real tokenizer.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from toolcall import RECOVERIES, Request, Vocabulary
from toolcall_conformance.tokenizers import RealTokenizer, TokenizerBuildError, get_tokenizer

__all__ = [
    "NEEDS_REVIEW",
    "SCHEMA_ADDITIONS",
    "SCHEMA_ID",
    "Case",
    "CaseError",
    "Expected",
    "ExpectedCall",
    "GrammarRefusal",
    "Step",
    "case_schema",
    "case_tokenizer",
    "dumps_case",
    "load_case",
    "load_cases",
    "shipped_case_dirs",
    "validate_case_data",
    "verify_ids",
    "write_case",
]

SCHEMA_ID = "toolcall-case/1"

#: Optional fields this kit's copy of the schema adds to the normative one
#: (shared/conformance/case.schema.json), as JSON paths below the root. A case that uses
#: one is still a ``toolcall-case/1`` case; readers that do not know the field ignore it.
SCHEMA_ADDITIONS = ("response_template", "expected.reasoning", "expected.grammar_refusal")

#: ``extra`` key listing the parts of a case a person must still review (the builder and the
#: recorder set ``{"needs_review": ["expected"]}`` when no expected parse was given).
NEEDS_REVIEW = "needs_review"

_MESSAGE_LIMIT = 240


class CaseError(Exception):
    """A problem with one case file: which file, which field (a JSON path), what is wrong."""

    def __init__(self, path: Path | str | None, field: str, message: str) -> None:
        self.path = Path(path) if path is not None else None
        self.field = field
        self.message = message
        #: Every problem found in the file, this one first (load_case raises the first).
        self.problems: tuple[CaseError, ...] = (self,)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = str(self.path) if self.path is not None else "<case>"
        more = f" (and {len(self.problems) - 1} more problems)" if len(self.problems) > 1 else ""
        return f"{where}: {self.field}: {self.message}{more}"

    def __repr__(self) -> str:
        return f"CaseError({str(self.path)!r}, {self.field!r}, {self.message!r})"


@dataclass(frozen=True)
class Step:
    """One engine step: the text the detokenizer released and the ids generated in it."""

    text: str
    token_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    #: A JSON object (compared by value), or the exact arguments text (truncated or invalid).
    arguments: Mapping[str, Any] | str


@dataclass(frozen=True)
class GrammarRefusal:
    """Where a ``reject`` must happen: the character ``offset`` of the defect in the output
    text (its length: the stop token), and the ``reason`` in words."""

    offset: int
    reason: str


@dataclass(frozen=True)
class Expected:
    content: str | None
    tool_calls: tuple[ExpectedCall, ...]
    recoveries: tuple[str, ...] = ()
    grammar: Literal["accept", "reject"] | None = None
    #: The reasoning the parse must yield (compared like content) when
    #: ``reasoning_checked``; a case without ``expected.reasoning`` does not check it.
    reasoning: str | None = None
    reasoning_checked: bool = False
    grammar_refusal: GrammarRefusal | None = None


@dataclass(frozen=True)
class Case:
    """One validated case (see ``schema/case.schema.json`` for the meaning of each field)."""

    id: str
    parser: str
    tokenizer: str | None
    special_tokens: Mapping[str, int]
    provenance: Mapping[str, Any]
    request: Mapping[str, Any]
    steps: tuple[Step, ...]
    stop_token_ids: tuple[int, ...]
    finish_reason: Literal["stop", "length"]
    expected: Expected
    extra: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    #: ``response_template.template``: the template a data-driven parser (hf) reads.
    response_template: Mapping[str, Any] | None = None
    #: ``response_template.prompt``: the end of the rendered prompt the output continues.
    prompt: str | None = None

    @property
    def text(self) -> str:
        """The whole output: the step texts concatenated."""
        return "".join(step.text for step in self.steps)

    @property
    def token_ids(self) -> tuple[int, ...] | None:
        """All token ids in order, or None for a text-only case."""
        if self.tokenizer is None or any(step.token_ids is None for step in self.steps):
            return None
        return tuple(i for step in self.steps for i in step.token_ids or ())

    @property
    def needs_review(self) -> tuple[str, ...]:
        """Parts of the case marked as not reviewed yet (``extra.needs_review``)."""
        value = self.extra.get(NEEDS_REVIEW, ())
        return tuple(value) if isinstance(value, list | tuple) else ()

    def request_view(self) -> Request:
        """The request as the parsers see it."""
        return Request.from_openai(self.request)

    def vocabulary(self) -> Vocabulary:
        """The special tokens of the case (and its response template, if any), as a
        parser context carries them."""
        metadata = (
            {} if self.response_template is None else {"response_template": self.response_template}
        )
        return Vocabulary(special_tokens=dict(self.special_tokens), metadata=metadata)

    def where(self) -> str:
        return str(self.path) if self.path is not None else self.id


# --------------------------------------------------------------------------------------
# Schema


@cache
def case_schema() -> Mapping[str, Any]:
    """The packaged case schema (a copy of the project's normative one)."""
    text = (
        resources.files("toolcall_conformance")
        .joinpath("schema/case.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(case_schema())
    return Draft202012Validator(case_schema())


def _short(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def validate_case_data(data: object, path: Path | str | None = None) -> list[CaseError]:
    """Every problem of a case given as parsed JSON: schema first, then the semantic checks
    (which run only on a schema-valid case). An empty list means the case is valid."""
    errors: list[CaseError] = []
    for error in sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path)):
        # For oneOf/anyOf, name the closest alternative's problem, not "is not valid under any".
        shown = best_match(error.context) if error.context else error
        errors.append(CaseError(path, shown.json_path, _short(shown.message)))
    if errors or not isinstance(data, Mapping):
        return errors
    return _semantic_problems(data, path)


def _semantic_problems(data: Mapping[str, Any], path: Path | str | None) -> list[CaseError]:
    problems: list[CaseError] = []

    def problem(field_path: str, message: str) -> None:
        problems.append(CaseError(path, field_path, message))

    parser = data["parser"]
    if data["id"].split("/", 1)[0] != parser:
        problem("$.id", f"must start with the parser name: '{parser}/...'")

    tokenizer = data.get("tokenizer")
    output = data["output"]
    steps = output["steps"]
    stop_ids = set(output.get("stop_token_ids", ()))
    has_ids = False
    for index, step in enumerate(steps):
        ids = step.get("token_ids")
        where = f"$.output.steps[{index}].token_ids"
        if tokenizer is None and ids is not None:
            problem(where, "a text-only case (tokenizer: null) carries no token ids")
        elif tokenizer is not None and ids is None:
            problem(where, f"missing: every step of a case with tokenizer {tokenizer!r} has ids")
        if ids:
            has_ids = True
            stops = [i for i in ids if i in stop_ids]
            if stops:
                problem(
                    where,
                    f"holds stop token id {stops[0]}: the stop token that ended generation is "
                    "not part of the output, and another would have ended it earlier",
                )

    expected = data["expected"]
    grammar = expected.get("grammar")
    refusal = expected.get("grammar_refusal")
    if refusal is not None:
        length = sum(len(step["text"]) for step in steps)
        if grammar != "reject":
            problem("$.expected.grammar_refusal", "places a refusal, so grammar must be 'reject'")
        if refusal["offset"] > length:
            problem(
                "$.expected.grammar_refusal.offset",
                f"{refusal['offset']} is beyond the end of the output ({length} characters)",
            )
    if grammar is not None and not has_ids:
        problem("$.expected.grammar", "the grammar check needs token ids in the steps")
    if grammar == "accept":
        if not stop_ids:
            problem(
                "$.expected.grammar",
                "'accept' needs output.stop_token_ids (the matcher must terminate on one)",
            )
        if output["finish_reason"] != "stop":
            problem(
                "$.expected.grammar",
                "'accept' means the output ends on a stop token; finish_reason is 'length'",
            )
    for index, name in enumerate(expected.get("recoveries", ())):
        if name not in RECOVERIES:
            known = ", ".join(sorted(RECOVERIES))
            problem(
                f"$.expected.recoveries[{index}]", f"unknown recovery {name!r} (known: {known})"
            )

    try:
        Request.from_openai(data["request"])
    except ValueError as error:
        problem("$.request", f"not a request the parsers can read: {error}")
    return problems


# --------------------------------------------------------------------------------------
# Loading


def _case_from_data(data: Mapping[str, Any], path: Path | None) -> Case:
    output = data["output"]
    expected = data["expected"]
    template = data.get("response_template", {})
    return Case(
        id=data["id"],
        parser=data["parser"],
        tokenizer=data.get("tokenizer"),
        special_tokens=dict(data.get("special_tokens", {})),
        provenance=dict(data["provenance"]),
        request=dict(data["request"]),
        steps=tuple(
            Step(
                text=step["text"],
                token_ids=tuple(step["token_ids"]) if "token_ids" in step else None,
            )
            for step in output["steps"]
        ),
        stop_token_ids=tuple(output.get("stop_token_ids", ())),
        finish_reason=output["finish_reason"],
        expected=Expected(
            content=expected["content"],
            tool_calls=tuple(
                ExpectedCall(name=call["name"], arguments=call["arguments"])
                for call in expected["tool_calls"]
            ),
            recoveries=tuple(expected.get("recoveries", ())),
            grammar=expected.get("grammar"),
            reasoning=expected.get("reasoning"),
            reasoning_checked="reasoning" in expected,
            grammar_refusal=GrammarRefusal(**expected["grammar_refusal"])
            if "grammar_refusal" in expected
            else None,
        ),
        extra=dict(data.get("extra", {})),
        path=path,
        response_template=template.get("template"),
        prompt=template.get("prompt"),
    )


def _raise_first(errors: list[CaseError]) -> None:
    first = errors[0]
    first.problems = tuple(errors)
    raise first


def load_case(path: Path | str) -> Case:
    """Read and validate one case file; raises :class:`CaseError` (with ``.problems``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CaseError(path, "$", f"cannot read the file: {error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        message = f"not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        raise CaseError(path, "$", message) from error
    errors = validate_case_data(data, path)
    if errors:
        _raise_first(errors)
    return _case_from_data(data, path)


def _case_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.json") if p.is_file())
    return [path]


def load_cases(paths: Iterable[Path | str]) -> tuple[list[Case], list[CaseError]]:
    """Load every case file under ``paths`` (files, or directories searched for ``*.json``).

    Returns the valid cases and one error per problem found; a bad file never stops the
    others from loading. Two files with the same case id are both reported.
    """
    cases: list[Case] = []
    errors: list[CaseError] = []
    seen: dict[str, Path | None] = {}
    for given in paths:
        root = Path(given)
        if not root.exists():
            errors.append(CaseError(root, "$", "no such file or directory"))
            continue
        for file in _case_files(root):
            try:
                case = load_case(file)
            except CaseError as error:
                errors.extend(error.problems)
                continue
            if case.id in seen:
                errors.append(
                    CaseError(file, "$.id", f"{case.id!r} is also the id of {seen[case.id]}")
                )
                continue
            seen[case.id] = file
            cases.append(case)
    return cases, errors


def shipped_case_dirs(parser: str) -> list[Path]:
    """The corpus shipped with this package for ``parser`` (``cases/<parser>/``), if any."""
    directory = Path(str(resources.files("toolcall_conformance").joinpath("cases", parser)))
    return [directory] if directory.is_dir() else []


def case_tokenizer(case: Case) -> RealTokenizer:
    """The real tokenizer a case names: a built-in or registered name, or a path (relative
    to the case file's directory). Raises ``KeyError`` (an unknown name) or
    :class:`~toolcall_conformance.tokenizers.TokenizerBuildError`; a text-only case has none
    (``ValueError``)."""
    if case.tokenizer is None:
        msg = f"{case.id} is a text-only case: it names no tokenizer"
        raise ValueError(msg)
    base = case.path.parent if case.path is not None else None
    return get_tokenizer(case.tokenizer, base=base)


def verify_ids(case: Case, tokenizer: RealTokenizer | None = None) -> list[CaseError]:
    """Re-decode the case's token ids with its real tokenizer and compare the texts.

    Checks, per step, that the text vLLM's detokenizer releases for the step's ids is the
    step's text; that each listed special token has that id in the tokenizer; and that no
    id is outside the model's vocabulary. Returns the problems (empty: the ids are right).
    A text-only case has nothing to verify.
    """
    if case.tokenizer is None:
        return []
    problems: list[CaseError] = []
    if tokenizer is None:
        try:
            tokenizer = case_tokenizer(case)
        except (KeyError, TokenizerBuildError) as error:
            return [CaseError(case.path, "$.tokenizer", str(error))]
    ids = case.token_ids or ()
    too_big = [i for i in ids if i >= tokenizer.model_vocab_size]
    if too_big:
        message = f"id {too_big[0]} is outside the vocabulary ({tokenizer.model_vocab_size} ids)"
        return [CaseError(case.path, "$.output.steps", message)]
    deltas = iter(tokenizer.decode_steps(ids))
    for index, step in enumerate(case.steps):
        decoded = "".join(next(deltas) for _ in step.token_ids or ())
        if decoded != step.text:
            problems.append(
                CaseError(
                    case.path,
                    f"$.output.steps[{index}].text",
                    _short(f"is {step.text!r} but its ids decode to {decoded!r}"),
                )
            )
    for text, token_id in case.special_tokens.items():
        real = tokenizer.special_tokens.get(text)
        if real != token_id:
            actual = "no such token" if real is None else f"id {real}"
            problems.append(
                CaseError(
                    case.path,
                    f"$.special_tokens[{json.dumps(text, ensure_ascii=False)}]",
                    f"is {token_id}, but {tokenizer.name} has {actual}",
                )
            )
    return problems


# --------------------------------------------------------------------------------------
# Writing

# Containers at these paths are always written on one line (a step per line reads well).
_INLINE_PATHS = (("output", "steps", None),)


def _inline(path: tuple[str | int, ...]) -> bool:
    for pattern in _INLINE_PATHS:
        if len(pattern) == len(path) and all(
            p is None or p == q for p, q in zip(pattern, path, strict=True)
        ):
            return True
    return False


def _format(value: object, path: tuple[str | int, ...], indent: int) -> str:
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or not value:
        return compact
    scalars = all(
        not isinstance(v, dict | list)
        for v in (value.values() if isinstance(value, dict) else value)
    )
    if _inline(path) or (scalars and len(compact) + indent <= 100) or len(compact) + indent <= 60:
        return compact
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(key, ensure_ascii=False)}: {_format(item, (*path, key), indent + 2)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{pad}{_format(item, (*path, i), indent + 2)}" for i, item in enumerate(value)]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def dumps_case(data: Mapping[str, Any]) -> str:
    """The text of a case file: indented JSON with one output step per line."""
    return _format(dict(data), (), 0) + "\n"


def write_case(case_dict: Mapping[str, Any], path: Path | str) -> Path:
    """Validate ``case_dict`` and write it to ``path`` (atomically; parents are created).

    Raises :class:`CaseError` (with ``.problems``) and writes nothing if it is not valid.
    """
    path = Path(path)
    errors = validate_case_data(case_dict, path)
    if errors:
        _raise_first(errors)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(dumps_case(case_dict))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
