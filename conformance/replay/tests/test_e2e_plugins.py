"""End to end: which parser answered, and what a broken plugin does to the server.

Evidence that our parser, not vLLM's built-in of the same name, handled the requests:

* the server log lines of our bridge naming, for every parser name it serves, the
  distribution and class (``hermes → toolcall-hermes 0.1.0 (...)``): our servers run with
  vLLM's default logging, as a plain ``vllm serve`` does, and the lines show there;
* behaviour: the same recordings through a server whose ``VLLM_PLUGINS`` excludes
  ``toolcall`` give exactly what vLLM's built-in parser gives in-process, which differs from
  the case's expected parse on several cases, where our server gives the expected one;
* the structural tag the engine receives (test_e2e_strictness.py) is the one our plugin
  builds, not the built-in's.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from e2e_support import (
    BROKEN_DISTRIBUTION,
    BROKEN_MESSAGE,
    Endpoint,
    ask_for,
    corpus,
    difference,
    expect,
    expect_case,
    served_lines,
)

from toolcall import Parsed, ToolCall
from toolcall_conformance.cases import Case, ExpectedCall
from toolcall_conformance.compare import first_difference

pytestmark = pytest.mark.vllm


#: Variables that would change vLLM's logging from what a plain ``vllm serve`` does.
LOGGING_VARIABLES = (
    "VLLM_CONFIGURE_LOGGING",
    "VLLM_LOGGING_CONFIG_PATH",
    "VLLM_LOGGING_LEVEL",
    "VLLM_LOGGING_STREAM",
    "VLLM_LOGGING_PREFIX",
)


@pytest.mark.parametrize(
    ("fixture", "parser"),
    [
        ("e2e_hermes", "hermes"),
        ("e2e_hermes_llama", "hermes"),
        ("e2e_glm45", "glm45"),
        ("e2e_glm47", "glm47"),
        ("e2e_hermes_qwen3", "hermes"),
        ("e2e_glm45_reasoning", "glm45"),
    ],
)
def test_our_bridge_says_which_parser_serves(
    request: pytest.FixtureRequest, fixture: str, parser: str
) -> None:
    """Under vLLM's default logging, one INFO line per parser name we serve, once, from
    the API server (the one process that looks parsers up), through vLLM's own handler."""
    endpoint: Endpoint = request.getfixturevalue(fixture)
    environment = endpoint.server.environment()
    assert environment["VLLM_PLUGINS"].split(",") == ["toolcall_replay", "toolcall"]
    assert not [name for name in LOGGING_VARIABLES if name in environment]
    lines = endpoint.log.toolcall_lines()
    expected = served_lines()
    assert parser in expected
    for name, message in expected.items():
        said = [line for line in lines if line.message == message]
        assert len(said) == 1, (name, lines)
        assert said[0].level == "INFO"
        assert said[0].where.startswith("adapters.py:")
    assert len({line.pid for line in lines}) == 1


def test_the_builtin_serves_when_vllm_plugins_excludes_toolcall(
    e2e_builtin_hermes: Endpoint,
) -> None:
    installed = {e.name for e in importlib.metadata.entry_points(group="vllm.general_plugins")}
    assert "toolcall" in installed  # so it is VLLM_PLUGINS that keeps it out
    assert e2e_builtin_hermes.server.environment()["VLLM_PLUGINS"] == "toolcall_replay"
    assert e2e_builtin_hermes.log.toolcall_lines() == []


def builtin_parse(case: Case) -> Parsed:
    """vLLM's built-in parser of the case's name, in this process, as the server composes it."""
    from toolcall_conformance.vllm_baseline import VllmBaseline

    baseline = VllmBaseline()
    parser_class = baseline.compose(baseline.builtin_class(case.parser))
    tokenizer = baseline.vllm_tokenizer(case.tokenizer or "")
    request = baseline.chat_request(case.request)
    parser = parser_class(tokenizer, request.tools)
    _reasoning, content, calls = parser.parse(
        case.text,
        request,
        enable_auto_tools=True,
        model_output_token_ids=list(case.token_ids or ()),
    )
    return Parsed(
        content=content,
        tool_calls=tuple(ToolCall(c.id or "", c.name, c.arguments) for c in calls or ()),
    )


def as_expected(parsed: Parsed) -> tuple[str | None, tuple[ExpectedCall, ...]]:
    calls = tuple(ExpectedCall(c.name, c.arguments) for c in parsed.tool_calls)
    return parsed.content, calls


def utf8_problem(parsed: Parsed) -> str | None:
    """Why a response holding ``parsed`` cannot be written as UTF-8 (a lone surrogate that
    the built-in decoded from a ``\\ud800`` escape), if it cannot."""
    texts = [parsed.content or ""]
    texts += [text for call in parsed.tool_calls for text in (call.name, call.arguments)]
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            return str(error)
    return None


def test_ours_and_the_builtin_answer_differently(
    e2e_hermes: Endpoint, e2e_builtin_hermes: Endpoint
) -> None:
    """Every plain ``auto`` hermes case through both servers (Chat, not streamed): the
    built-in server answers what vLLM's built-in parser gives in-process, ours what the case
    expects, and on some cases the two differ."""
    distinguishing = []
    problems = []
    for case in corpus("hermes", "qwen2.5"):
        if case.request.get("tool_choice", "auto") != "auto" or case.finish_reason != "stop":
            continue
        if case.request.get("parallel_tool_calls") is False:
            continue
        ask = ask_for(case)
        builtin = builtin_parse(case)
        content, calls = as_expected(builtin)
        want = expect(content, calls, "chat", ask, length=False)
        got = e2e_builtin_hermes.send("chat", ask)
        if (unwritable := utf8_problem(builtin)) is not None:
            # vLLM's server cannot serialise what its parser read: the request fails (400)
            # with the codec's reason, where ours reads no name (hermes README).
            if got.error is None or got.error[0] != 400 or "surrogates" not in got.error[1]:
                problems.append(f"{case.id}: {unwritable}, yet the built-in server gave {got}")
        elif (problem := difference(want, got, "chat")) is not None:
            problems.append(f"{case.id}: the built-in server is not the built-in parser: {problem}")
        if first_difference(case.expected, builtin, recoveries=False) is not None:
            distinguishing.append(case.id)
            ours = e2e_hermes.send("chat", ask)
            if (problem := difference(expect_case(case, "chat", ask), ours, "chat")) is not None:
                problems.append(f"{case.id}: ours is not the expected parse: {problem}")
    assert not problems, "\n".join(problems)
    assert len(distinguishing) >= 3, distinguishing
    print(f"{len(distinguishing)} cases tell the parsers apart: {distinguishing}")


# -- a plugin distribution that raises at import -------------------------------------------------


def test_a_broken_plugin_is_reported_and_the_others_serve(e2e_glm47: Endpoint) -> None:
    """The glm47 server has a toolcall plugin distribution on its path whose module raises at
    import: the server started, our registry reported the failure once, through vLLM's
    default logging, naming the distribution and the error, and glm47 serves (its whole
    corpus runs on this server in test_e2e_toolcall.py)."""
    lines = e2e_glm47.log.toolcall_lines()
    broken = [line for line in lines if BROKEN_DISTRIBUTION in line.message]
    assert len(broken) == 1, lines
    assert broken[0].level == "ERROR"
    assert BROKEN_MESSAGE in broken[0].message
    assert served_lines()["glm47"] in [line.message for line in lines]
    case = corpus("glm47", "glm4.5")[0]
    ask = ask_for(case)
    answer = e2e_glm47.send("chat", ask)
    assert difference(expect_case(case, "chat", ask), answer, "chat") is None, answer


def test_the_broken_plugin_is_a_real_distribution(e2e_glm47: Endpoint) -> None:
    """The premise of the test above: the server's path holds real metadata for it."""
    site = e2e_glm47.server.environment()["PYTHONPATH"].split(":")[0]
    [dist] = list(importlib.metadata.distributions(path=[site]))
    assert dist.metadata["Name"] == BROKEN_DISTRIBUTION
    [entry] = dist.entry_points
    assert entry.group == "toolcall"
    source = (Path(site) / f"{entry.value}.py").read_text("utf-8")
    with pytest.raises(RuntimeError, match=BROKEN_MESSAGE):
        exec(compile(source, entry.value, "exec"), {})
