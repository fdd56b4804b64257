"""End to end with the reasoning parsers users pair with our families: every case of the
corpus, with a reasoning block in front, through Chat Completions, and the first case of each
shaping (e2e_support.case_params) through all three APIs.

* ``--tool-call-parser hermes --reasoning-parser qwen3`` (Qwen3 serves hermes-format calls).
  The model directory is Qwen2.5's, whose real vocabulary has no ``<think>`` token (Qwen3
  added ``<think>`` 151667 and ``</think>`` 151668; no Qwen3 tokenizer is built here, and ids
  are never typed by hand). So the reasoning block is tokenized by the real Qwen2.5 tokenizer
  and ``<think>`` arrives as three text tokens (``<``, ``think``, ``>``). vLLM 0.33's
  ``qwen3`` reasoning parser (``Qwen3ParserReasoningAdapter``, engine based) matches its
  markers as text (``ParserEngineConfig.terminals``; the token-id terminals are looked up in
  the vocabulary and simply absent), so it splits the reasoning off exactly as with the
  single-token markers; what this does not exercise is vLLM's token-id shortcut for the end
  of reasoning (``is_reasoning_end`` on ids).
* ``--tool-call-parser glm45 --reasoning-parser glm45``: GLM-4.5's vocabulary has
  ``<think>``/``</think>`` as added tokens, and the real tokenizer gives those ids.
* ``--tool-call-parser mistral --reasoning-parser mistral --tokenizer-mode mistral``
  (Magistral): ``[THINK]`` (34) and ``[/THINK]`` (35) are control tokens of the v11 tekken
  file, which vLLM's detokenizer keeps as text; vLLM's reasoning parser takes the block off
  before our parser sees the rest. Through the Responses API only: vLLM 0.33's mistral
  reasoning parser fails Chat and Messages requests itself (see the test at the end).

The two servers also run with ``--tool-strict-level`` (``function`` and ``parameter``;
checked in test_e2e_strictness.py), which does not change what is parsed: the replay
accepts a grammar but does not apply it.
"""

from __future__ import annotations

import pytest
from e2e_support import (
    REASONING,
    Endpoint,
    ask_for,
    case_params,
    corpus,
    difference,
    expect_case,
    no_bridge_errors,
    think_length,
    think_marker,
)

from toolcall_conformance.cases import Case
from toolcall_conformance.tokenizers import get_tokenizer

pytestmark = pytest.mark.vllm


def run(endpoint: Endpoint, case: Case, api: str, family: str) -> None:
    tokenizer = get_tokenizer(case.tokenizer or "")
    ask = ask_for(case, marker=think_marker(case), extra_ids=think_length(tokenizer, family))
    with no_bridge_errors(endpoint):
        answer = endpoint.send(api, ask)
    expected = expect_case(case, api, ask, reasoning=REASONING)
    problem = difference(expected, answer, api)
    assert problem is None, f"{case.id} via {api}: {problem}\n  expected {expected}\n  got {answer}"


@pytest.mark.parametrize(("case", "api"), case_params("hermes", "qwen2.5"))
def test_hermes_with_qwen3_reasoning(e2e_hermes_qwen3: Endpoint, case: Case, api: str) -> None:
    run(e2e_hermes_qwen3, case, api, "qwen2.5")


@pytest.mark.parametrize(("case", "api"), case_params("glm45", "glm4.5"))
def test_glm45_with_glm45_reasoning(e2e_glm45_reasoning: Endpoint, case: Case, api: str) -> None:
    run(e2e_glm45_reasoning, case, api, "glm4.5")


MISTRAL_THINK = [
    param
    for param in case_params("mistral", "mistral-tekken-v11", sample=False)
    # Responses only: see test_vllms_mistral_reasoning_parser_refuses_chat below. A case that
    # brings its own [THINK] block would get two.
    if param.values[1].startswith("responses") and "[THINK]" not in param.values[0].text
]


@pytest.mark.parametrize(("case", "api"), MISTRAL_THINK)
def test_mistral_with_mistral_reasoning(
    e2e_mistral_reasoning: Endpoint, case: Case, api: str
) -> None:
    run(e2e_mistral_reasoning, case, api, "mistral-tekken-v11")


@pytest.mark.parametrize("api", ["chat", "chat-stream", "messages"])
def test_vllms_mistral_reasoning_parser_refuses_chat(
    e2e_mistral_reasoning: Endpoint, api: str
) -> None:
    """A finding about vLLM 0.33, not about our parser: with ``--reasoning-parser mistral``
    and a grammar-capable (v11+ tekken) tokenizer, vLLM's own reasoning parser
    (``MistralParserReasoningAdapter.adjust_request`` -> ``parser/mistral.py``) calls
    mistral-common's ``GrammarFactory.get_lark_from_jinja`` without ``force_tool_names``,
    which mistral-common 1.13.1 (the version vLLM 0.33's environment resolves) requires: every
    Chat Completions and Messages request with tools fails with HTTP 400 before any parser
    runs. The Responses API takes vLLM's other branch and works (the test above). When this
    test fails, vLLM or mistral-common changed: run the whole matrix above instead."""
    case = next(c for c in corpus("mistral", "mistral-tekken-v11") if "v13-single" in c.id)
    answer = e2e_mistral_reasoning.send(api, ask_for(case, marker=think_marker(case)))
    assert answer.error is not None
    assert answer.error[0] == 400
    assert "force_tool_names" in answer.error[1]


def test_think_markers_are_text_in_qwen25_and_tokens_in_glm45() -> None:
    """The premise of the module docstring, from the real tokenizers."""
    qwen = get_tokenizer("qwen2.5")
    glm = get_tokenizer("glm4.5")
    assert "<think>" not in qwen.special_tokens
    assert len(qwen.encode("<think>")) > 1
    assert qwen.hf_tokenizer.decode(qwen.encode("<think>\nx\n</think>")) == "<think>\nx\n</think>"
    assert glm.encode("<think>") == [glm.special_tokens["<think>"]]
    assert glm.encode("</think>") == [glm.special_tokens["</think>"]]
