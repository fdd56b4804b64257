from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from typing import Any

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


SERVERS_NEEDED = pytest.StashKey[list[str]]()


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_finish(session: pytest.Session) -> None:
    """Note which shared servers the selected tests use, so that they start together."""
    from e2e_support import SERVER_FIXTURES

    used = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    session.config.stash[SERVERS_NEEDED] = [
        server
        for fixture, servers in SERVER_FIXTURES.items()
        if fixture in used
        for server in ((servers,) if isinstance(servers, str) else servers)
    ]


@pytest.fixture(scope="session")
def qwen() -> object:
    from toolcall_conformance.tokenizers import get_tokenizer

    return get_tokenizer("qwen2.5")


@pytest.fixture(scope="session")
def fleet(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The shared ``vllm serve`` processes (e2e_support.SERVERS), started together on first use."""
    from e2e_support import Fleet

    parallel = int(os.environ.get("TOOLCALL_E2E_PARALLEL_STARTS", "4"))
    needed = request.config.stash.get(SERVERS_NEEDED, [])
    fleet = Fleet(needed, tmp_path_factory.mktemp("servers"), parallel=parallel)
    try:
        yield fleet
    finally:
        fleet.close()


@pytest.fixture(scope="session")
def hermes_server(fleet: Any) -> object:
    """One ``vllm serve`` (built-in hermes parser, Qwen2.5 model dir) for the whole session."""
    return fleet.server("builtin-hermes")


def _endpoint(fleet: Any, name: str) -> Iterator[Any]:
    from e2e_support import SERVERS, Endpoint

    endpoint = Endpoint(fleet.server(name), SERVERS[name])
    try:
        yield endpoint
    finally:
        endpoint.close()


@pytest.fixture(scope="session")
def e2e_hermes(fleet: Any) -> Iterator[Any]:
    """Our hermes (qwen2.5 model dir), the hermes corpus recorded."""
    yield from _endpoint(fleet, "hermes")


@pytest.fixture(scope="session")
def e2e_hermes_llama(fleet: Any) -> Iterator[Any]:
    """Our hermes (Llama 3.1 model dir), the hermes cases recorded with that tokenizer."""
    yield from _endpoint(fleet, "hermes-llama")


@pytest.fixture(scope="session")
def e2e_glm45(fleet: Any) -> Iterator[Any]:
    yield from _endpoint(fleet, "glm45")


@pytest.fixture(scope="session")
def e2e_llama3_json(fleet: Any) -> Iterator[Any]:
    """Our llama3_json (Llama 3.1 model dir), its corpus recorded."""
    yield from _endpoint(fleet, "llama3-json")


@pytest.fixture(scope="session")
def e2e_qwen3_coder(fleet: Any) -> Iterator[Any]:
    """Our qwen3_coder (toolcall-qwen's template on the hf engine, Qwen3 model dir)."""
    yield from _endpoint(fleet, "qwen3-coder")


@pytest.fixture(scope="session")
def e2e_llama4_json(fleet: Any) -> Iterator[Any]:
    """Our llama4_json (Llama 4 model dir), its corpus recorded."""
    yield from _endpoint(fleet, "llama4-json")


@pytest.fixture(scope="session")
def e2e_llama4_pythonic(fleet: Any) -> Iterator[Any]:
    """Our llama4_pythonic (Llama 4 model dir), its corpus recorded."""
    yield from _endpoint(fleet, "llama4-pythonic")


@pytest.fixture(scope="session")
def e2e_glm47(fleet: Any) -> Iterator[Any]:
    """Our glm47, with a toolcall plugin that raises at import installed next to it."""
    yield from _endpoint(fleet, "glm47")


@pytest.fixture(scope="session")
def e2e_hermes_qwen3(fleet: Any) -> Iterator[Any]:
    """Our hermes with ``--reasoning-parser qwen3 --tool-strict-level function``."""
    yield from _endpoint(fleet, "hermes-qwen3")


@pytest.fixture(scope="session")
def e2e_glm45_reasoning(fleet: Any) -> Iterator[Any]:
    """Our glm45 with ``--reasoning-parser glm45 --tool-strict-level parameter``."""
    yield from _endpoint(fleet, "glm45-reasoning")


@pytest.fixture(scope="session")
def e2e_hermes_2api(fleet: Any) -> Iterator[Any]:
    """Our hermes behind ``--api-server-count 2``: two API server processes."""
    yield from _endpoint(fleet, "hermes-2api")


@pytest.fixture(scope="session")
def e2e_mistral(fleet: Any) -> Iterator[Any]:
    """Our mistral, ``--tokenizer-mode mistral`` with the v11 tekken model directory."""
    yield from _endpoint(fleet, "mistral")


@pytest.fixture(scope="session")
def e2e_mistral_reasoning(fleet: Any) -> Iterator[Any]:
    """Our mistral with ``--reasoning-parser mistral`` (Magistral's [THINK] blocks)."""
    yield from _endpoint(fleet, "mistral-reasoning")


@pytest.fixture(scope="session")
def e2e_builtin_hermes(hermes_server: Any) -> Iterator[Any]:
    """vLLM's built-in hermes (``VLLM_PLUGINS`` without ``toolcall``), as an endpoint."""
    from e2e_support import SERVERS, Endpoint

    endpoint = Endpoint(hermes_server, SERVERS["builtin-hermes"])
    try:
        yield endpoint
    finally:
        endpoint.close()


@pytest.fixture(scope="session")
def glm_server(fleet: Any) -> object:
    """A ``vllm serve`` (built-in glm45 parser, GLM-4.5 model dir) shared by the session."""
    return fleet.server("builtin-glm45")


def _alone(name: str, workdir: Any) -> Iterator[Any]:
    """Server ``name`` started for one module and stopped after it (not in the fleet: every
    server stays up for the whole session there, and all of them together exceed memory)."""
    from e2e_support import SERVERS, Endpoint, build_server

    server = build_server(SERVERS[name], workdir)
    server.start()
    endpoint = Endpoint(server, SERVERS[name])
    try:
        yield endpoint
    finally:
        endpoint.close()
        server.stop()


@pytest.fixture(scope="module", params=["deepseek-v3", "deepseek-v31"])
def e2e_deepseek(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Any]:
    """Our deepseek_v3 and deepseek_v31 (toolcall-deepseek's templates on the hf engine)."""
    yield from _alone(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module", params=["xlam-llama3.1", "xlam-qwen2.5"])
def e2e_xlam(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Any]:
    """Our xlam on the Llama 3.1 and the Qwen2.5 model directory."""
    yield from _alone(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module", params=["auto-qwen2.5", "auto-glm4.5"])
def e2e_auto(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Any]:
    """``--tool-call-parser auto`` on a model directory whose chat template says the format."""
    yield from _alone(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def e2e_auto_underived(tmp_path_factory: Any) -> Iterator[Any]:
    """``auto`` on a Qwen2.5 directory whose chat template renders no tools."""
    yield from _alone("auto-underived", tmp_path_factory.mktemp("auto-underived"))
