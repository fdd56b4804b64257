"""End to end: Responses API tools the model sees under names vLLM makes up.

vLLM 0.33 shows the model each function of a ``namespace`` tool (MCP-style groups) as
``NAMESPACE__NAME`` and a ``custom`` tool as a function of one string, ``input``
(``get_function_tools``, vllm/tool_parsers/utils.py:212-244); it maps a call back to the
namespace and the local name (``resolve_responses_tool_call_name``) or to a
``custom_tool_call`` with the decoded ``input``. Our parsers must read those calls as calls,
under the names the model was told: before, a request whose tools were only such groups
got every call back as content.

Every expectation comes from the format and vLLM's rules, never from our output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from e2e_support import Endpoint, no_bridge_errors

from toolcall_conformance.tokenizers import get_tokenizer
from toolcall_replay.script import Recording

pytestmark = pytest.mark.vllm

PATH_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "namespace",
        "name": "mcp__fs",
        "description": "The user's files.",
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file.",
                "parameters": PATH_SCHEMA,
            }
        ],
    },
    {"type": "custom", "name": "run_sql", "description": "Run one SQL statement."},
]
CONTENT = "Reading it."
FLAT = "mcp__fs__read_file"  # what the model is told the function is called
ARGUMENTS = {"path": "notes.txt"}
SQL = "SELECT 1"

#: The same output in each family's format: content, a call of the namespaced function,
#: a call of the custom tool.
OUTPUTS = {
    "hermes": (
        f"{CONTENT}\n<tool_call>\n"
        + json.dumps({"name": FLAT, "arguments": ARGUMENTS})
        + "\n</tool_call>\n<tool_call>\n"
        + json.dumps({"name": "run_sql", "arguments": {"input": SQL}})
        + "\n</tool_call>"
    ),
    "glm47": (
        f"{CONTENT}\n<tool_call>{FLAT}\n<arg_key>path</arg_key>\n"
        f"<arg_value>{ARGUMENTS['path']}</arg_value>\n</tool_call>"
        f"<tool_call>run_sql\n<arg_key>input</arg_key>\n<arg_value>{SQL}</arg_value>\n"
        "</tool_call>"
    ),
}
TOKENIZERS = {"hermes": "qwen2.5", "glm47": "glm4.5"}
FIXTURES = {"hermes": "e2e_hermes", "glm47": "e2e_glm47"}


def expected_items() -> list[tuple[Any, ...]]:
    """vLLM's output items for the two calls: a ``function_call`` named by its local name
    in its namespace, and a ``custom_tool_call`` carrying the decoded input."""
    return [
        ("function_call", "mcp__fs", "read_file", ARGUMENTS),
        ("custom_tool_call", None, "run_sql", SQL),
    ]


@pytest.fixture(params=["hermes", "glm47"])
def endpoint(request: pytest.FixtureRequest) -> tuple[str, Endpoint]:
    family: str = request.param
    endpoint: Endpoint = request.getfixturevalue(FIXTURES[family])
    ids = get_tokenizer(TOKENIZERS[family]).encode(OUTPUTS[family])
    endpoint.server.add(
        Recording.from_token_ids(f"namespaces-{family}", ids, prompt_contains="[e2e:namespaces]")
    )
    return family, endpoint


def body(endpoint: Endpoint) -> dict[str, Any]:
    return {"model": endpoint.model, "input": "Read notes.txt [e2e:namespaces]", "tools": TOOLS}


def test_responses_api(endpoint: tuple[str, Endpoint]) -> None:
    _family, server = endpoint
    with no_bridge_errors(server):
        response = server.openai.responses.create(**body(server))
    items = []
    content = []
    for item in response.output:
        if item.type == "function_call":
            items.append((item.type, item.namespace, item.name, json.loads(item.arguments)))
        elif item.type == "custom_tool_call":
            items.append((item.type, None, item.name, item.input))
        elif item.type == "message":
            content += [part.text for part in item.content if part.type == "output_text"]
    assert items == expected_items()
    assert "".join(content).strip() == CONTENT
    assert response.status == "completed"


def test_responses_api_streaming(endpoint: tuple[str, Endpoint]) -> None:
    _family, server = endpoint
    opened: dict[str, list[Any]] = {}
    content = []
    with (
        no_bridge_errors(server),
        server.openai.responses.create(**body(server), stream=True) as stream,
    ):
        for event in stream:
            if event.type == "response.output_text.delta":
                content.append(event.delta)
            elif event.type == "response.output_item.added" and event.item.type in (
                "function_call",
                "custom_tool_call",
            ):
                opened[event.item.id] = [event.item.type, event.item.name, []]
            elif event.type == "response.function_call_arguments.delta":
                opened[event.item_id][2].append(event.delta)
            elif event.type == "response.completed":
                done = event.response
    assert [(kind, name) for kind, name, _ in opened.values()] == [
        (kind, name) for kind, _namespace, name, _arguments in expected_items()
    ]
    final = [
        (item.type, getattr(item, "namespace", None), item.name)
        for item in done.output
        if item.type in ("function_call", "custom_tool_call")
    ]
    assert final == [item[:3] for item in expected_items()]
    function = next(item for item in done.output if item.type == "function_call")
    assert json.loads(function.arguments) == ARGUMENTS
    assert "".join(content).strip() == CONTENT
