from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

# vLLM picks its platform when it is first imported; on a machine without a GPU it must be told.
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

HAVE_VLLM = importlib.util.find_spec("vllm") is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if HAVE_VLLM:
        return
    skip = pytest.mark.skip(reason="needs vLLM 0.33 installed (the vllm nox session runs these)")
    for item in items:
        if "vllm" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def qwen() -> object:
    from toolcall_conformance.tokenizers import get_tokenizer

    return get_tokenizer("qwen2.5")


@pytest.fixture(scope="session")
def hermes_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One ``vllm serve`` (built-in hermes parser, Qwen2.5 model dir) for the whole session."""
    from toolcall_replay.model_dir import build_model_dir
    from toolcall_replay.server import ReplayServer

    model_dir = build_model_dir("qwen2.5")
    workdir = tmp_path_factory.mktemp("hermes-server")
    with ReplayServer(model_dir, tool_call_parser="hermes", plugins=(), workdir=workdir) as server:
        yield server


@pytest.fixture(scope="module")
def glm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A ``vllm serve`` (built-in glm45 parser, GLM-4.5 model dir) for the module that asks."""
    from toolcall_replay.model_dir import build_model_dir
    from toolcall_replay.server import ReplayServer

    model_dir = build_model_dir("glm4.5")
    workdir = tmp_path_factory.mktemp("glm-server")
    with ReplayServer(model_dir, tool_call_parser="glm45", plugins=(), workdir=workdir) as server:
        yield server
