"""End to end (issue 12): every shipped case of llama3_json, llama4_json and llama4_pythonic
through the real ``vllm serve`` with our plugin, as the real clients receive it.

Each case's recorded token ids are replayed by a server started with
``--enable-auto-tool-choice --tool-call-parser NAME``: llama3_json on the Llama 3.1 model
directory, llama4_json and llama4_pythonic on the Llama 4 one (Llama 4's real tokenizer on a
stand-in text config, see toolcall_replay.model_dir). Every case is asked through Chat
Completions (streaming and not), the first of each shaping also through the Responses API and
the Anthropic Messages endpoint (e2e_support.case_params); what
the client gets must be the case's ``expected`` parse shaped by each API's rules
(e2e_support.expect), with the bridge checking the delta contract live. The servers are
started one at a time when the test runs one family at a time (``-k llama3_json``, ...).

The stop tokens: ``<|eom_id|>`` ends a Llama 3.1 tool call in Meta's own format, and vLLM
stops there without handing it to the parser, which these tests show with a recording that
ends with it.
"""

from __future__ import annotations

import pytest
from e2e_support import (
    Endpoint,
    ask_for,
    case_params,
    corpus,
    difference,
    expect_case,
    no_bridge_errors,
)

from toolcall_conformance.cases import Case

pytestmark = pytest.mark.vllm

EOM_ID = 128008  # Llama 3.1's <|eom_id|>


def run(endpoint: Endpoint, case: Case, api: str) -> None:
    ask = ask_for(case)
    with no_bridge_errors(endpoint):
        answer = endpoint.send(api, ask)
    expected = expect_case(case, api, ask)
    problem = difference(expected, answer, api)
    assert problem is None, f"{case.id} via {api}: {problem}\n  expected {expected}\n  got {answer}"


@pytest.mark.parametrize(("case", "api"), case_params("llama3_json", "llama3.1"))
def test_llama3_json_corpus(e2e_llama3_json: Endpoint, case: Case, api: str) -> None:
    run(e2e_llama3_json, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("llama4_json", "llama4"))
def test_llama4_json_corpus(e2e_llama4_json: Endpoint, case: Case, api: str) -> None:
    run(e2e_llama4_json, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("llama4_pythonic", "llama4"))
def test_llama4_pythonic_corpus(e2e_llama4_pythonic: Endpoint, case: Case, api: str) -> None:
    run(e2e_llama4_pythonic, case, api)


def test_every_shipped_llama_case_is_run() -> None:
    from toolcall_conformance.cases import load_cases, shipped_case_dirs

    for parser, tokenizer in (
        ("llama3_json", "llama3.1"),
        ("llama4_json", "llama4"),
        ("llama4_pythonic", "llama4"),
    ):
        shipped, _ = load_cases(shipped_case_dirs(parser))
        assert sorted(c.id for c in corpus(parser, tokenizer)) == sorted(c.id for c in shipped)


@pytest.mark.parametrize("api", ["chat", "chat-stream"])
def test_eom_id_ends_the_call_and_never_reaches_the_parser(
    e2e_llama3_json: Endpoint, api: str
) -> None:
    """A Llama 3.1 tool call in Meta's ipython format ends with <|eom_id|> (128008), a stop
    id of the model's generation config: vLLM stops there, and neither the content nor the
    arguments hold its text."""
    from toolcall_replay.script import Recording

    [case] = [c for c in corpus("llama3_json", "llama3.1") if c.id.endswith("/python-tag-call")]
    steps = [tuple(step.token_ids or ()) for step in case.steps] + [(EOM_ID,)]
    marker = f"[eom:{case.id}]"
    e2e_llama3_json.server.add(
        Recording.from_steps(f"eom:{case.id}", steps, prompt_contains=marker)
    )
    ask = ask_for(case, marker=marker)
    with no_bridge_errors(e2e_llama3_json):
        answer = e2e_llama3_json.send(api, ask)
    assert difference(expect_case(case, api, ask), answer, api) is None
    assert answer.finish == "tool_calls"
    assert "<|eom_id|>" not in (answer.content or "")
    assert all("<|eom_id|>" not in call.arguments for call in answer.calls)
    requests = e2e_llama3_json.server.engine_requests(f"eom:{case.id}")
    assert requests
    assert EOM_ID in requests[-1]["sampling"]["stop_token_ids"]
