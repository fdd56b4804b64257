"""End to end: ``--tool-strict-level`` and per-tool ``strict`` reach our structural tag.

The replay engine logs the grammar each request carries to the engine core
(``sampling.structured_outputs.structural_tag``). Whether a tag is there follows vLLM 0.33's
rules (DESIGN §5: no tag for ``none``; none for ``auto`` at level AUTO without a strict tool;
a tag for required, named, a strict tool, ``parallel_tool_calls: false``, or a server level
above AUTO); a tool's schema is *pinned* (its ``parameters`` appear as a ``json_schema`` in
the tag) at level PARAMETER or when the tool says ``strict: true``. Where a tag is there, it
is the one our plugin builds for that plan, and not the one of vLLM's built-in.

Servers: ``hermes`` (parser default AUTO), ``glm45`` (parser default FUNCTION),
``hermes-qwen3`` (``--tool-strict-level function``), ``glm45-reasoning``
(``--tool-strict-level parameter``) and the built-in hermes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from e2e_support import Ask, Endpoint, corpus, think_marker

from toolcall import Request, StrictLevel
from toolcall.parser import ParserContext
from toolcall.registry import Registry
from toolcall.strictness import resolve_plan
from toolcall_replay.script import case_marker

pytestmark = pytest.mark.vllm

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
SEARCH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
NAMED: dict[str, Any] = {"type": "function", "function": {"name": "search"}}


def strict(tool: dict[str, Any]) -> dict[str, Any]:
    return {**tool, "function": {**tool["function"], "strict": True}}


def answered_by(endpoint: Endpoint) -> str:
    """The marker of a recorded case of the server's corpus (grammars are logged, not
    applied, so which case answers does not matter)."""
    assert endpoint.spec.corpus is not None
    case = corpus(*endpoint.spec.corpus)[0]
    return think_marker(case) if endpoint.spec.think else case_marker(case.id)


def engine_tag(endpoint: Endpoint, api: str, ask: Ask) -> dict[str, Any] | None:
    """Send ``ask`` and return the structural tag the engine core got (``None``: none)."""
    label = f"[probe:{uuid.uuid4().hex}]"
    ask = Ask(
        marker=f"{answered_by(endpoint)} {label}",
        tools=ask.tools,
        tool_choice=ask.tool_choice,
        parallel_tool_calls=ask.parallel_tool_calls,
    )
    answer = endpoint.send(api, ask)
    assert answer.error is None, answer
    [logged] = [r for r in endpoint.server.engine_requests() if label in r["prompt"]]
    structured = logged["sampling"]["structured_outputs"]
    if not structured:
        return None
    assert set(structured) >= {"structural_tag"}, structured
    tag: dict[str, Any] = json.loads(structured["structural_tag"])
    return tag


def json_schemas(node: object) -> Iterator[object]:
    if isinstance(node, Mapping):
        if node.get("type") == "json_schema":
            yield node.get("json_schema")
        for value in node.values():
            yield from json_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from json_schemas(value)


def pinned(tag: dict[str, Any], tools: tuple[Mapping[str, Any], ...]) -> set[str]:
    """The tools whose whole ``parameters`` schema the tag carries."""
    schemas = list(json_schemas(tag))
    return {t["function"]["name"] for t in tools if t["function"]["parameters"] in schemas}


def ours(endpoint: Endpoint, ask: Ask, level: StrictLevel | None) -> dict[str, Any] | None:
    """The tag our plugin builds for ``ask`` at the server's level, as vLLM serialises it."""
    import xgrammar

    parser_class = Registry.load().get(endpoint.server.tool_call_parser or "")
    view = Request.from_openai(
        {
            "tools": [dict(t) for t in ask.tools],
            **({"tool_choice": ask.tool_choice} if ask.tool_choice is not None else {}),
            **(
                {"parallel_tool_calls": ask.parallel_tool_calls}
                if ask.parallel_tool_calls is not None
                else {}
            ),
        }
    )
    plan = resolve_plan(view, strict_level=level, default_level=parser_class.default_strict_level)
    data = parser_class(ParserContext(request=view)).structural_tag(plan)
    if data is None:
        return None
    tag: dict[str, Any] = json.loads(
        json.dumps(xgrammar.StructuralTag.model_validate(data).model_dump())
    )
    return tag


def without_stop_after_first(node: object) -> object:
    """vLLM sets ``stop_after_first`` itself for ``parallel_tool_calls: false``."""
    if isinstance(node, Mapping):
        return {k: without_stop_after_first(v) for k, v in node.items() if k != "stop_after_first"}
    if isinstance(node, list):
        return [without_stop_after_first(v) for v in node]
    return node


@dataclass(frozen=True)
class Row:
    """One request of the grid and what the engine must get for it."""

    tools: tuple[Mapping[str, Any], ...]
    choice: Any = None
    parallel: bool | None = None
    tagged: bool = True  # a structural tag reaches the engine
    pins: frozenset[str] = frozenset()  # the tools whose schema it pins

    def ask(self) -> Ask:
        return Ask(
            marker="", tools=self.tools, tool_choice=self.choice, parallel_tool_calls=self.parallel
        )


#: The grid at level AUTO (the hermes parser's default).
AUTO_LEVEL = {
    "auto": Row((WEATHER, SEARCH), tagged=False),
    "auto-strict-tool": Row((strict(WEATHER), SEARCH), pins=frozenset({"get_weather"})),
    "required": Row((WEATHER, SEARCH), "required"),
    "required-strict-tool": Row((WEATHER, strict(SEARCH)), "required", pins=frozenset({"search"})),
    "named": Row((WEATHER, SEARCH), NAMED),
    "none": Row((strict(WEATHER), SEARCH), "none", tagged=False),
    "parallel-false": Row((WEATHER, SEARCH), parallel=False),
}


def rows_at(level: str) -> list[Any]:
    """The grid at a server level: above AUTO every choice but ``none`` gets a tag, and at
    ``parameter`` every tool the tag allows is pinned (a named choice allows one)."""
    out = []
    for label, row in AUTO_LEVEL.items():
        tagged = row.tagged or (level != "auto" and row.choice != "none")
        pins = set(row.pins)
        if level == "parameter" and tagged:
            pins = {t["function"]["name"] for t in row.tools}
        if row.choice == NAMED:
            pins &= {NAMED["function"]["name"]}
        out.append(pytest.param(replace(row, tagged=tagged, pins=frozenset(pins)), id=label))
    return out


def check(endpoint: Endpoint, level: StrictLevel | None, row: Row, api: str = "chat") -> None:
    ask = row.ask()
    tag = engine_tag(endpoint, api, ask)
    assert (tag is not None) == row.tagged, tag
    if tag is None:
        return
    assert pinned(tag, row.tools) == row.pins
    if row.choice == NAMED:
        assert "get_weather" not in json.dumps(tag)  # only the named tool may be called
    want = ours(endpoint, ask, level)
    assert without_stop_after_first(tag) == without_stop_after_first(want), "not our tag"


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("row", rows_at("auto"))
def test_hermes_default_level(e2e_hermes: Endpoint, row: Row, api: str) -> None:
    check(e2e_hermes, None, row, api)


@pytest.mark.parametrize("row", rows_at("function"))
def test_glm45_default_level_is_function(e2e_glm45: Endpoint, row: Row) -> None:
    check(e2e_glm45, None, row)


@pytest.mark.parametrize("row", rows_at("function"))
def test_server_level_function(e2e_hermes_qwen3: Endpoint, row: Row) -> None:
    assert "--tool-strict-level" in e2e_hermes_qwen3.server.command()
    check(e2e_hermes_qwen3, StrictLevel.FUNCTION, row)


@pytest.mark.parametrize("row", rows_at("parameter"))
def test_server_level_parameter(e2e_glm45_reasoning: Endpoint, row: Row) -> None:
    check(e2e_glm45_reasoning, StrictLevel.PARAMETER, row)


def test_the_builtin_sends_another_tag(e2e_builtin_hermes: Endpoint, e2e_hermes: Endpoint) -> None:
    """The same required request: vLLM's built-in hermes sends its own tag to the engine,
    ours sends ours, and they differ."""
    ask = Ask(marker="", tools=(WEATHER, SEARCH), tool_choice="required")
    builtin = engine_tag(e2e_builtin_hermes, "chat", ask)
    mine = engine_tag(e2e_hermes, "chat", ask)
    assert builtin is not None
    assert mine is not None
    assert without_stop_after_first(mine) == without_stop_after_first(ours(e2e_hermes, ask, None))
    assert builtin != mine
