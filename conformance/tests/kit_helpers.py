"""Shared helpers of the kit's own tests: cases for the example ``example_tags`` format.

The format is ``<call name="NAME">{json}</call>`` (conformance/examples/toolcall-example-tags,
which these tests need installed). Every expected value below is derived from that format's
documented policy, not from the parser's output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolcall_conformance.builder import build_case
from toolcall_conformance.cases import Case, load_case, write_case

WEATHER = {
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
REQUEST: dict[str, Any] = {"tools": [WEATHER]}
#: A tiny structural tag: free text, and calls <f>{"n": INTEGER}</f>.
TAG: dict[str, Any] = {
    "type": "structural_tag",
    "format": {
        "type": "triggered_tags",
        "triggers": ["<f>"],
        "tags": [
            {
                "type": "tag",
                "begin": "<f>",
                "content": {
                    "type": "json_schema",
                    "json_schema": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                        "required": ["n"],
                        "additionalProperties": False,
                    },
                },
                "end": "</f>",
            }
        ],
        "at_least_one": False,
        "stop_after_first": False,
    },
}
PROVENANCE = {"kind": "constructed", "source": "toolcall-conformance's own tests"}


def text_case(
    directory: Path,
    slug: str,
    steps: Sequence[str],
    expected: Mapping[str, Any],
    *,
    request: Mapping[str, Any] = REQUEST,
    finish_reason: str = "stop",
    parser: str = "example_tags",
) -> Case:
    """A text-only case (free chunks as steps), written to ``directory`` and loaded back."""
    data = {
        "schema": "toolcall-case/1",
        "id": f"{parser}/text/{slug}",
        "parser": parser,
        "tokenizer": None,
        "provenance": PROVENANCE,
        "request": dict(request),
        "output": {"steps": [{"text": step} for step in steps], "finish_reason": finish_reason},
        "expected": dict(expected),
    }
    path = write_case(data, directory / f"{slug}.json")
    return load_case(path)


def qwen_case(
    directory: Path,
    slug: str,
    text: str,
    expected: Mapping[str, Any],
    *,
    request: Mapping[str, Any] = REQUEST,
) -> Case:
    """A case with real Qwen2.5 token ids (one token per step), written and loaded back."""
    data = build_case(
        tokenizer="qwen2.5",
        parser="example_tags",
        text=text,
        request=dict(request),
        provenance=PROVENANCE,
        expected=dict(expected),
        case_id=f"example_tags/qwen2.5/{slug}",
    )
    path = write_case(data, directory / f"{slug}.json")
    return load_case(path)
