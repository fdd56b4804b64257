"""The replay refuses to start when a vLLM internal it relies on has moved."""

from __future__ import annotations

import pytest

from toolcall_replay import plugin

pytestmark = pytest.mark.vllm


def test_the_seams_of_vllm_0_33_are_all_there() -> None:
    from toolcall_replay.seams import check_seams

    check_seams()  # raises SeamError otherwise


def test_a_missing_seam_is_named_in_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from vllm.v1.engine.core_client import EngineCoreClient

    from toolcall_replay.seams import SeamError, check_seams

    monkeypatch.delattr(EngineCoreClient, "make_async_mp_client")
    with pytest.raises(SeamError) as err:
        check_seams()
    message = str(err.value)
    assert "vllm.v1.engine.core_client:EngineCoreClient.make_async_mp_client: missing" in message
    assert "vllm==0.33.0" in message
    assert message.count("\n  - ") == 1  # only what moved is listed


def test_a_renamed_parameter_is_named_in_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from vllm.entrypoints.launchers.api_server import entry

    from toolcall_replay.seams import SeamError, check_seams

    async def moved(args: object, *, usage_context: object = None) -> None: ...

    monkeypatch.setattr(entry, "build_async_engine_client_from_engine_args", moved)
    with pytest.raises(SeamError, match="parameters client_config, engine_args are gone"):
        check_seams()


def test_the_plugin_refuses_to_install_when_a_seam_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from vllm.entrypoints.launchers.api_server import entry

    from toolcall_replay.seams import SeamError

    original = entry.build_async_engine_client_from_engine_args
    monkeypatch.setenv(plugin.ENV_SCRIPT, "/nonexistent/script.json")
    monkeypatch.delattr("vllm.v1.engine.output_processor.RequestOutputCollector.__init__")
    with pytest.raises(SeamError, match=r"RequestOutputCollector\.__init__"):
        plugin.register()
    assert entry.build_async_engine_client_from_engine_args is original  # nothing was patched


def test_install_patches_the_launchers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from vllm.entrypoints.cli import serve
    from vllm.entrypoints.launchers.api_server import entry

    from toolcall_replay.engine import build_replay_engine_client, launch_no_core_engines
    from toolcall_replay.seams import install

    # restored after the test
    monkeypatch.setattr(
        entry,
        "build_async_engine_client_from_engine_args",
        entry.build_async_engine_client_from_engine_args,
    )
    monkeypatch.setattr(serve, "launch_core_engines", serve.launch_core_engines)
    assert install() is True
    assert entry.build_async_engine_client_from_engine_args is build_replay_engine_client
    assert serve.launch_core_engines is launch_no_core_engines
    assert install() is False


def test_several_api_servers_start_no_engine_core() -> None:
    """The parent of ``--api-server-count N`` gets a launch with no engine manager and no
    coordinator, and the addresses it was given (its API servers replay by themselves)."""
    from vllm.v1.engine.utils import CoreEngineLaunch

    from toolcall_replay.engine import launch_no_core_engines

    addresses = object()
    with launch_no_core_engines(None, None, False, addresses) as launch:
        assert isinstance(launch, CoreEngineLaunch)
        assert (launch.engine_manager, launch.coordinator, launch.tensor_queue) == (
            None,
            None,
            None,
        )
        assert launch.addresses is addresses
