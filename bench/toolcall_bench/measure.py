"""Clocks, memory and profiles.

Whole replays are timed with ``time.perf_counter_ns`` (and, around the same code,
``time.process_time_ns``: the CPU time, which a busy machine's preemptions do not
inflate), the drivers and the sizes interleaved (A B C A B C ...) so that a slow spell
hits all of them alike, and summarised by medians. Each replay gets a fresh parser, built before
the clocks start. As in ``timeit``, the garbage collector is off while a replay runs;
it is collected before each one, which is cheap because :func:`frozen_heap` moves
everything that exists before the measurements (vLLM, torch, the tokenizers: some
650,000 objects, 0.8 s per full collection) out of its reach.
"""

from __future__ import annotations

import cProfile
import gc
import math
import os
import pstats
import statistics
import sys
import sysconfig
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_bench.drivers import Driver, Reassembled
from toolcall_bench.outputs import ROOT, Feed

__all__ = [
    "Clocks",
    "OneShot",
    "Rounds",
    "Timing",
    "divide",
    "frozen_heap",
    "load_average",
    "minus",
    "one_shot",
    "profile",
    "repeated",
    "replays",
]

Check = Callable[[Reassembled], str | None]


@dataclass(frozen=True)
class Rounds:
    """How many interleaved rounds: at least ``least``; more, up to ``most``, while a
    round is short enough that ``budget_s`` of rounds buys more than ``least``."""

    least: int
    most: int
    budget_s: float

    def count(self, round_ns: int) -> int:
        affordable = math.floor(self.budget_s * 1e9 / max(round_ns, 1))
        return max(self.least, min(self.most, affordable))


@dataclass(frozen=True)
class Clocks:
    """Nanoseconds of each run: wall (``perf_counter_ns``) and CPU (``process_time_ns``)."""

    wall: tuple[int, ...]
    cpu: tuple[int, ...]

    def median(self, clock: str) -> float | None:
        runs = self.wall if clock == "wall" else self.cpu
        return statistics.median(runs) if runs else None


@dataclass(frozen=True)
class Timing:
    """One driver's replays of one feed."""

    clocks: Clocks
    #: How the last replay's result differs from the output (``None``: it is right,
    #: or the driver is not a parser).
    problem: str | None


@dataclass(frozen=True)
class OneShot:
    clocks: Clocks
    peak_bytes: int | None
    problem: str | None


@dataclass
class _Runs:
    wall: list[int] = field(default_factory=list)
    cpu: list[int] = field(default_factory=list)
    problem: str | None = None
    failed: bool = False

    def clocks(self) -> Clocks:
        return Clocks(tuple(self.wall), tuple(self.cpu))


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Move every object that exists now out of the garbage collector's reach."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def replays(
    drivers: Sequence[Driver], feeds: Sequence[tuple[Feed, Check]], rounds: Rounds
) -> list[dict[str, Timing]]:
    """Timed replays of every feed by every driver, all interleaved: each round replays
    each feed with each driver in turn, so that the ratios between drivers *and* the
    growth between sizes compare runs made moments apart. As many rounds as ``rounds``
    says, judged by the first. Returns one ``{driver: Timing}`` per feed."""
    runs = [{driver.key: _Runs() for driver in drivers} for _ in feeds]
    wanted = rounds.least
    done = 0
    while done < wanted:
        round_ns = 0
        for (feed, check), states in zip(feeds, runs, strict=True):
            for driver in drivers:
                state = states[driver.key]
                if state.failed:
                    continue
                try:
                    wall, cpu, outputs = _timed(driver.stream, driver.prepare(), feed)
                    if driver.verified:
                        state.problem = check(driver.reassemble_stream(outputs))
                except Exception as error:
                    state.failed = True
                    state.problem = f"raised {type(error).__name__}: {error}"
                    continue
                state.wall.append(wall)
                state.cpu.append(cpu)
                round_ns += wall
        done += 1
        if done == 1:
            wanted = rounds.count(round_ns)
    return [
        {key: Timing(state.clocks(), state.problem) for key, state in states.items()}
        for states in runs
    ]


def one_shot(
    drivers: Sequence[Driver], text: str, rounds: Rounds, check: Check
) -> dict[str, OneShot]:
    """Timed one-shot parses of ``text`` (interleaved), then one under ``tracemalloc``."""
    runs = {driver.key: _Runs() for driver in drivers}
    for _ in range(rounds.least):
        for driver in drivers:
            state = runs[driver.key]
            if state.failed:
                continue
            try:
                wall, cpu, result = _timed(driver.parse, driver.prepare(), text)
                if driver.verified:
                    state.problem = check(driver.reassemble_parse(result))
            except Exception as error:
                state.failed = True
                state.problem = f"raised {type(error).__name__}: {error}"
                continue
            state.wall.append(wall)
            state.cpu.append(cpu)
    results = {}
    for driver in drivers:
        state = runs[driver.key]
        peak = None if state.failed else _peak_bytes(driver, text)
        results[driver.key] = OneShot(state.clocks(), peak, state.problem)
    return results


def repeated(function: Callable[[Any], Any], data: Any, rounds: Rounds) -> Clocks:
    """``function(data)`` timed ``rounds.least`` times, as a replay is timed."""
    runs = [_timed(lambda _unused, value: function(value), None, data) for _ in range(rounds.least)]
    return Clocks(tuple(wall for wall, _, _ in runs), tuple(cpu for _, cpu, _ in runs))


def profile(driver: Driver, feed: Feed, top: int = 12) -> list[dict[str, Any]]:
    """Where one replay spends its CPU time: the ``top`` functions by own time (cProfile)."""
    parser = driver.prepare()
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    driver.stream(parser, feed)
    profiler.disable()
    stats = pstats.Stats(profiler)
    table: dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in table.values()) or 1.0
    ranked = sorted(table.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return [
        {
            "function": _where(key),
            "calls": calls,
            "own_share": round(own / total, 4),
            "cumulative_share": round(cumulative / total, 4),
        }
        for key, (_, calls, own, cumulative, _callers) in ranked
    ]


def _timed(run: Callable[[Any, Any], Any], parser: Any, data: Any) -> tuple[int, int, Any]:
    gc.collect()
    gc.disable()
    try:
        cpu_start = time.process_time_ns()
        start = time.perf_counter_ns()
        result = run(parser, data)
        wall = time.perf_counter_ns() - start
        cpu = time.process_time_ns() - cpu_start
    finally:
        gc.enable()
    return wall, cpu, result


def _peak_bytes(driver: Driver, text: str) -> int:
    parser = driver.prepare()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        driver.parse(parser, text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


_PREFIXES = tuple(
    (str(path) + "/", label)
    for path, label in (
        (Path(sysconfig.get_paths()["purelib"]), ""),
        (ROOT, ""),
        (Path(sysconfig.get_paths()["stdlib"]), "stdlib:"),
    )
)


def _where(key: tuple[str, int, str]) -> str:
    filename, line, function = key
    if filename == "~":  # a builtin
        return function
    for prefix, label in _PREFIXES:
        if filename.startswith(prefix):
            filename = label + filename[len(prefix) :]
            break
    return f"{filename}:{line}({function})"


def load_average(who: str, when: str) -> float:
    """The one-minute load average, printed (with a warning above the CPU count)."""
    load = os.getloadavg()[0]
    cpus = os.cpu_count() or 1
    busy = " (busier than the CPUs: timings will be skewed)" if load > cpus else ""
    print(f"{who}: load average {load:.2f} {when}, {cpus} CPUs{busy}", file=sys.stderr, flush=True)
    return load


def divide(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded, ``None`` when either is missing or ``b`` is not positive."""
    return None if a is None or b is None or b <= 0 else round(a / b, 4)


def minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b
