"""End to end: every shipped case of qwen3_coder (toolcall-qwen, a template on the hf engine)
through the real ``vllm serve`` with our plugin, as the real clients receive it.

Each case's recorded token ids are replayed by a server started with
``--enable-auto-tool-choice --tool-call-parser qwen3_coder`` on a Qwen3 model directory (the
Qwen3 tokenizer on a stand-in text config, see toolcall_replay.model_dir). Every case is asked
through Chat Completions (streaming and not), the first of each shaping also through the
Responses API and the Anthropic Messages endpoint (e2e_support.case_params); what the client
gets must be the case's ``expected`` parse shaped by each API's rules (e2e_support.expect),
with the bridge checking the delta contract live. ``qwen3_xml`` is the same parser under
vLLM's second name, an alias (plugins/qwen/tests/test_registry.py), so it is not served again.
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


def run(endpoint: Endpoint, case: Case, api: str) -> None:
    ask = ask_for(case)
    with no_bridge_errors(endpoint):
        answer = endpoint.send(api, ask)
    expected = expect_case(case, api, ask)
    problem = difference(expected, answer, api)
    assert problem is None, f"{case.id} via {api}: {problem}\n  expected {expected}\n  got {answer}"


@pytest.mark.parametrize(("case", "api"), case_params("qwen3_coder", "qwen3"))
def test_qwen3_coder_corpus(e2e_qwen3_coder: Endpoint, case: Case, api: str) -> None:
    run(e2e_qwen3_coder, case, api)


def test_every_shipped_qwen3_coder_case_is_run() -> None:
    from toolcall_conformance.cases import load_cases, shipped_case_dirs

    shipped, _ = load_cases(shipped_case_dirs("qwen3_coder"))
    assert sorted(c.id for c in corpus("qwen3_coder", "qwen3")) == sorted(c.id for c in shipped)
