"""The benchmark run: every installed toolcall parser that replaces a vLLM built-in.

    python -m toolcall_bench [--smoke] [--parser NAME ...] [--output DIR] [--no-readme]

(``nox -s bench`` runs it in the cached vLLM 0.33 environment.) ``--smoke``, or
``TOOLCALL_BENCH_SMOKE=1``, is the CI mode: tiny sizes, one repetition, no README.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolcall.parser import ParserContext
from toolcall.registry import ParserEntry, Registry
from toolcall.types import Request, Vocabulary
from toolcall_bench import measure, report
from toolcall_bench.drivers import (
    DRIVERS,
    CoreDriver,
    Driver,
    VllmDriver,
    floor_parser_class,
    problem_with,
)
from toolcall_bench.outputs import (
    REQUEST,
    TOOL_NAME,
    BenchError,
    Feed,
    Output,
    Variant,
    build_output,
    build_output_of_bytes,
    kept_content,
    metadata_for,
    variants_of,
)
from toolcall_conformance.tokenizers import cache_root, get_tokenizer
from toolcall_conformance.vllm_baseline import VllmBaseline

__all__ = ["FULL", "SMOKE", "Settings", "main", "run"]

SMOKE_ENV = "TOOLCALL_BENCH_SMOKE"
COMMAND_ENV = "TOOLCALL_BENCH_COMMAND"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...]  # tokens of arguments
    tokens_per_delta: tuple[int, ...]
    rounds: measure.Rounds
    growth: tuple[int, int]  # growth = per-token cost at growth[1] / at growth[0]
    one_shot_bytes: int
    clock: str = "wall"  # what tables and targets use: "wall" or "cpu"
    smoke: bool = False


FULL = Settings(
    sizes=(100, 1000, 4000, 16000),
    tokens_per_delta=(1, 4),
    rounds=measure.Rounds(least=5, most=25, budget_s=15.0),
    growth=(1000, 16000),
    one_shot_bytes=1_000_000,
)
SMOKE = Settings(
    sizes=(16, 64),
    tokens_per_delta=(1, 4),
    rounds=measure.Rounds(least=1, most=1, budget_s=0.0),
    growth=(16, 64),
    one_shot_bytes=4096,
    smoke=True,
)


@dataclass(frozen=True)
class _Target:
    key: str
    driver: str  # whose cost it is about (for the profile of a miss)
    limit: float
    #: Limits that differ by parser name (``limit`` for the others).
    limits: Mapping[str, float] = field(default_factory=dict)

    def limit_for(self, parser: str) -> float:
        return self.limits.get(parser, self.limit)


#: The targets of issue 10, evaluated per parser (and, but for the one-shot, per tokens
#: per delta). ``adapter-above-floor``: what the adapter adds to vLLM's floor over what the
#: built-in adds to it (both less the floor), at the largest size.
_TARGETS = (
    _Target(
        "adapter-above-floor",
        "adapter",
        0.3,
        {"hermes": 0.1, "qwen3_json": 0.1, "glm45": 0.3, "glm47": 0.3},
    ),
    _Target("adapter-growth", "adapter", 1.2),
    _Target("core-growth", "core", 1.2),
    _Target("core-us", "core", 1.5),
    _Target("one-shot-json", "core", 3.0),
)

#: Exit status of a full run that measured but refused to write the READMEs because the
#: machine was too busy for its numbers to stand (load average above the CPU count).
EXIT_TOO_BUSY = 3


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    smoke = args.smoke or os.environ.get(SMOKE_ENV, "").strip() not in {"", "0"}
    settings = SMOKE if smoke else FULL
    if args.repetitions is not None:
        rounds = settings.rounds
        most = max(rounds.most, args.repetitions)
        settings = replace(settings, rounds=replace(rounds, least=args.repetitions, most=most))
    if args.clock is not None:
        settings = replace(settings, clock=args.clock)
    if args.sizes is not None:
        sizes = tuple(sorted(set(args.sizes)))
        settings = replace(settings, sizes=sizes, growth=(sizes[0], sizes[-1]))
    command = os.environ.get(COMMAND_ENV) or "python -m toolcall_bench " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    try:
        path, results = run(
            settings,
            parsers=args.parser,
            output=args.output or cache_root() / "bench",
            command=command.strip(),
            profiles=not args.no_profile,
        )
        busy = too_busy(results)
        status = 0
        if smoke or args.no_readme or args.sizes is not None:
            pass  # nothing for the READMEs: not a run of the standard sizes
        elif busy is not None:
            print(f"toolcall-bench: {busy}", file=sys.stderr)
            status = EXIT_TOO_BUSY
        else:
            for readme in write_readmes(results):
                print(f"updated {readme}")
    except BenchError as error:
        print(f"toolcall-bench: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    wrong = sorted(
        {
            f"{parser['name']} ({key})"
            for parser in results["parsers"]
            for drivers in [s["drivers"] for s in parser["streams"]]
            + [parser["one_shot"]["drivers"]]
            for key in ("adapter", "core")
            if drivers[key]["problem"]
        }
    )
    if wrong:
        print(f"toolcall-bench: our parse came out wrong: {', '.join(wrong)}", file=sys.stderr)
        return 1
    return status


def too_busy(results: Mapping[str, Any]) -> str | None:
    """Why the run's numbers must not go into a README, or ``None``: the one-minute load
    average, at the start or at the end, above the number of CPUs means processes were
    waiting for a CPU, and timings (wall and CPU alike: caches, frequency) are skewed."""
    machine = results["machine"]
    cpus = machine["cpus"] or 1
    load = machine["load_average"]
    worst = max(load["start"], load["end"])
    if worst <= cpus:
        return None
    return (
        f"the load average was {load['start']:.1f} at the start and {load['end']:.1f} at the "
        f"end, above the {cpus} CPUs: the README tables are not written from this run. "
        "Rerun on a quiet machine (the numbers are in the JSON and printed above)."
    )


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolcall_bench",
        description="Time toolcall parsers against vLLM's built-in parsers of the same name.",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"CI mode: tiny sizes, one repetition, no README (also {SMOKE_ENV}=1)",
    )
    parser.add_argument(
        "-p",
        "--parser",
        action="append",
        metavar="NAME",
        help="only this parser (repeatable; default: every installed one vLLM also has)",
    )
    parser.add_argument(
        "--repetitions",
        type=int,
        metavar="N",
        help="at least N rounds of timed runs (default 5; more, up to 25, while a round "
        "of every size and driver takes under a fifth of 15 s)",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        help="what the tables and targets use: wall (perf_counter, the default) or the "
        "process's CPU time (process_time: immune to a busy machine's preemptions)",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        metavar="N,N,...",
        help="tokens of arguments to measure instead of the standard sizes (growth from the "
        "smallest to the largest; such a run never writes the READMEs)",
    )
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help="where the JSON goes ($TOOLCALL_CACHE/bench)"
    )
    parser.add_argument("--no-readme", action="store_true", help="leave the READMEs alone")
    parser.add_argument(
        "--no-profile", action="store_true", help="no cProfile of the targets that are missed"
    )
    return parser


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        msg = f"expected positive integers separated by commas, got {value!r}"
        raise argparse.ArgumentTypeError(msg)
    return sizes


def run(
    settings: Settings,
    *,
    parsers: Sequence[str] | None,
    output: Path,
    command: str,
    profiles: bool = True,
) -> tuple[Path, dict[str, Any]]:
    """Run the benchmark; write and return its JSON."""
    if settings.rounds.least < 1:
        msg = "--repetitions must be at least 1"
        raise BenchError(msg)
    started = datetime.datetime.now(datetime.UTC)
    clock = time.monotonic()
    load_start = measure.load_average("toolcall-bench", "at the start")
    baseline = VllmBaseline()
    # As `vllm serve` does when it has a tool parser: every parser call is counted.
    from vllm.parser.metrics import init_parser_metrics  # noqa: PLC0415

    init_parser_metrics(model_name="toolcall-bench")
    registry = Registry.load()
    entries = _selected(registry, baseline, parsers)
    for problem in registry.problems:
        print(f"toolcall-bench: registry: {problem}", file=sys.stderr)
    if os.environ.get("TOOLCALL_CHECK_CONTRACT", "").strip() not in {"", "0"}:
        print(
            "toolcall-bench: TOOLCALL_CHECK_CONTRACT is set: the adapter times include the "
            "contract checker",
            file=sys.stderr,
        )
    measured = []
    for entry in entries:
        for variant in variants_of(entry.name, entry.parser_class):
            print(f"toolcall-bench: {variant.label} ...", file=sys.stderr, flush=True)
            measured.append(_parser(entry, variant, baseline, settings, profiles))
            print(
                f"toolcall-bench: {variant.label} done at {time.monotonic() - clock:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    path = output / f"bench-{stamp}.json"
    results: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "command": command,
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - clock, 1),
        "smoke": settings.smoke,
        "json": path.name,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "vllm": baseline.version,
            "load_average": {
                "start": load_start,
                "end": measure.load_average("toolcall-bench", "at the end"),
            },
        },
        "settings": {
            "sizes": list(settings.sizes),
            "tokens_per_delta": list(settings.tokens_per_delta),
            "repetitions": {
                "least": settings.rounds.least,
                "most": settings.rounds.most,
                "budget_s": settings.rounds.budget_s,
            },
            "clock": settings.clock,
            "growth": list(settings.growth),
            "one_shot_bytes": settings.one_shot_bytes,
            "drivers": DRIVERS,
            "timing": "perf_counter_ns (wall) and process_time_ns (cpu) around whole "
            "replays, drivers interleaved, at least `least` rounds and more (up to `most`) "
            "while `budget_s` of rounds allows; garbage collector off during a replay, "
            "the heap that existed before the measurements frozen; a fresh parser per "
            "replay, built before the clocks start; vLLM's parser metrics on, as in "
            "`vllm serve`",
        },
        "targets": {
            target.key: {
                "limit": target.limit,
                "limits": dict(target.limits),
                "driver": target.driver,
            }
            for target in _TARGETS
        },
        "parsers": measured,
    }
    output.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(report.markdown(results, measured))
    return path, results


def write_readmes(results: Mapping[str, Any]) -> list[Path]:
    """Rewrite the benchmark section of each measured plugin's README."""
    readmes = report.plugin_readmes()
    by_distribution: dict[str, list[Mapping[str, Any]]] = {}
    for parser in results["parsers"]:
        by_distribution.setdefault(parser["distribution"], []).append(parser)
    written = []
    for distribution, parsers in sorted(by_distribution.items()):
        readme = readmes.get(distribution)
        if readme is None:
            print(f"toolcall-bench: no README in this checkout for {distribution}", file=sys.stderr)
            continue
        text = readme.read_text(encoding="utf-8") if readme.exists() else f"# {distribution}\n"
        readme.write_text(
            report.replace_section(text, report.markdown(results, parsers)), encoding="utf-8"
        )
        written.append(readme)
    return written


def _selected(
    registry: Registry, baseline: VllmBaseline, names: Sequence[str] | None
) -> list[ParserEntry]:
    entries = [entry for entry in registry.entries() if baseline.has_builtin(entry.name)]
    if names is None:
        if not entries:
            msg = "no installed toolcall parser has a vLLM built-in of the same name"
            raise BenchError(msg)
        return entries
    by_name = {entry.name: entry for entry in entries}
    missing = [name for name in names if name not in by_name]
    if missing:
        msg = (
            f"not installed or without a vLLM built-in: {', '.join(missing)} "
            f"(measurable: {', '.join(by_name) or 'none'})"
        )
        raise BenchError(msg)
    return [by_name[name] for name in dict.fromkeys(names)]


def _parser(
    entry: ParserEntry,
    variant: Variant,
    baseline: VllmBaseline,
    settings: Settings,
    profiles: bool,
) -> dict[str, Any]:
    name = entry.name
    render, source, tokenizer_name = variant.render, variant.source, variant.tokenizer
    tokenizer = get_tokenizer(tokenizer_name)
    vllm_tokenizer = baseline.vllm_tokenizer(tokenizer_name)
    if tokenizer.tokenizer_json_path is not None:
        vllm_tokenizer = _cached(vllm_tokenizer)
    request = baseline.chat_request(REQUEST)
    from toolcall.vllm.adapters import adapter_class  # noqa: PLC0415 - imports vLLM

    builtin = baseline.builtin_class(name)
    metadata = metadata_for(entry.parser_class)
    if "response_template" in metadata:
        # A format that is data (hf): the tokenizer carries the template, as a checkpoint's.
        vllm_tokenizer = _cached(
            baseline.vllm_tokenizer(tokenizer_name, response_template=metadata["response_template"])
        )
    drivers: list[Driver] = [
        VllmDriver("builtin", baseline.compose(builtin), vllm_tokenizer, request),
        VllmDriver("adapter", baseline.compose(adapter_class(name)), vllm_tokenizer, request),
        CoreDriver(
            entry.parser_class,
            ParserContext(
                request=Request.from_openai(REQUEST),
                vocabulary=Vocabulary(
                    special_tokens=dict(tokenizer.special_tokens), metadata=metadata
                ),
            ),
        ),
        VllmDriver(
            "floor", baseline.compose(floor_parser_class()), vllm_tokenizer, request, verified=False
        ),
    ]
    try:
        drivers[0].prepare()
        unavailable = None
    except Exception as error:
        # vLLM's llama4_json needs <|python_tag|>, which the Llama 4 vocabulary lacks: the
        # built-in cannot serve the family's own tokenizer. Reported, not measured.
        unavailable = f"{type(error).__name__}: {error}"
    outputs = [build_output(render, tokenizer, size) for size in settings.sizes]
    big_text, big_arguments, big_bytes = build_output_of_bytes(render, settings.one_shot_bytes)
    result: dict[str, Any] = {
        "name": name,
        "label": variant.label,
        "distribution": entry.distribution,
        "version": entry.version,
        "builtin": f"{builtin.__module__}.{builtin.__qualname__}",
        "builtin_unavailable": unavailable,
        "tokenizer": tokenizer_name,
        "example_output": source,
    }
    with measure.frozen_heap():
        streams: list[dict[str, Any]] = []
        largest: dict[int, Feed] = {}
        for tokens_per_delta in settings.tokens_per_delta:
            feeds = [
                (output.feed(tokens_per_delta), _checker(output.content, output.arguments))
                for output in outputs
            ]
            if not streams:  # warm up (imports, caches) once, untimed
                measure.replays(drivers, feeds[:1], measure.Rounds(1, 1, 0.0))
            timings = measure.replays(drivers, feeds, settings.rounds)
            for size, output, (feed, _check), timing in zip(
                settings.sizes, outputs, feeds, timings, strict=True
            ):
                streams.append(_stream(size, output, feed, timing, settings.clock))
            largest[tokens_per_delta] = feeds[settings.sizes.index(max(settings.sizes))][0]
        streams.sort(key=lambda s: (s["argument_tokens_target"], s["tokens_per_delta"]))
        shots = measure.one_shot(
            drivers, big_text, settings.rounds, _checker(kept_content(render), big_arguments)
        )
        # The same arguments as JSON text, read by json.loads: the one-shot target's yardstick.
        json_text = json.dumps(big_arguments, ensure_ascii=False)
        json_loads = measure.repeated(json.loads, json_text, settings.rounds)
        one_shot = {
            "argument_bytes": big_bytes,
            "characters": len(big_text),
            "drivers": {
                key: _clocked(shot.clocks, 1e6, "ms", settings.clock)
                | {"peak_mib": _scaled(shot.peak_bytes, 2**20), "problem": shot.problem}
                for key, shot in shots.items()
            },
            "json_loads": _clocked(json_loads, 1e6, "ms", settings.clock),
        }
        targets = _targets(name, streams, one_shot, settings)
        missed = sorted(
            {
                (t["driver"], t["tokens_per_delta"])
                for t in targets
                if not t["met"] and t["tokens_per_delta"] is not None
            }
        )
        by_key = {driver.key: driver for driver in drivers}
        result |= {
            "streams": streams,
            "growth": _growths(streams, settings),
            "one_shot": one_shot,
            "targets": targets,
            "profiles": [
                {
                    "driver": key,
                    "tokens_per_delta": tokens_per_delta,
                    "argument_tokens": max(settings.sizes),
                    "top": measure.profile(by_key[key], largest[tokens_per_delta]),
                }
                for key, tokens_per_delta in (missed if profiles else [])
            ],
        }
    return result


def _checker(content: str, arguments: Mapping[str, Any]) -> measure.Check:
    calls = [(TOOL_NAME, arguments)]
    return lambda found: problem_with(found, content, calls)


def _clocked(clocks: measure.Clocks, unit: float, name: str, clock: str) -> dict[str, Any]:
    """Medians and runs of both clocks in ``unit``; ``median_<name>`` is ``clock``'s."""
    return {
        f"median_{name}": _scaled(clocks.median(clock), unit),
        f"median_wall_{name}": _scaled(clocks.median("wall"), unit),
        f"median_cpu_{name}": _scaled(clocks.median("cpu"), unit),
        f"wall_runs_{name}": [round(ns / unit, 4) for ns in clocks.wall],
        f"cpu_runs_{name}": [round(ns / unit, 4) for ns in clocks.cpu],
    }


def _stream(
    size: int, output: Output, feed: Feed, timings: Mapping[str, measure.Timing], clock: str
) -> dict[str, Any]:
    drivers = {
        key: _clocked(timing.clocks, 1e3 * output.tokens, "us_per_token", clock)
        | {"problem": timing.problem}
        for key, timing in timings.items()
    }
    per_token = {key: driver["median_us_per_token"] for key, driver in drivers.items()}
    floor = per_token["floor"]
    return {
        "argument_tokens_target": size,
        "argument_tokens": output.argument_tokens,
        "tokens": output.tokens,
        "characters": len(output.text),
        "tokens_per_delta": feed.tokens_per_delta,
        "deltas": len(feed.texts),
        "rounds": len(timings["adapter"].clocks.wall),
        "drivers": drivers,
        "ratio_adapter_to_builtin": measure.divide(per_token["adapter"], per_token["builtin"]),
        "ratio_core_to_builtin": measure.divide(per_token["core"], per_token["builtin"]),
        # What each side adds to what vLLM costs any parser.
        "ratio_above_floor": measure.divide(
            measure.minus(per_token["adapter"], floor), measure.minus(per_token["builtin"], floor)
        ),
    }


def _growths(streams: Sequence[Mapping[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    small, large = settings.growth
    growths: list[dict[str, Any]] = []
    if small == large:
        return growths  # one size: no growth to speak of
    for tokens_per_delta in settings.tokens_per_delta:
        at = {
            stream["argument_tokens_target"]: stream["drivers"]
            for stream in streams
            if stream["tokens_per_delta"] == tokens_per_delta
        }
        if small not in at or large not in at:
            continue
        growths.append(
            {"tokens_per_delta": tokens_per_delta, "from": small, "to": large}
            | {
                key: measure.divide(
                    at[large][key]["median_us_per_token"], at[small][key]["median_us_per_token"]
                )
                for key in DRIVERS
            }
        )
    return growths


def _targets(
    name: str,
    streams: Sequence[Mapping[str, Any]],
    one_shot: Mapping[str, Any],
    settings: Settings,
) -> list[dict[str, Any]]:
    small, large = settings.growth
    top = max(settings.sizes)
    growths = {g["tokens_per_delta"]: g for g in _growths(streams, settings)}
    values: list[tuple[str, int | None, float | None, str]] = []
    for tokens_per_delta in settings.tokens_per_delta:
        last = next(
            s
            for s in streams
            if s["tokens_per_delta"] == tokens_per_delta and s["argument_tokens_target"] == top
        )
        growth = growths.get(tokens_per_delta, {})
        per_delta = f"{tokens_per_delta} token(s) per delta"
        values += [
            (
                "adapter-above-floor",
                tokens_per_delta,
                last["ratio_above_floor"],
                f"adapter above floor / built-in above floor at {top:,} argument tokens, "
                f"{per_delta}, at most",
            ),
            (
                "adapter-growth",
                tokens_per_delta,
                growth.get("adapter"),
                f"growth {small:,} -> {large:,} through the adapter, {per_delta}, at most",
            ),
            (
                "core-growth",
                tokens_per_delta,
                growth.get("core"),
                f"growth {small:,} -> {large:,} in the core, {per_delta}, at most",
            ),
            (
                "core-us",
                tokens_per_delta,
                last["drivers"]["core"]["median_us_per_token"],
                f"core µs per token at {top:,} argument tokens, {per_delta}, at most",
            ),
        ]
    core_ms = one_shot["drivers"]["core"]["median_ms"]
    values.append(
        (
            "one-shot-json",
            None,
            measure.divide(core_ms, one_shot["json_loads"]["median_ms"]),
            f"core one-shot parse of {one_shot['argument_bytes']:,} bytes of arguments / "
            "json.loads of the same arguments, at most",
        )
    )
    by_key = {target.key: target for target in _TARGETS}
    targets = []
    for key, step, value, what in values:
        target = by_key[key]
        limit = target.limit_for(name)
        met = value is not None and value <= limit
        targets.append(
            {
                "target": key,
                "driver": target.driver,
                "tokens_per_delta": step,
                "what": f"{what} {limit:g}",
                "value": value,
                "limit": limit,
                "met": met,
                "miss": None if met else _miss(value, limit),
            }
        )
    return targets


def _miss(value: float | None, limit: float) -> str:
    if value is None:
        return "not measured"
    return f"{value / limit:.2f}x the limit ({(value / limit - 1):.0%} over)"


def _cached(tokenizer: Any) -> Any:
    """A Hugging Face tokenizer as vLLM's server holds it (vocabulary and specials cached)."""
    from vllm.tokenizers.hf import get_cached_tokenizer  # noqa: PLC0415

    return get_cached_tokenizer(tokenizer)


def _scaled(value: float | None, unit: float) -> float | None:
    return None if value is None else round(value / unit, 4)
