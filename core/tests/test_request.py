"""The request view a parser reads: ``Request`` and ``Request.from_openai``."""

from __future__ import annotations

from typing import Any

import pytest

from toolcall import NamedChoice, Request, Tool
from toolcall.types import CUSTOM_TOOL_PARAMETERS, function_tools

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
LOOKUP = {"type": "object", "properties": {"id": {"type": "integer"}}}


# -- Request(...) ------------------------------------------------------------------------


def test_no_tools_may_be_given_as_none() -> None:
    request = Request(tools=None)  # type: ignore[arg-type]
    assert request.tools == ()
    assert request == Request()


def test_tools_are_kept_as_a_tuple() -> None:
    tool = Tool("get_weather", WEATHER)
    request = Request(tools=[tool])  # type: ignore[arg-type]
    assert request.tools == (tool,)
    assert isinstance(request.tools, tuple)
    assert request == Request(tools=(tool,))


@pytest.mark.parametrize(
    ("tools", "named"),
    [
        ("get_weather", "str"),
        (3, "int"),
        ({"name": "get_weather"}, "dict"),
        ([{"type": "function", "function": {"name": "get_weather"}}], "dict"),
        ([Tool("a"), None], "NoneType"),
    ],
)
def test_anything_else_is_a_type_error_naming_the_type(tools: Any, named: str) -> None:
    with pytest.raises(TypeError, match=f"Request.tools must be Tool values, not {named}$"):
        Request(tools=tools)


# -- Request.from_openai: the tools as vLLM shows them to the model -------------------------


def test_chat_and_responses_function_tools() -> None:
    chat = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    responses = {"type": "function", "name": "lookup", "parameters": LOOKUP, "strict": True}
    request = Request.from_openai({"tools": [chat, responses]})
    assert request.tools == (Tool("get_weather", WEATHER), Tool("lookup", LOOKUP, strict=True))
    assert request.tool_choice == "auto"


def test_a_namespace_is_flattened_to_namespace__name() -> None:
    """vLLM 0.33 names a namespace's function ``NAMESPACE__NAME`` to the model
    (``flat_namespace_tool_name``) and drops the namespace's custom tools."""
    namespace = {
        "type": "namespace",
        "name": "mcp__fs",
        "description": "The file system.",
        "tools": [
            {"type": "function", "name": "read", "parameters": LOOKUP, "description": "Read."},
            {"type": "custom", "name": "patch"},
            {"type": "function", "name": "list", "strict": False},
        ],
    }
    request = Request.from_openai({"tools": [namespace]})
    assert request.tools == (
        Tool("mcp__fs__read", LOOKUP, description="Read."),
        Tool("mcp__fs__list", strict=False),
    )
    assert request.tool_choice == "auto"
    assert request.tool("mcp__fs__read") is not None


def test_a_custom_tool_is_a_function_of_one_string() -> None:
    custom = {"type": "custom", "name": "run_sql", "description": "Run SQL."}
    (tool,) = Request.from_openai({"tools": [custom]}).tools
    assert tool == Tool("run_sql", CUSTOM_TOOL_PARAMETERS, description="Run SQL.")
    assert tool.parameters is not None
    assert tool.parameters["properties"]["input"]["type"] == "string"
    assert tool.parameters["required"] == ["input"]


def test_tools_the_model_never_sees_are_skipped() -> None:
    tools = [
        {"type": "web_search"},
        {"type": "mcp", "server_label": "docs", "server_url": "https://example.com"},
        {"type": "function", "name": "lookup"},
    ]
    assert [tool.name for tool in function_tools(tools)] == ["lookup"]


def test_request_order_is_kept_across_kinds() -> None:
    tools = [
        {"type": "custom", "name": "first"},
        {"type": "namespace", "name": "ns", "description": "", "tools": [
            {"type": "function", "name": "second"},
            {"type": "function", "name": "third"},
        ]},
        {"type": "function", "name": "fourth"},
    ]  # fmt: skip
    assert [tool.name for tool in function_tools(tools)] == [
        "first",
        "ns__second",
        "ns__third",
        "fourth",
    ]


@pytest.mark.parametrize(
    ("tool", "complaint"),
    [
        ({"type": "namespace", "tools": []}, "a namespace tool needs a name and a list of tools"),
        ({"type": "namespace", "name": "ns"}, "a namespace tool needs a name and a list of tools"),
        ({"type": "custom"}, "a custom tool needs a name"),
        ({"type": "namespace", "name": "ns", "tools": [{"type": "function"}]}, "function name"),
    ],
)
def test_malformed_grouped_tools_are_value_errors(tool: Any, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        Request.from_openai({"tools": [tool]})


def test_a_named_custom_or_namespaced_choice() -> None:
    custom = Request.from_openai(
        {
            "tools": [{"type": "custom", "name": "run_sql"}],
            "tool_choice": {"type": "custom", "name": "run_sql"},
        }
    )
    assert custom.tool_choice == NamedChoice("run_sql")
    # vLLM's request validator has already resolved a namespaced choice to its flat name
    namespaced = Request.from_openai(
        {
            "tools": [{"type": "namespace", "name": "ns", "description": "", "tools": [
                {"type": "function", "name": "read"}
            ]}],
            "tool_choice": {"type": "function", "name": "ns__read"},
        }
    )  # fmt: skip
    assert namespaced.tool_choice == NamedChoice("ns__read")
    assert namespaced.tool("ns__read") is not None
