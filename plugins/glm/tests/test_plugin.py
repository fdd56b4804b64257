"""The distribution: entry points, the registry, the parser classes' declarations."""

from __future__ import annotations

from importlib.metadata import distribution

from toolcall import StrictLevel
from toolcall.registry import Registry
from toolcall_glm import MARKERS, Glm45Parser, Glm47Parser
from toolcall_glm.plugin import toolcall_parsers


def test_the_entry_points_name_both_parsers() -> None:
    entry_points = {
        ep.name: ep.value
        for ep in distribution("toolcall-glm").entry_points
        if ep.group == "toolcall"
    }
    assert entry_points == {"glm45": "toolcall_glm.plugin", "glm47": "toolcall_glm.plugin"}
    assert list(toolcall_parsers()) == [Glm45Parser, Glm47Parser]


def test_the_registry_serves_them_from_this_distribution() -> None:
    registry = Registry.load()
    assert registry.get("glm45") is Glm45Parser
    assert registry.get("glm47") is Glm47Parser
    entries = {entry.name: entry for entry in registry.entries()}
    assert entries["glm45"].distribution == "toolcall-glm"
    assert entries["glm47"].distribution == "toolcall-glm"


def test_declarations() -> None:
    for parser_class in (Glm45Parser, Glm47Parser):
        assert parser_class.markers == MARKERS
        assert set(MARKERS) == {
            "<tool_call>",
            "</tool_call>",
            "<arg_key>",
            "</arg_key>",
            "<arg_value>",
            "</arg_value>",
        }
        # vLLM 0.33's Glm47MoeModelToolParser.default_tool_strict_level
        assert parser_class.default_strict_level is StrictLevel.FUNCTION
        assert parser_class.id_style == "openai"
    assert (Glm45Parser.name, Glm47Parser.name) == ("glm45", "glm47")
    assert Glm45Parser().new_call_id().startswith("chatcmpl-tool-")


def test_the_markers_are_single_tokens_of_the_real_tokenizer(glm_tokenizer: object) -> None:
    for marker in MARKERS:
        ids = glm_tokenizer.encode(marker)  # type: ignore[attr-defined]
        assert len(ids) == 1, marker
        assert glm_tokenizer.special_tokens[marker] == ids[0]  # type: ignore[attr-defined]
