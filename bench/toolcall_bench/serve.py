"""The server-level benchmark: the API server's CPU time per streamed token, under many
concurrent streams, with our parser, vLLM's built-in of the same name, the floor, and no
tool parser.

    python -m toolcall_bench.serve [--smoke] [--parser NAME|all] [--streams N] ...

(``nox -s serve_bench`` runs it in the cached vLLM 0.33 environment.) Four literal
``vllm serve`` processes with the replay engine (``toolcall_replay``), one per
configuration:

* ``ours``: ``--tool-call-parser NAME`` with the ``toolcall`` plugin loaded;
* ``builtin``: the same flag, ``VLLM_PLUGINS`` without ``toolcall`` (vLLM's own parser);
* ``floor``: the benchmark's floor parser (``toolcall_bench.floor_plugin``: each delta one
  argument fragment of one call, built as cheaply as vLLM allows), with the ``toolcall``
  plugin loaded and the same tools in the request: what vLLM's tool path costs any parser;
* ``none``: no tool parser; the request carries no tools, so the same output streams as
  content. The difference to it is what tool parsing costs the server.

Each configuration serves the same recording (the benchmark's ``write_file`` output of the
parser's format, tokenized with the family's tokenizer, one token per engine step) to
``--streams`` concurrent Chat Completions streams (``AsyncOpenAI``, loopback), round after
round, the configurations interleaved (A B C, A B C, ...). Measured per round and
configuration: the CPU time (user + system, ``psutil``) of the server's processes, which
with the replay engine is the API server: HTTP, chat template, detokenizer, tool parser,
SSE, and the replay engine (the same work in every configuration). Reported: medians of
µs per streamed token, and the ratios ours / built-in, ours / floor and, above the floor
and above the ``none`` server, (ours - floor) / (built-in - floor) and (ours - none) /
(built-in - none). Every stream is checked against the output.

The JSON goes to ``$TOOLCALL_CACHE/bench/serve-<UTC time>.json``; the table is printed
(no README is written: the numbers go in one by hand, from a quiet run). ``--parser all``
runs every installed name that has a vLLM built-in, one after the other, a JSON and a
table each, then one row per name.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from toolcall.registry import Registry
from toolcall_bench.drivers import Reassembled, problem_with
from toolcall_bench.measure import divide, load_average, minus
from toolcall_bench.outputs import (
    CONTENT,
    REQUEST,
    TOOL_NAME,
    BenchError,
    Output,
    build_output,
    family_tokenizer,
    renderer_for,
)
from toolcall_bench.report import number
from toolcall_conformance.tokenizers import cache_root, get_tokenizer

__all__ = [
    "CONFIGURATIONS",
    "FULL",
    "SMOKE",
    "Configuration",
    "ServeSettings",
    "main",
    "run",
    "summary",
    "with_builtins",
]

SCHEMA_VERSION = 2
MARKER = "[bench:serve]"
FLOOR_PLUGIN = Path(__file__).with_name("floor_plugin.py")


@dataclass(frozen=True)
class Configuration:
    """One server of the benchmark: whether our plugin is loaded, and which tool parser it
    serves (``parser``: the benchmarked name, ``floor``: the floor parser, ``None``: none;
    with a tool parser the request carries the tools)."""

    plugin: bool
    parser: str | None

    def arguments(self) -> tuple[str, ...]:
        """Extra ``vllm serve`` arguments."""
        return ("--tool-parser-plugin", str(FLOOR_PLUGIN)) if self.parser == "floor" else ()

    def environment(self) -> dict[str, str]:
        """Extra environment: the floor's server imports this benchmark's package."""
        if self.parser != "floor":
            return {}
        path = [str(FLOOR_PLUGIN.parents[1]), os.environ.get("PYTHONPATH", "")]
        return {"PYTHONPATH": os.pathsep.join(part for part in path if part)}

    def tool_call_parser(self, benchmarked: str) -> str | None:
        if self.parser == "floor":
            from toolcall_bench.floor_plugin import NAME  # noqa: PLC0415 - imports vLLM

            return NAME
        return benchmarked if self.parser == "parser" else None


CONFIGURATIONS: Mapping[str, Configuration] = {
    "ours": Configuration(plugin=True, parser="parser"),
    "builtin": Configuration(plugin=False, parser="parser"),
    "floor": Configuration(plugin=True, parser="floor"),
    "none": Configuration(plugin=False, parser=None),
}
LABELS = {
    "ours": "ours",
    "builtin": "vLLM built-in",
    "floor": "floor",
    "none": "no tool parser",
}


@dataclass(frozen=True)
class ServeSettings:
    parser: str = "hermes"
    streams: int = 64  # concurrent streams per round
    argument_tokens: int = 400  # tokens of arguments in the output each stream replays
    rounds: int = 5  # measured rounds per configuration (medians)
    warmup: int = 1  # unmeasured rounds per configuration first
    at_once: int = 4  # servers running at the same time (4: all, rounds interleaved)
    smoke: bool = False


FULL = ServeSettings()
SMOKE = ServeSettings(streams=8, argument_tokens=32, rounds=1, warmup=0, smoke=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    settings = SMOKE if args.smoke else FULL
    changes = {
        key: value
        for key, value in {
            "parser": args.parser,
            "streams": args.streams,
            "argument_tokens": args.argument_tokens,
            "rounds": args.rounds,
            "at_once": args.at_once,
        }.items()
        if value is not None
    }
    settings = replace(settings, **changes)
    names = with_builtins() if settings.parser == "all" else [settings.parser]
    every: list[dict[str, Any]] = []
    status = 0
    for name in names:
        try:
            path, results = run(
                replace(settings, parser=name), output=args.output or cache_root() / "bench"
            )
        except BenchError as error:
            print(f"toolcall-bench serve: {error}", file=sys.stderr)
            return 2
        print(markdown(results))
        print(f"wrote {path}")
        every.append(results)
        wrong = [
            f"{name} {key} round {number}: {problem}"
            for key, runs in results["configurations"].items()
            for number, problem in enumerate(runs["problems"])
            if problem
        ]
        if wrong:
            print("toolcall-bench serve: wrong streams:\n  " + "\n  ".join(wrong), file=sys.stderr)
            status = 1
    if len(every) > 1:
        print(summary(every))
    return status


def with_builtins(registry: Registry | None = None) -> list[str]:
    """Every installed parser that vLLM 0.33 also has built in, one name per parser class
    and corpus (an alias costs what its class costs)."""
    from toolcall.vllm.builtins import VLLM_BUILTIN_TOOL_PARSERS  # noqa: PLC0415
    from toolcall_bench.linear import distinct_parsers  # noqa: PLC0415

    names = distinct_parsers(registry or Registry.load())
    return [name for name in names if name in VLLM_BUILTIN_TOOL_PARSERS]


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolcall_bench.serve",
        description="API-server CPU time per streamed token: ours, vLLM's built-in, the "
        "floor, no parser.",
    )
    parser.add_argument("--smoke", action="store_true", help="CI size: 8 streams, 1 round")
    parser.add_argument(
        "-p", "--parser", metavar="NAME", help="parser name (default hermes), or all"
    )
    parser.add_argument("--streams", type=int, metavar="N", help="concurrent streams (64)")
    parser.add_argument(
        "--argument-tokens", type=int, metavar="N", help="argument tokens per output (400)"
    )
    parser.add_argument("--rounds", type=int, metavar="N", help="measured rounds (5)")
    parser.add_argument(
        "--at-once",
        type=int,
        choices=(1, 2, 3, 4),
        metavar="N",
        help="servers up at the same time (4, the default: all, rounds interleaved; "
        "1: one after the other, on a machine that cannot hold four)",
    )
    parser.add_argument("--output", type=Path, metavar="DIR", help="where the JSON goes")
    return parser


# -- one run -----------------------------------------------------------------------------


def run(settings: ServeSettings, *, output: Path) -> tuple[Path, dict[str, Any]]:
    """Start the servers, stream, measure; write and return the JSON."""
    if min(settings.streams, settings.argument_tokens, settings.rounds) < 1:
        msg = "--streams, --argument-tokens and --rounds must be at least 1"
        raise BenchError(msg)
    started = datetime.datetime.now(datetime.UTC)
    clock = time.monotonic()
    load_start = load_average("toolcall-bench serve", "at the start")
    entry = next((e for e in Registry.load().entries() if e.name == settings.parser), None)
    if entry is None:
        msg = f"no toolcall parser {settings.parser!r} is installed"
        raise BenchError(msg)
    render, _source = renderer_for(entry.name, entry.parser_class)
    tokenizer_name = family_tokenizer(entry.name, entry.parser_class)
    out = build_output(render, get_tokenizer(tokenizer_name), settings.argument_tokens)
    runs: dict[str, dict[str, Any]] = {key: _no_runs() for key in CONFIGURATIONS}
    if os.environ.get("TOOLCALL_CHECK_CONTRACT", "").strip() not in {"", "0"}:
        print(
            "toolcall-bench serve: TOOLCALL_CHECK_CONTRACT is set: our server's times include "
            "the contract checker",
            file=sys.stderr,
        )
    keys = list(CONFIGURATIONS)
    for group in [keys[i : i + settings.at_once] for i in range(0, len(keys), settings.at_once)]:
        with _servers(group, settings, tokenizer_name, out) as servers:
            for number in range(settings.warmup + settings.rounds):
                for key in group:
                    measured = _round(servers[key], key, out, settings)
                    if number >= settings.warmup:
                        for name, value in measured.items():
                            runs[key][name].append(value)
            for key in group:
                runs[key]["startup_s"] = round(servers[key].startup_seconds or 0.0, 1)
    per_token = {key: _median(runs[key]["cpu_us_per_token"]) for key in CONFIGURATIONS}
    ours, builtin, none = per_token["ours"], per_token["builtin"], per_token["none"]
    floor = per_token["floor"]
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    path = output / f"serve-{stamp}.json"
    results: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - clock, 1),
        "json": path.name,
        "settings": asdict(settings),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average": {
                "start": load_start,
                "end": load_average("toolcall-bench serve", "at the end"),
            },
        },
        "output": {
            "parser": entry.name,
            "distribution": f"{entry.distribution} {entry.version}",
            "tokenizer": tokenizer_name,
            "tokens": out.tokens,
            "argument_tokens": out.argument_tokens,
            "characters": len(out.text),
        },
        "configurations": runs,
        "median_cpu_us_per_token": per_token,
        "ratio_ours_to_builtin": divide(ours, builtin),
        "ratio_ours_to_floor": divide(ours, floor),
        "ratio_above_floor": divide(minus(ours, floor), minus(builtin, floor)),
        "ratio_ours_to_none": divide(ours, none),
        "ratio_builtin_to_none": divide(builtin, none),
        "ratio_above_none": divide(minus(ours, none), minus(builtin, none)),
    }
    output.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path, results


def _no_runs() -> dict[str, Any]:
    """Per configuration, one value per measured round of each of these."""
    names = ("cpu_us_per_token", "cpu_s", "wall_s", "tokens", "processes", "problems")
    return {name: [] for name in names}


@contextlib.contextmanager
def _servers(
    keys: Sequence[str], settings: ServeSettings, tokenizer_name: str, out: Output
) -> Iterator[dict[str, Any]]:
    """The servers of ``keys``, started one after the other (a start is mostly imports on
    every core), stopped at the end."""
    from toolcall_replay import Recording, ReplayServer, build_model_dir  # noqa: PLC0415

    model_dir = build_model_dir(tokenizer_name)
    recording = Recording.from_token_ids("bench-serve", out.ids, prompt_contains=MARKER)
    servers: dict[str, Any] = {}
    try:
        for key in keys:
            configuration = CONFIGURATIONS[key]
            servers[key] = ReplayServer(
                model_dir,
                tool_call_parser=configuration.tool_call_parser(settings.parser),
                recordings=[recording],
                extra_args=configuration.arguments(),
                env=configuration.environment(),
                plugins=("toolcall",) if configuration.plugin else (),
            )
            print(f"toolcall-bench serve: starting {key} ...", file=sys.stderr, flush=True)
            servers[key].start()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def _round(server: Any, key: str, out: Output, settings: ServeSettings) -> dict[str, Any]:
    """One round of ``settings.streams`` concurrent streams against ``server``: the CPU its
    processes spent meanwhile, per streamed token, and whether every stream was right."""
    import psutil  # noqa: PLC0415 - vLLM's environment has it

    root = psutil.Process(server.pid)
    before = _cpu_seconds(root)
    start = time.perf_counter()
    answers = asyncio.run(_stream_all(server, key, settings))
    wall = time.perf_counter() - start
    after = _cpu_seconds(root)
    cpu = sum(after.values()) - sum(before.get(pid, 0.0) for pid in after)
    tokens = out.tokens * settings.streams
    problems = [problem for answer in answers if (problem := _check(answer, key, out))]
    return {
        "cpu_us_per_token": round(cpu * 1e6 / tokens, 3),
        "cpu_s": round(cpu, 4),
        "wall_s": round(wall, 3),
        "tokens": tokens,
        "processes": len(after),
        "problems": f"{len(problems)} of {len(answers)}: {problems[0]}" if problems else None,
    }


def _cpu_seconds(root: Any) -> dict[int, float]:
    """User + system CPU seconds of ``root`` and its descendants, by pid."""
    import psutil  # noqa: PLC0415

    found = {}
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            found[process.pid] = times.user + times.system
    return found


async def _stream_all(server: Any, key: str, settings: ServeSettings) -> list[Reassembled]:
    import openai  # noqa: PLC0415

    parsing = CONFIGURATIONS[key].parser is not None
    body: dict[str, Any] = {
        "model": server.served_model_name,
        "messages": [{"role": "user", "content": f"Save the module. {MARKER}"}],
        "stream": True,
    }
    if parsing:
        body["tools"] = REQUEST["tools"]
    async with openai.AsyncOpenAI(
        base_url=server.base_url, api_key="unused", max_retries=0, timeout=900
    ) as client:

        async def one() -> Reassembled:
            stream = await client.chat.completions.create(**body)
            content: list[str] = []
            names: dict[int, str] = {}
            arguments: dict[int, list[str]] = {}
            async with stream:
                async for chunk in stream:
                    for choice in chunk.choices:
                        content.append(choice.delta.content or "")
                        for entry in choice.delta.tool_calls or ():
                            function = entry.function
                            if entry.index not in names:
                                names[entry.index] = (function.name if function else "") or ""
                                arguments[entry.index] = []
                            if function is not None and function.arguments:
                                arguments[entry.index].append(function.arguments)
            calls = tuple((names[i], "".join(arguments[i])) for i in sorted(names))
            return Reassembled("".join(content), calls)

        return list(await asyncio.gather(*(one() for _ in range(settings.streams))))


def _check(found: Reassembled, key: str, out: Output) -> str | None:
    parser = CONFIGURATIONS[key].parser
    if parser == "floor":
        # The floor streams every delta as an argument fragment of one call named floor.
        if [name for name, _ in found.calls] != ["floor"] or CONTENT not in found.calls[0][1]:
            return "the floor must stream the whole output as one call's arguments"
        return None
    if parser is not None:
        return problem_with(found, out.content, [(TOOL_NAME, out.arguments)])
    # Without a tool parser the output streams as content (vLLM drops the special tokens
    # a format may use as markers, so it is not compared with the text).
    if found.calls or CONTENT not in found.content:
        return "without a tool parser the output must stream as content"
    return None


# -- the table ----------------------------------------------------------------------------


def markdown(results: Mapping[str, Any]) -> str:
    settings = results["settings"]
    machine = results["machine"]
    load = machine["load_average"]
    out = results["output"]
    per_token = results["median_cpu_us_per_token"]
    lines = [
        f"Made by `python -m toolcall_bench.serve` on {results['started'][:10]}: "
        f"{machine['cpus']} CPUs (load average {load['start']:.1f} at the start, "
        f"{load['end']:.1f} at the end); `{out['parser']}` ({out['distribution']}), "
        f"{settings['streams']} concurrent streams of {out['tokens']:,} tokens "
        f"({out['argument_tokens']:,} of arguments, `{out['tokenizer']}`), one token per "
        f"engine step; medians of {settings['rounds']} rounds, servers "
        + ("interleaved" if settings["at_once"] > 1 else "one after the other")
        + (" (**smoke run: not a measurement**)" if settings["smoke"] else "")
        + ".",
        "",
        "| API server | CPU µs per streamed token | wall s per round | / no tool parser |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key, label in LABELS.items():
        runs = results["configurations"][key]
        lines.append(
            f"| {label} | {number(per_token[key], 2)} | "
            f"{number(_median(runs['wall_s']), 2)} | "
            f"{number(divide(per_token[key], per_token['none']), 2)} |"
        )
    lines += [
        "",
        f"ours / built-in: {number(results['ratio_ours_to_builtin'], 2)}; ours / floor: "
        f"{number(results['ratio_ours_to_floor'], 2)}; above the floor, (ours - floor) / "
        f"(built-in - floor): {number(results['ratio_above_floor'], 2)}; above no tool "
        f"parser, (ours - none) / (built-in - none): {number(results['ratio_above_none'], 2)}.",
        "",
        f"All numbers: `{results['json']}`.",
    ]
    return "\n".join(lines)


def summary(every: Sequence[Mapping[str, Any]]) -> str:
    """One row per benchmarked name: CPU µs per streamed token and the ratios."""
    lines = [
        "| parser | ours | built-in | floor | none | ours / floor | (ours - floor) / "
        "(built-in - floor) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for results in every:
        per_token = results["median_cpu_us_per_token"]
        cells = [number(per_token[key], 2) for key in ("ours", "builtin", "floor", "none")]
        cells += [
            number(results["ratio_ours_to_floor"], 2),
            number(results["ratio_above_floor"], 2),
        ]
        lines.append(f"| {results['output']['parser']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


if __name__ == "__main__":
    sys.exit(main())
