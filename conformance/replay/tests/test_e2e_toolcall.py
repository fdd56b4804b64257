"""End to end (issue 7): every shipped case of each family through the real ``vllm serve``
with our plugin, as the real clients receive it.

Each case is replayed (its recorded token ids, step by step) by a server started with
``--enable-auto-tool-choice --tool-call-parser NAME`` and the ``toolcall`` plugin, and asked
through Chat Completions (streaming and not); the first case of each shaping
(e2e_support.case_params) also through the Responses API and the Anthropic Messages endpoint
(streaming and not). What the client receives must be the case's
``expected`` parse, shaped by each API's rules (e2e_support.expect). The servers run with
``TOOLCALL_CHECK_CONTRACT=1``, so the bridge also checks the delta contract on every live
stream; a test fails if the bridge logged anything at WARNING or above while it ran.

The Hermes cases recorded with the Llama 3.1 tokenizer (``hermes/llama3.1/*``, Hermes 3
outputs) run on their own server with the Llama 3.1 model directory: there ``<tool_call>`` is
not a token but text split over several ids.
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


@pytest.mark.parametrize(("case", "api"), case_params("hermes", "qwen2.5"))
def test_hermes_corpus(e2e_hermes: Endpoint, case: Case, api: str) -> None:
    run(e2e_hermes, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("hermes", "llama3.1"))
def test_hermes_llama_corpus(e2e_hermes_llama: Endpoint, case: Case, api: str) -> None:
    run(e2e_hermes_llama, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("glm45", "glm4.5"))
def test_glm45_corpus(e2e_glm45: Endpoint, case: Case, api: str) -> None:
    run(e2e_glm45, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("glm47", "glm4.5"))
def test_glm47_corpus(e2e_glm47: Endpoint, case: Case, api: str) -> None:
    run(e2e_glm47, case, api)


@pytest.mark.parametrize(("case", "api"), case_params("mistral", "mistral-tekken-v11"))
def test_mistral_corpus(e2e_mistral: Endpoint, case: Case, api: str) -> None:
    run(e2e_mistral, case, api)


def test_every_shipped_case_of_the_families_is_run() -> None:
    """The corpora above are every shipped case of hermes, glm45 and glm47 (none is left out
    for want of a model directory)."""
    from toolcall_conformance.cases import load_cases, shipped_case_dirs

    for parser, tokenizers in {
        "hermes": ("qwen2.5", "llama3.1"),
        "glm45": ("glm4.5",),
        "glm47": ("glm4.5",),
    }.items():
        shipped, _ = load_cases(shipped_case_dirs(parser))
        run_here = [c.id for t in tokenizers for c in corpus(parser, t)]
        assert sorted(run_here) == sorted(c.id for c in shipped), parser
        assert run_here
