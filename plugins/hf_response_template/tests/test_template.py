"""Reading a template: every refusal names the field and the reason, at start-up.

``HfParser.check_vocabulary`` is what the vLLM bridge calls when the server starts; it
raises ``ValueError`` (``TemplateError``) with ``where`` and ``reason``.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from toolcall import ParserContext, Vocabulary
from toolcall_hf_response_template import ENV, HfParser, TemplateError, load_template
from toolcall_hf_response_template.parser import template_for
from toolcall_hf_response_template.template import markers_of, unmarked_starts_of

TEMPLATES = ("hermes", "qwen3_coder", "glm", "mistral_v11", "mistral", "llama3_json")


def shipped(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("toolcall_hf_response_template")
        .joinpath(f"templates/{name}.json")
        .read_text(encoding="utf-8")
    )
    return data


HERMES = shipped("hermes")


def changed(path: str, value: object) -> dict[str, Any]:
    """HERMES with ``value`` at the dotted ``path`` (``None``: the key removed)."""
    data = copy.deepcopy(HERMES)
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return data


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_shipped_templates_load(name: str) -> None:
    template = load_template(shipped(name))
    assert template.tools is not None
    assert template.implicit == "content"  # added as vLLM adds it


TOOL = "fields.tool_calls"


def two_implicit() -> dict[str, Any]:
    data = changed("fields.thinking.open", None)
    data["fields"]["content"] = {}
    return data


@pytest.mark.parametrize(
    ("template", "where", "reason"),
    [
        (changed("version", 2), "version", "only version 1"),
        ({**HERMES, "stop": "x"}, "", "unknown keys ['stop']"),
        (changed("fields", {}), "fields", "non-empty"),
        (changed("fields.metadata", {"open": "<m>"}), "fields.metadata", "not a field vLLM"),
        (changed("defaults", {"role": "assistant", "x": 1}), "defaults", "only 'role'"),
        (changed("start_anchor", None), "", "start_anchor"),
        (changed(f"{TOOL}.open_pattern", "<t>"), f"{TOOL}.open", "cannot be given with"),
        (changed(f"{TOOL}.open", []), f"{TOOL}.open", "non-empty list"),
        (changed(f"{TOOL}.open", ["<a>", ""]), f"{TOOL}.open", "non-empty strings"),
        (two_implicit(), "fields", "at most one field may"),
        (changed("fields.thinking.content", "json"), "fields.thinking", "must read as text"),
        (changed("fields.thinking.open", "<tool_call>"), f"{TOOL}.open", "also opens thinking"),
        (changed(f"{TOOL}.content", "int"), f"{TOOL}.content", "never be an object"),
        (changed(f"{TOOL}.content", "yaml"), f"{TOOL}.content", "known: text"),
        (changed(f"{TOOL}.repeats", "yes"), f"{TOOL}.repeats", "true or false"),
        (changed("fields.thinking.join", ""), "fields.thinking.join", "needs 'repeats'"),
    ],
)
def test_shape_refusals_name_the_field(template: dict[str, Any], where: str, reason: str) -> None:
    _check_refusal(template, where, reason)


@pytest.mark.parametrize(
    "template",
    [
        changed(f"{TOOL}.close", None),  # a region without a closer runs to the end
        changed(f"{TOOL}.join", ""),  # repeats: true
        changed("fields.thinking", {"open": "<think>", "close": "</think>", "repeats": True}),
    ],
)
def test_what_the_spec_allows_is_accepted(template: dict[str, Any]) -> None:
    load_template(template)


def _check_refusal(template: dict[str, Any], where: str, reason: str) -> None:
    with pytest.raises(TemplateError) as raised:
        load_template(template)
    assert raised.value.where == where, raised.value
    assert reason in raised.value.reason, raised.value


def tools_with(**fields: object) -> dict[str, Any]:
    data = copy.deepcopy(HERMES)
    data["fields"]["tool_calls"] = {"open": "<t>", "close": "</t>", "content": "json", **fields}
    return data


@pytest.mark.parametrize(
    ("fields", "where", "reason"),
    [
        (
            {"transform": {"function": {"arguments": "{content}"}}},
            f"{TOOL}.transform",
            "yields no name",
        ),
        (
            {"transform": {"function": {"name": "", "arguments": "{content}"}}},
            f"{TOOL}.transform",
            "yields no name",
        ),
        (
            {"transform": {"function": {"name": "{content.name}"}}},
            f"{TOOL}.transform",
            "yields no arguments",
        ),
        (
            {"transform": {"function": {"name": "call {content.name}", "arguments": "{content}"}}},
            f"{TOOL}.transform",
            "mixes a placeholder",
        ),
        (
            {"transform": {"function": {"name": "{tool}", "arguments": "{content}"}}},
            f"{TOOL}.transform",
            "neither content nor a named group",
        ),
        (
            {
                "open_pattern": "<t (?P<name>\\w+)>",
                "open": None,
                "transform": {"function": {"name": "{name.first}", "arguments": "{content}"}},
            },
            f"{TOOL}.transform",
            "cannot be indexed",
        ),
        (
            {
                "close_pattern": "</t (?P<tail>\\w+)>",
                "close": None,
                "transform": {"function": {"name": "{tail}", "arguments": "{content}"}},
            },
            f"{TOOL}.transform",
            "close pattern",
        ),
        ({"open_pattern": "<t (?P<name>\\w+)>", "open": None}, TOOL, "only a transform"),
        ({"transform_each": True}, f"{TOOL}.transform_each", "no transform"),
        ({"content_args": {"strp": True}}, f"{TOOL}.content_args.strp", "not an argument"),
        (
            {"content_args": {"string_delims": [["<"]]}},
            f"{TOOL}.content_args.string_delims",
            "pairs",
        ),
        ({"content": "xml-inline"}, f"{TOOL}.content_args", "needs a tag_pattern"),
        (
            {"content": "xml-inline", "content_args": {"tag_pattern": "<(?P<k>\\w+)>"}},
            f"{TOOL}.content_args.tag_pattern",
            "named group 'key'",
        ),
        (
            {"content": "kv-lines", "content_args": {"value_parser": {"name": "toml"}}},
            f"{TOOL}.content_args.value_parser.name",
            "known:",
        ),
    ],
)
def test_tool_field_refusals_name_the_field_and_the_reason(
    fields: dict[str, Any], where: str, reason: str
) -> None:
    template = tools_with(**{k: v for k, v in fields.items() if v is not None})
    if fields.get("open", "") is None:
        del template["fields"]["tool_calls"]["open"]
    if fields.get("close", "") is None:
        del template["fields"]["tool_calls"]["close"]
    _check_refusal(template, where, reason)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("<t>(a+)+b", "inside another"),
        ("<t>(?:x*y?)*z", "inside another"),
        ("<t>(a|aa)*b", "several ways"),
        ("<t>(?:x|x)*y", "several ways"),
        ("<(\\w+)>.*</\\1>", "backreference"),
        ("<t>[", "not a valid regular expression"),
        ("<t>\\p{L}+", "syntax outside Python's re"),
    ],
)
def test_patterns_that_can_backtrack_catastrophically_are_refused(
    pattern: str, reason: str
) -> None:
    template = tools_with(
        open_pattern=pattern, transform={"function": {"name": "x", "arguments": "{content}"}}
    )
    del template["fields"]["tool_calls"]["open"]
    _check_refusal(template, f"{TOOL}.open_pattern", reason)


@pytest.mark.parametrize(
    "pattern",
    [
        "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>",
        "<tool_call>\\s*<function=(?P<name>[^>\\n]+)>",
        "(?:^|<think>\\s*)",
        "(?:ab|cd)*x",
        "a++b",
    ],
)
def test_linear_patterns_are_accepted(pattern: str) -> None:
    template = tools_with(
        open_pattern=pattern, transform={"function": {"name": "x", "arguments": "{content}"}}
    )
    del template["fields"]["tool_calls"]["open"]
    load_template(template)


def test_the_error_reads_as_field_and_reason() -> None:
    with pytest.raises(TemplateError) as raised:
        load_template(changed(f"{TOOL}.content", "int"))
    assert str(raised.value).startswith("response_template fields.tool_calls.content: ")
    assert isinstance(raised.value, ValueError)


# -- where the template comes from ------------------------------------------------------------


def test_check_vocabulary_refuses_a_tokenizer_without_a_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(ValueError, match="TOOLCALL_RESPONSE_TEMPLATE"):
        HfParser.check_vocabulary(Vocabulary())


def test_check_vocabulary_refuses_a_bad_template() -> None:
    with pytest.raises(ValueError, match=r"fields\.tool_calls\.content"):
        HfParser.check_vocabulary(
            Vocabulary(metadata={"response_template": changed(f"{TOOL}.content", "int")})
        )


def test_the_tokenizer_template_comes_first(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps(shipped("glm")), encoding="utf-8")
    template = template_for(Vocabulary(metadata={"response_template": HERMES}), {ENV: str(other)})
    assert template.start_anchor.literals == ("<|im_start|>assistant\n",)


@pytest.mark.parametrize("wrapped", [False, True], ids=["template", "tokenizer-config"])
def test_a_file_named_by_the_environment_serves_a_checkpoint_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrapped: bool
) -> None:
    path = tmp_path / "template.json"
    data = {"response_template": HERMES, "eos_token": "x"} if wrapped else HERMES
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv(ENV, str(path))
    parser = HfParser(ParserContext())
    parsed = parser.parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert [call.name for call in parsed.tool_calls] == ["f"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [(None, "cannot read the file"), ("{", "is not JSON"), ('{"fields": 1}', "(in")],
)
def test_a_bad_file_says_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None, reason: str
) -> None:
    path = tmp_path / "template.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    monkeypatch.setenv(ENV, str(path))
    with pytest.raises(TemplateError, match="TOOLCALL_RESPONSE_TEMPLATE") as raised:
        HfParser.check_vocabulary(Vocabulary())
    assert reason in str(raised.value)


@pytest.mark.parametrize(
    ("name", "markers", "starts"),
    [
        ("hermes", ("<think>", "</think>", "<tool_call>", "</tool_call>"), ()),
        # a pattern gives each run of literal text it consumes, in an optional group too
        # ((?:</function>\s*)?</tool_call>), blanks (\s*) between runs left out
        (
            "qwen3_coder",
            ("<think>", "</think>", "<tool_call>", "<function=", "</function>", "</tool_call>"),
            (),
        ),
        # in an alternative too ((?:\[ARGS\]|(?=\{))); a look-ahead closer has no text;
        # ';' is a single character (punctuation)
        ("mistral_v11", ("[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]"), ()),
        ("mistral", ("[TOOL_CALLS]",), ()),
        # each alternative of the opener counts; ^\s*(?={) begins a call with no marker
        ("llama3_json", ("<|python_tag|>",), ("{",)),
    ],
)
def test_markers_and_unmarked_starts_come_from_every_alternative(
    name: str, markers: tuple[str, ...], starts: tuple[str, ...]
) -> None:
    template = load_template(shipped(name))
    assert markers_of(template) == markers
    assert unmarked_starts_of(template) == starts


def test_an_optional_literal_group_after_a_literal_start_gives_both_markers() -> None:
    # DeepSeek's opener reads the section marker before the first call only: its markers are
    # both full marker runs, not their common start (of which the fuzz's nothing-lost
    # oracle would find an 's' lost).
    from toolcall_hf_response_template.patterns import Delimiter, literal_starts

    opener = "<｜tool▁call(?:s▁begin｜><｜tool▁call)?▁begin｜>(?P<name>[^\\n<]+)<｜tool▁sep｜>"  # noqa: RUF001
    assert literal_starts(Delimiter(pattern=opener)) == (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",  # noqa: RUF001
        "<｜tool▁call▁begin｜>",  # noqa: RUF001
    )
    assert literal_starts(Delimiter(pattern="a(?:b)?c(?:d)?e|x")) == (
        "abcde", "abce", "acde", "ace", "x",
    )  # fmt: skip
    assert literal_starts(Delimiter(pattern="<t>(?:a|b)?c")) == ("<t>",)
