"""The parsing policy (DESIGN §6) on templates: what each output gives, and why.

Every expected value follows from the template and the policy written in the README; each
output is also checked under every split with the delta contract checker.
"""

from __future__ import annotations

import pytest
from hf_testing import calls, events, parse_checked, parser, shipped, with_field

from toolcall import EventName

HERMES = shipped("hermes")
CODER = shipped("qwen3_coder")
GLM = shipped("glm")
MISTRAL = shipped("mistral_v11")
LLAMA = shipped("llama3_json")

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


# -- regions ---------------------------------------------------------------------------------


def test_thinking_is_reasoning_content_is_content_calls_are_calls() -> None:
    parsed = parse_checked(parser(HERMES), "<think>\n Why not.\n</think>\n\nSure. " + CALL)
    assert parsed.reasoning == "Why not."
    assert parsed.content == "Sure."
    assert calls(parsed) == [("get_weather", {"city": "Paris"})]
    assert events(parsed) == []


def test_reasoning_keeps_its_inner_whitespace_and_loses_its_edges() -> None:
    parsed = parse_checked(parser(HERMES), "<think>  a\n\n b  \n</think>x")
    assert parsed.reasoning == "a\n\n b"


def test_strip_false_keeps_reasoning_verbatim() -> None:
    template = with_field(HERMES, "thinking", content_args={"strip": False})
    parsed = parse_checked(parser(template), "<think> a </think>x")
    assert parsed.reasoning == " a "


def test_several_reasoning_regions_add_up() -> None:
    template = with_field(HERMES, "thinking", repeats=True)
    parsed = parse_checked(parser(template), "<think>one</think>mid<think>two</think>end")
    assert parsed.reasoning == "onetwo"
    assert parsed.content == "midend"


def test_reasoning_never_closed_runs_to_the_end() -> None:
    parsed = parse_checked(parser(HERMES), "<think>still thinking about <tool_call> here")
    assert parsed.reasoning == "still thinking about <tool_call> here"
    assert parsed.tool_calls == ()


def test_a_region_opens_nothing_inside_another() -> None:
    parsed = parse_checked(parser(HERMES), "<think>maybe " + CALL + "</think>done")
    assert parsed.reasoning == "maybe " + CALL
    assert parsed.content == "done"
    assert parsed.tool_calls == ()


def test_text_no_region_takes_is_framing_and_recorded() -> None:
    template = {
        "start_anchor": "<|start|>assistant",
        "fields": {
            "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
            "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
        },
    }
    text = "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>2"
    parsed = parse_checked(parser(template), text)
    assert parsed.reasoning == "hm"
    assert parsed.content == "2"
    assert events(parsed) == [EventName.IGNORED_TEXT]


def test_the_longest_of_two_openers_at_one_place_wins() -> None:
    template = with_field(HERMES, "content", open="<tool_call_example>", close="</x>")
    parsed = parse_checked(parser(template), "<tool_call_example>shown</x>" + CALL)
    assert parsed.content == "shown"
    assert calls(parsed) == [("get_weather", {"city": "Paris"})]


# -- the prompt ------------------------------------------------------------------------------


def test_a_prefilled_think_makes_the_output_reasoning() -> None:
    hf = parser(HERMES, prompt="<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n")
    parsed = parse_checked(hf, "Easy.\n</think>\n\nHello.")
    assert parsed.reasoning == "Easy."
    assert parsed.content == "Hello."


def test_a_closed_prefill_changes_nothing() -> None:
    hf = parser(HERMES, prompt="<|im_start|>assistant\n<think>\n\n</think>\n\n")
    parsed = parse_checked(hf, "Hello.</think>")
    assert parsed.reasoning is None
    assert parsed.content == "Hello.</think>"


def test_only_the_prompt_after_the_last_anchor_counts() -> None:
    prompt = "<|im_start|>assistant\n<think>\nold<|im_end|>\n<|im_start|>assistant\n"
    parsed = parse_checked(parser(HERMES, prompt=prompt), "Hello.")
    assert parsed.content == "Hello."
    assert parsed.reasoning is None


def test_a_prompt_without_the_anchor_is_not_read() -> None:
    parsed = parse_checked(parser(HERMES, prompt="system: use <think> and <tool_call>"), "Hi.")
    assert parsed.content == "Hi."


def test_a_delimiter_the_prompt_starts_and_the_output_ends() -> None:
    hf = parser(HERMES, prompt="<|im_start|>assistant\n<thi")
    parsed = parse_checked(hf, "nk>deep</think>shallow")
    assert parsed.reasoning == "deep"
    assert parsed.content == "shallow"


# -- calls: json ------------------------------------------------------------------------------


def test_a_call_is_committed_when_its_name_closes_wherever_it_stands() -> None:
    text = '<tool_call>{"arguments": {"city": "Oslo"}, "name": "get_weather"}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_weather", {"city": "Oslo"})]


def test_json_arguments_are_the_models_own_text() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city":"Oslo" ,"days": 3.0}}</tool_call>'
    )
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.tool_calls[0].arguments == '{"city":"Oslo" ,"days": 3.0}'


def test_a_region_without_a_name_is_content_verbatim() -> None:
    text = 'a <tool_call>{"arguments": {}}</tool_call> b'
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.content == text
    assert EventName.UNPARSED_MARKUP in events(parsed)


def test_a_name_that_is_not_a_string_is_no_name() -> None:
    text = '<tool_call>{"name": 7, "arguments": {}}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.tool_calls == ()
    assert parsed.content == text


def test_other_members_are_ignored_and_recorded() -> None:
    text = '<tool_call>{"id": 1, "name": "get_time", "arguments": {}, "x": [1]}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_time", {})]
    assert events(parsed).count(EventName.IGNORED_MEMBER) == 2


def test_a_repeated_name_keeps_the_first() -> None:
    text = '<tool_call>{"name": "get_time", "name": "other", "arguments": {}}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_time", {})]
    assert EventName.DUPLICATE_KEY in events(parsed)


def test_a_call_object_without_arguments_gets_an_empty_object() -> None:
    parsed = parse_checked(parser(HERMES), '<tool_call>{"name": "get_time"}</tool_call>')
    assert parsed.tool_calls[0].arguments == "{}"


def test_text_after_the_value_in_the_region_is_content() -> None:
    text = '<tool_call>{"name": "get_time", "arguments": {}} P.S. done</tool_call> end'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_time", {})]
    assert parsed.content == "P.S. done end"
    assert EventName.TRAILING_TEXT in events(parsed)


@pytest.mark.parametrize(
    ("text", "arguments", "content"),
    [
        # the call object breaks after its name: the rest of the region is content
        ('<tool_call>{"name": "get_time" and more}</tool_call>', "", "and more}"),
        # a key with no value goes with the rest (nothing is lost)
        (
            '<tool_call>{"name": "get_time", "get_time", "arguments": {}}</tool_call>',
            "",
            '"get_time", "arguments": {}}',
        ),
        ('<tool_call>{"name": "get_time", "x": , "arguments": {}}</tool_call>', "", None),
        # the region ends inside a member (its value not begun): no member, content
        ('<tool_call>{"name": "get_time", "x": </tool_call>', "", None),
        ('<tool_call>{"name": "get_time", "x": "ab', "", '"x": "ab'),
        # junk after the arguments, inside the call object
        (
            '<tool_call>{"name": "get_time", "arguments": {"a": 1} junk}</tool_call>',
            '{"a": 1}',
            "junk}",
        ),
    ],
)
def test_a_break_in_the_call_object_leaves_the_rest_as_content(
    text: str, arguments: str, content: str | None
) -> None:
    parsed = parse_checked(parser(HERMES), text)
    assert [(call.name, call.arguments) for call in parsed.tool_calls] == [("get_time", arguments)]
    if content is None:  # the broken member's text starts the content
        assert parsed.content is not None
        assert parsed.content.startswith('"x":')
    else:
        assert parsed.content == content
    assert EventName.TRAILING_TEXT in events(parsed)


def test_malformed_arguments_stand_with_the_models_text() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": Paris}}</tool_call>'
    parsed = parse_checked(parser(HERMES), text)
    assert calls(parsed) == [("get_weather", '{"city": Paris}')]
    assert EventName.MALFORMED_ARGUMENTS in events(parsed)


@pytest.mark.parametrize(
    ("text", "arguments", "event"),
    [
        ('<tool_call>{"name": "get_weather", "arguments": {"ci', '{"ci', EventName.TRUNCATED),
        (
            '<tool_call>{"name": "get_weather", "arguments": {"city": "X"}}',
            '{"city": "X"}',
            EventName.MISSING_END,
        ),
    ],
)
def test_the_end_of_the_output_inside_a_call(text: str, arguments: str, event: str) -> None:
    parsed = parse_checked(parser(HERMES), text, promptness=event != EventName.MISSING_END)
    assert parsed.tool_calls[0].arguments == arguments
    assert event in events(parsed)


def test_a_region_whose_name_never_completes_is_content() -> None:
    text = 'ok <tool_call>{"name": "get_wea'
    parsed = parse_checked(parser(HERMES), text)
    assert parsed.content == text
    assert parsed.tool_calls == ()


def test_tool_choice_none_keeps_reasoning_and_returns_calls_as_content() -> None:
    text = "<think>no tools</think>" + CALL
    parsed = parse_checked(parser(HERMES, tool_choice="none"), text)
    assert parsed.reasoning == "no tools"
    assert parsed.content == CALL
    assert parsed.tool_calls == ()
    assert EventName.UNPARSED_MARKUP in events(parsed)


def test_names_are_kept_even_when_no_tool_has_them() -> None:
    text = '<tool_call>{"name": "launch", "arguments": {"now": true}}</tool_call>'
    assert calls(parse_checked(parser(HERMES), text)) == [("launch", {"now": True})]


def test_transform_each_makes_a_call_per_element() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        transform={"function": {"name": "{tool_name}", "arguments": "{parameters}"}},
        transform_each=True,
    )
    text = (
        '<tool_call>[{"tool_name": "get_time", "parameters": {}}, {"id": 2}, '
        '{"tool_name": "get_weather", "parameters": {"city": "Rome"}}]</tool_call>'
    )
    parsed = parse_checked(parser(template), text)
    assert calls(parsed) == [("get_time", {}), ("get_weather", {"city": "Rome"})]
    assert EventName.IGNORED_MEMBER in events(parsed)


def test_a_json_dialect_gives_canonical_json() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        content_args={"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
    )
    text = (
        '<tool_call>{name:<|"|>get_weather<|"|>,arguments:{city:<|"|>Pa"ris<|"|>,days:3}}'
        "</tool_call>"
    )
    parsed = parse_checked(parser(template), text)
    assert parsed.tool_calls[0].arguments == '{"city": "Pa\\"ris", "days": 3}'


def test_a_dialect_value_json_cannot_hold_ends_the_arguments() -> None:
    template = with_field(HERMES, "tool_calls", content_args={"unquoted_keys": True})
    text = '<tool_call>{name: "get_weather", arguments: {city: Paris}}</tool_call>'
    parsed = parse_checked(parser(template), text)
    assert parsed.tool_calls[0].arguments == '{"city": '
    assert parsed.content == "Paris}}"
    assert EventName.MALFORMED_ARGUMENTS in events(parsed)


# -- calls: the name in the opener ------------------------------------------------------------


def test_xml_inline_values_are_typed_by_the_tools_schema() -> None:
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\n123\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=metric>\ntrue\n</parameter>\n"
        "<parameter=extra>\n[1]\n</parameter>\n</function>\n</tool_call>"
    )
    parsed = parse_checked(parser(CODER), text)
    assert calls(parsed) == [
        ("get_weather", {"city": "123", "days": 3, "metric": True, "extra": "[1]"})
    ]


def test_a_repeated_parameter_keeps_the_first() -> None:
    text = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>A</arg_value>"
        "<arg_key>city</arg_key><arg_value>B</arg_value></tool_call>"
    )
    parsed = parse_checked(parser(GLM), text)
    assert calls(parsed) == [("get_weather", {"city": "A"})]
    assert EventName.DUPLICATE_KEY in events(parsed)


def test_an_empty_capture_is_no_name() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        open=None,
        open_pattern="<call(?: (?P<name>\\w+))?>",
        close="</call>",
        transform={"function": {"name": "{name}", "arguments": "{content}"}},
    )
    parsed = parse_checked(parser(template), "<call>{}</call>")
    assert parsed.tool_calls == ()
    assert parsed.content == "<call>{}</call>"


def test_kv_lines_become_members() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        open=None,
        open_pattern="<call (?P<name>\\w+)>",
        close="</call>",
        content="kv-lines",
        transform={"function": {"name": "{name}", "arguments": "{content}"}},
    )
    text = "<call get_weather>\ncity: Paris: FR\nno separator here\ndays: 2\n</call>"
    parsed = parse_checked(parser(template), text)
    assert calls(parsed) == [("get_weather", {"city": "Paris: FR", "days": 2})]
    assert EventName.IGNORED_TEXT in events(parsed)


def test_a_literal_name_makes_every_region_that_call() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        open="<python>",
        close="</python>",
        content="text",
        transform={"function": {"name": "run_python", "arguments": "{content}"}},
    )
    parsed = parse_checked(parser(template), '<python>\n{"code": "print(1)"}\n</python>')
    assert calls(parsed) == [("run_python", {"code": "print(1)"})]


def test_a_shape_no_streaming_reader_covers_is_read_whole() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        content="kv-lines",
        transform={"function": {"name": "{content.tool}", "arguments": {"raw": "{content.args}"}}},
    )
    text = "<tool_call>\ntool: get_time\nargs: now\n</tool_call>"
    parsed = parse_checked(parser(template), text)
    assert calls(parsed) == [("get_time", {"raw": "now"})]


# -- the other shipped templates -------------------------------------------------------------


def test_mistral_calls_end_where_the_next_begins() -> None:
    text = 'Hi[TOOL_CALLS]get_weather[ARGS]{"city": "Lyon"}[TOOL_CALLS]get_time[ARGS]{}'
    parsed = parse_checked(parser(MISTRAL), text)
    assert parsed.content == "Hi"
    assert calls(parsed) == [("get_weather", {"city": "Lyon"}), ("get_time", {})]
    assert EventName.MISSING_END not in events(parsed)


def test_llama3_json_calls_at_the_start_and_after_the_python_tag() -> None:
    text = (
        '{"name": "get_time", "parameters": {}}; '
        '{"name": "get_weather", "parameters": {"city": "A"}}'
    )
    parsed = parse_checked(parser(LLAMA), text)
    assert calls(parsed) == [("get_time", {}), ("get_weather", {"city": "A"})]
    later = parse_checked(parser(LLAMA), 'Sure. {"name": "get_time", "parameters": {}}')
    assert later.tool_calls == ()


def test_a_mistral_call_is_announced_when_args_arrives_even_at_the_end() -> None:
    # The opener [TOOL_CALLS]NAME[ARGS] cannot grow once [ARGS] is read: a call at once.
    stream = parser(MISTRAL).stream()
    deltas = [*stream.feed("Here"), *stream.feed("[TOOL_CALLS]get_time[ARGS]")]
    assert [entry.name for delta in deltas for entry in delta.tool_calls] == ["get_time"]
    parse_checked(parser(MISTRAL), "Here[TOOL_CALLS]get_time[ARGS]")


def test_llama3_json_holds_a_possible_call_start_and_reads_punctuation_as_text() -> None:
    hf = parser(LLAMA)
    assert hf.unmarked_starts == ("{",)
    assert hf.markers == ("<|python_tag|>",)  # not ';': a single character is punctuation
    parsed = parse_checked(parser(LLAMA), '{</x>"name": "get_time", "parameters": {}}; ok; fine')
    assert parsed.tool_calls == ()
    assert parsed.content == '{</x>"name": "get_time", "parameters": {}}; ok; fine'


def test_an_element_that_breaks_is_content_whole() -> None:
    template = with_field(
        HERMES,
        "tool_calls",
        transform={"function": {"name": "{name}", "arguments": "{arguments}"}},
        transform_each=True,
    )
    text = (
        '<tool_call>[{"name": "get_time", "arguments": {}}, '
        '{"name": 1 "get_weather", "arguments": {}}]</tool_call>'
    )
    parsed = parse_checked(parser(template), text)
    assert calls(parsed) == [("get_time", {})]
    assert parsed.content == '{"name": 1 "get_weather", "arguments": {}}]'
    elements = '<tool_call>[{"name": "get_time", "arguments": {}}, 7, {"name": 2}]</tool_call>'
    parsed = parse_checked(parser(template), elements)
    assert events(parsed).count(EventName.IGNORED_MEMBER) == 2  # nothing dropped silently


def test_dialect_arguments_the_region_ends_in_leave_the_rest_as_content() -> None:
    template = with_field(HERMES, "tool_calls", content_args={"unquoted_keys": True})
    text = '<tool_call>{name: "get_weather", arguments: {city: [1, x</tool_call> ok'
    parsed = parse_checked(parser(template), text)
    assert parsed.tool_calls[0].arguments == '{"city": [1, '
    assert parsed.content == "x ok"


def test_a_tag_cut_by_the_end_keeps_its_key_and_gives_its_value_as_content() -> None:
    text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Par"
    parsed = parse_checked(parser(GLM), text)
    assert parsed.tool_calls[0].arguments == '{"city": '
    assert parsed.content == "Par"
    head = parse_checked(parser(GLM), "<tool_call>get_weather<arg_key>ci")
    assert head.tool_calls[0].arguments == "{"
    assert head.content == "ci"  # <arg_key> is framing, as GLM's own parser reads it


# -- never raise --------------------------------------------------------------------------------


def test_a_bug_in_a_body_reader_makes_the_rest_content(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolcall_hf_response_template import bodies

    def broken(self: object, text: str, start: int) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(bodies.JsonBody, "feed", broken)
    hf = parser(HERMES)
    stream = hf.stream()
    deltas = [*stream.feed("ok <tool_call>{"), *stream.feed('"name": "f"}</tool_call> x')]
    deltas += stream.finish()
    content = "".join(delta.content for delta in deltas)
    assert content == 'ok <tool_call>{"name": "f"}</tool_call> x'
    names = [event.name for event in stream.events]
    assert names[0] == EventName.INTERNAL_ERROR
    assert set(names) <= {EventName.INTERNAL_ERROR, EventName.UNPARSED_MARKUP}
