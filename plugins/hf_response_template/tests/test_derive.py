"""derive: a response template from a chat template's renderings.

The chat templates in data/chat_templates/ are vLLM 0.33.0's examples
(examples/tool_chat_template_*.jinja, Apache-2.0; see data/chat_templates/SOURCE.md).
The expected templates are read off each template's Jinja text (where it writes the
name, the arguments and the markup), not from derive's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcall import ParserContext, Registry, Request, Vocabulary
from toolcall.cli import main
from toolcall_hf_response_template.auto import AutoParser
from toolcall_hf_response_template.derive import Derived, Refusal, derive, read_chat_template
from toolcall_hf_response_template.parser import template_parser
from toolcall_hf_response_template.template import TemplateError

DATA = Path(__file__).parent / "data" / "chat_templates"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}
FUNCTION = {"name": "{content.name}", "arguments": "{content.arguments}"}


def derived(name: str) -> Derived:
    text, tokens = read_chat_template(str(DATA / f"tool_chat_template_{name}.jinja"))
    result = derive(text, tokens)
    assert isinstance(result, Derived), str(result)
    return result


def calls(template: dict[str, Any], text: str) -> tuple[str | None, list[tuple[str, Any]]]:
    parser = template_parser("t", {"response_template": template})(
        ParserContext(request=Request.from_openai({"tools": [WEATHER]}))
    )
    message = parser.parse(text).to_openai()
    got = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]
    return message.get("content"), got


def test_hermes_is_a_json_call_object_between_tool_call_tags() -> None:
    # '\n<tool_call>\n' + '{"name": "' + name + '", "arguments": ' + arguments|tojson
    # + '}\n</tool_call>'
    result = derived("hermes")
    assert result.encoding == "a JSON call object"
    assert result.template["start_anchor"] == "<|im_start|>assistant\n"
    assert result.template["fields"]["tool_calls"] == {
        "open": "<tool_call>",
        "close": "</tool_call>",
        "content": "json",
        "repeats": True,
        "transform": {"type": "function", "function": FUNCTION},
    }
    assert "prompt" in result.renderings
    assert calls(
        result.template,
        'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    ) == ("Sure.", [("get_weather", {"city": "Paris"})])


def test_qwen3_coder_is_per_parameter_tags_with_the_name_in_the_opener() -> None:
    # <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>
    result = derived("qwen3coder")
    field = result.template["fields"]["tool_calls"]
    assert field["content"] == "xml-inline"
    assert field["transform"]["function"] == {"name": "{name}", "arguments": "{content}"}
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_weather>\n</function>\n</tool_call>"
    )
    assert calls(result.template, text) == (
        None,
        [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {})],
    )
    # The template writes a boolean as Python's str: the derived template says so, and reads
    # it back as the probe's value (no note of a boolean it cannot read).
    assert field["content_args"]["python_literals"] is True
    assert not any("boolean" in note for note in result.notes)


def test_mistral_before_v11_is_a_json_list_of_calls() -> None:
    # '[TOOL_CALLS] [' + {"name": ..., "arguments": ..., "id": ...} joined by ', ' + ']'
    result = derived("mistral")
    assert result.template["start_anchor"] == "[/INST]"
    assert result.template["fields"]["tool_calls"] == {
        "open": "[TOOL_CALLS]",
        "content": "json",
        "transform": {
            "type": "function",
            "function": {"name": "{name}", "arguments": "{arguments}"},
        },
        "transform_each": True,
    }
    text = (
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo"}}, '
        '{"name": "get_weather", "arguments": {}}]'
    )
    assert calls(result.template, text)[1] == [
        ("get_weather", {"city": "Oslo"}),
        ("get_weather", {}),
    ]


def deepseek(name: str) -> str:
    """A DeepSeek marker: <, a full-width bar, the words joined by U+2581, the bar, >."""
    bar = "\uff5c"
    return f"<{bar}{name.replace(' ', chr(0x2581))}{bar}>"


def test_deepseek_v31_writes_the_name_before_the_json() -> None:
    # The calls' wrapper "tool calls begin/end", and per call "tool call begin", the name,
    # "tool sep", the arguments' JSON, "tool call end".
    result = derived("deepseekv31")
    assert result.encoding == "a name, then JSON arguments"
    field = result.template["fields"]["tool_calls"]
    assert "(?P<name>" in field["open_pattern"]
    assert field["transform"]["function"] == {"name": "{name}", "arguments": "{content}"}
    begin, sep, end = deepseek("tool call begin"), deepseek("tool sep"), deepseek("tool call end")
    text = (
        f"Let me see.{deepseek('tool calls begin')}{begin}get_weather{sep}"
        f'{{"city": "Rome"}}{end}{begin}get_weather{sep}'
        f'{{"days": 2}}{end}{deepseek("tool calls end")}'
    )
    assert calls(result.template, text) == (
        "Let me see.",
        [("get_weather", {"city": "Rome"}), ("get_weather", {"days": 2})],
    )


def test_a_call_opener_is_not_cut_where_the_closer_ends_as_the_opener_does() -> None:
    # "...call end|>" + "<|tool call begin|>" and "...calls begin|>" + "<|tool call begin|>":
    # the repeated text is "<|tool call begin|>", not "|><|tool call begin|>", so a call
    # written without the section's markers (seen in the wild) still opens.
    text, tokens = read_chat_template(str(DATA / "replay_deepseek-v3.jinja"))
    result = derive(text, tokens)
    assert isinstance(result, Derived), str(result)
    begin, sep, end = deepseek("tool call begin"), deepseek("tool sep"), deepseek("tool call end")
    output = f'Checking.{begin}get_time{sep}{{"timezone": "UTC"}}{end}'
    assert calls(result.template, output) == ("Checking.", [("get_time", {"timezone": "UTC"})])
    sectioned = f"{deepseek('tool calls begin')}{output.removeprefix('Checking.')}"
    sectioned += deepseek("tool calls end")
    assert calls(result.template, sectioned) == (None, [("get_time", {"timezone": "UTC"})])


def test_llama3_json_has_no_markup_a_call_is_json_at_the_start() -> None:
    # {"name": NAME, "parameters": ARGS|tojson}; a second call raises in the template
    result = derived("llama3.1_json")
    field = result.template["fields"]["tool_calls"]
    assert field["open_pattern"] == r"^\s*(?=\{)"
    assert field["transform"]["function"] == {
        "name": "{content.name}",
        "arguments": "{content.parameters}",
    }
    assert any("two calls do not render" in note for note in result.notes)


def test_thinking_from_reasoning_content() -> None:
    # Written for this test: reasoning in <think>, calls as JSON lines in <call> tags.
    template = (
        "{% for m in messages %}<|{{ m.role }}|>"
        "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
        "{{ m.content or '' }}"
        "{% for c in m.tool_calls or [] %}<call>{{ c.function | tojson }}</call>{% endfor %}"
        "<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    result = derive(template)
    assert isinstance(result, Derived), str(result)
    assert result.template["fields"]["thinking"] == {"open": "<think>", "close": "</think>"}
    assert result.template["fields"]["tool_calls"]["open"] == "<call>"
    text = '<think>hmm</think>ok<call>{"name": "get_weather", "arguments": {"city": "Bern"}}</call>'
    parser = template_parser("t", {"response_template": result.template})(
        ParserContext(request=Request.from_openai({"tools": [WEATHER]}))
    )
    message = parser.parse(text).to_openai()
    assert message["content"] == "ok"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Bern"}


def test_refusal_names_the_probe_and_the_difference() -> None:
    # muse_glimmer writes the name twice (the header's to=NAME and <atem:invoke name="NAME">).
    text, tokens = read_chat_template(str(DATA / "tool_chat_template_muse_glimmer.jinja"))
    result = derive(text, tokens)
    assert isinstance(result, Refusal)
    assert result.probe == "one call, one argument"
    assert "written 2 times" in result.reason
    # llama3.2_pythonic writes [NAME(KEY=VALUE, ...)].
    text, tokens = read_chat_template(str(DATA / "tool_chat_template_llama3.2_pythonic.jinja"))
    pythonic = derive(text, tokens)
    assert isinstance(pythonic, Refusal)
    assert "a Python call" in pythonic.reason
    assert isinstance(derive("{% if %}"), Refusal)
    no_calls = derive("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert isinstance(no_calls, Refusal)


def test_derivation_is_deterministic() -> None:
    text, tokens = read_chat_template(str(DATA / "tool_chat_template_granite.jinja"))
    first, second = derive(text, tokens), derive(text, tokens)
    assert isinstance(first, Derived)
    assert first == second


def test_toolcall_derive_prints_the_template(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", str(DATA / "tool_chat_template_hermes.jinja")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["response_template"]["fields"]["tool_calls"]["open"] == "<tool_call>"
    assert "one call, one argument" in data["renderings"]


def test_toolcall_derive_refuses_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["derive", str(DATA / "tool_chat_template_muse_glimmer.jinja")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "one call, one argument" in captured.err


def test_toolcall_derive_reads_a_model_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = (DATA / "tool_chat_template_hermes.jinja").read_text("utf-8")
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": template, "eos_token": "<|im_end|>"}), "utf-8"
    )
    assert main(["derive", "--no-renderings", str(tmp_path)]) == 0
    assert "renderings" not in json.loads(capsys.readouterr().out)


def test_toolcall_parse_with_a_chat_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out.txt"
    output.write_text(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>', "utf-8"
    )
    template = str(DATA / "tool_chat_template_hermes.jinja")
    assert main(["parse", "--chat-template", template, str(output)]) == 0
    message = json.loads(capsys.readouterr().out)
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    refused = str(DATA / "tool_chat_template_muse_glimmer.jinja")
    assert main(["parse", "--chat-template", refused, str(output)]) == 2
    assert "written 2 times" in capsys.readouterr().err


def context(chat_template: str, **request: Any) -> ParserContext:
    return ParserContext(
        request=Request.from_openai(request),
        vocabulary=Vocabulary(metadata={"chat_template": chat_template}),
    )


def test_auto_serves_the_template_derived_from_the_tokenizer() -> None:
    template = (DATA / "tool_chat_template_qwen3coder.jinja").read_text("utf-8")
    parser = AutoParser(context(template, tools=[WEATHER]))
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=days>\n4\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    message = parser.parse(text).to_openai()
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"days": 4}
    # The grammar comes from the derived template like any other.
    AutoParser.check_vocabulary(context(template).vocabulary)


def test_auto_without_a_format_refuses_tools_and_passes_text() -> None:
    template = (DATA / "tool_chat_template_muse_glimmer.jinja").read_text("utf-8")
    AutoParser.check_vocabulary(context(template).vocabulary)  # the server starts
    with pytest.raises(TemplateError, match="written 2 times"):
        AutoParser(context(template, tools=[WEATHER]))
    # The reason the vLLM bridge answers a request with tools with (HTTP 400).
    refused = AutoParser.tools_refused(context(template).vocabulary)
    assert refused is not None
    assert "chat template" in refused
    assert "written 2 times" in refused
    qwen = (DATA / "tool_chat_template_qwen3coder.jinja").read_text("utf-8")
    assert AutoParser.tools_refused(context(qwen).vocabulary) is None
    text = "Hello <tool_call> there"
    assert AutoParser(context(template)).parse(text).to_openai()["content"] == text


def test_auto_is_registered() -> None:
    registry = Registry.load()
    assert "auto" in registry.names()
    assert registry.get("auto") is AutoParser


def test_calls_without_a_closer_end_where_the_next_opens() -> None:
    # '<function_call> ' + {"name": ..., "arguments": ...} per call, one a line, no closer.
    result = derived("granite_20b_fc")
    field = result.template["fields"]["tool_calls"]
    assert field["open"] == "<function_call>"
    assert field["close_pattern"].endswith("(?=<function_call>)")
    text = (
        '<function_call> {"name": "get_weather", "arguments": {"city": "Quito"}}\n'
        '<function_call> {"name": "get_weather", "arguments": {"days": 1}}'
    )
    assert calls(result.template, text)[1] == [
        ("get_weather", {"city": "Quito"}),
        ("get_weather", {"days": 1}),
    ]


def test_glm_tags_after_the_empty_reasoning_every_answer_starts_with() -> None:
    # '<think></think>' starts every answer; per call '<tool_call>' NAME, then per argument
    # '<arg_key>K</arg_key>' '<arg_value>V</arg_value>' lines, then '</tool_call>'.
    text, tokens = read_chat_template(str(DATA / "replay_glm4.5.jinja"))
    result = derive(text, tokens)
    assert isinstance(result, Derived), str(result)
    field = result.template["fields"]["tool_calls"]
    assert field["content"] == "xml-inline"
    assert field["close_pattern"] == "</tool_call>"
    output = (
        "<think></think>\nOn it.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
        "<arg_value>Lyon</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n"
        "</tool_call>"
    )
    assert calls(result.template, output) == (
        "On it.",
        [("get_weather", {"city": "Lyon", "days": 2})],
    )
