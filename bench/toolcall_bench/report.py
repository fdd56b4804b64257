"""The results as JSON-ready data, as markdown, and in the plugins' READMEs.

The README section lies between :data:`START` and :data:`END`; the benchmark rewrites
only what is between them. A README without the markers gets them at the end of its
``## Benchmark`` section, after the text already there, or in a new ``## Benchmark``
section at its end.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import regex

from toolcall_bench.drivers import DRIVERS
from toolcall_bench.outputs import ROOT, BenchError

__all__ = ["END", "START", "markdown", "number", "plugin_readmes", "replace_section"]

START = "<!-- bench:start -->"
END = "<!-- bench:end -->"


def replace_section(readme: str, body: str) -> str:
    """``readme`` with ``body`` between the markers (see the module docstring)."""
    start, end = readme.find(START), readme.find(END)
    block = f"{START}\n{body.strip()}\n{END}\n"
    if start == -1 and end == -1:
        heading = regex.search(r"^## Benchmark[ \t]*$", readme, flags=regex.MULTILINE)
        if heading is None:
            return readme.rstrip("\n") + "\n\n## Benchmark\n\n" + block
        following = regex.compile(r"^## ", flags=regex.MULTILINE).search(readme, heading.end())
        cut = following.start() if following else len(readme)
        rest = "\n" + readme[cut:] if following else ""
        return readme[:cut].rstrip("\n") + "\n\n" + block + rest
    if start == -1 or end < start:
        msg = f"the README has a broken benchmark section: expected {START} ... {END}"
        raise BenchError(msg)
    return readme[: start + len(START)] + "\n" + body.strip() + "\n" + readme[end:]


def plugin_readmes(root: Path = ROOT) -> dict[str, Path]:
    """Distribution name -> README of the plugins in this checkout."""
    found = {}
    for pyproject in sorted(root.glob("plugins/*/pyproject.toml")):
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
        found[str(name)] = pyproject.parent / "README.md"
    return found


def markdown(run: Mapping[str, Any], parsers: Sequence[Mapping[str, Any]]) -> str:
    """The tables of ``parsers`` (entries of ``run["parsers"]``) with how they were made."""
    settings = run["settings"]
    machine = run["machine"]
    small, large = settings["growth"]
    rounds = settings["repetitions"]
    tokenizers = ", ".join(sorted({f"`{p['tokenizer']}`" for p in parsers}))
    load = machine["load_average"]
    clock = "wall-clock" if settings["clock"] == "wall" else "CPU"
    parsing = [key for key in DRIVERS if key != "floor"]
    lines = [
        f"Made by `{run['command']}` on {run['started'][:10]}: vLLM {machine['vllm']}, "
        f"Python {machine['python']}, {machine['cpus']} CPUs (load average "
        f"{load['start']:.1f} at the start, {load['end']:.1f} at the end); medians of "
        f"{rounds['least']} to {rounds['most']} interleaved runs, {clock} time"
        + (" (**smoke run: tiny sizes, not a measurement**)" if run["smoke"] else "")
        + ".",
        "",
        f"Each output is a sentence of content and one `write_file` call whose arguments "
        f"hold real Python source, tokenized with the family's tokenizer ({tokenizers}) and "
        f"fed one token per delta, and 4 tokens per delta as with speculative decoding. "
        f"µs/token is the time of the whole stream over its tokens. The vLLM columns run "
        f"inside vLLM's own `DelegatingParser`; *vLLM floor* is a parser that only wraps "
        f"each delta in the `DeltaMessage` every parser returns: what vLLM costs any "
        f"parser. *Above floor*: ours over the built-in, each less the floor.",
        "",
        "| parser | tokens/delta | argument tokens | "
        + " | ".join(f"{label} µs/token" for label in DRIVERS.values())
        + " | adapter / built-in | above floor |",
        "| --- | " + " | ".join(["---:"] * (len(DRIVERS) + 4)) + " |",
    ]
    for parser in parsers:
        for stream in parser["streams"]:
            drivers = stream["drivers"]
            lines.append(
                f"| {_label(parser)} | {stream['tokens_per_delta']} | "
                f"{stream['argument_tokens']:,} | "
                + " | ".join(number(drivers[key]["median_us_per_token"], 2) for key in DRIVERS)
                + f" | {number(stream['ratio_adapter_to_builtin'], 2)}"
                + f" | {number(stream['ratio_above_floor'], 2)} |"
            )
    lines += [
        "",
        f"Growth of the cost per token from {small:,} to {large:,} argument tokens "
        f"(1.0: flat; the floor shows the noise):",
        "",
        "| parser | tokens/delta | " + " | ".join(DRIVERS.values()) + " |",
        "| --- | " + " | ".join(["---:"] * (len(DRIVERS) + 1)) + " |",
    ]
    for parser in parsers:
        for growth in parser["growth"]:
            lines.append(
                f"| {_label(parser)} | {growth['tokens_per_delta']} | "
                + " | ".join(number(growth[key], 2) for key in DRIVERS)
                + " |"
            )
    one_shot_bytes = parsers[0]["one_shot"]["argument_bytes"] if parsers else 0
    json_limit = run["targets"]["one-shot-json"]["limit"]
    lines += [
        "",
        f"One-shot parse of {one_shot_bytes:,} bytes of arguments (vLLM: "
        f"`DelegatingParser.parse`; core: `Parser.parse`): time, and peak memory "
        f"(tracemalloc); `json.loads` of the same arguments as JSON text, the yardstick of "
        f"the core's target (core / json.loads ≤ {json_limit:g}):",
        "",
        "| parser | "
        + " | ".join(f"{DRIVERS[key]} ms" for key in parsing)
        + " | json.loads ms | core / json.loads | "
        + " | ".join(f"{DRIVERS[key]} MiB" for key in parsing)
        + " |",
        "| --- | " + " | ".join(["---:"] * (2 * len(parsing) + 2)) + " |",
    ]
    for parser in parsers:
        shot = parser["one_shot"]
        drivers = shot["drivers"]
        json_target = next(t for t in parser["targets"] if t["target"] == "one-shot-json")
        lines.append(
            f"| {_label(parser)} | "
            + " | ".join(number(drivers[key]["median_ms"], 1) for key in parsing)
            + f" | {number(shot['json_loads']['median_ms'], 1)} | {_cell(json_target)} | "
            + " | ".join(number(drivers[key]["peak_mib"], 1) for key in parsing)
            + " |"
        )
    lines += _targets(run, parsers)
    unavailable = [p for p in parsers if p.get("builtin_unavailable")]
    if unavailable:
        lines += [
            "",
            "Built-ins that cannot be built with the family's tokenizer (not measured):",
            "",
        ]
        lines += [f"- {p['name']}: `{p['builtin_unavailable']}`" for p in unavailable]
    problems = list(_problems(parsers))
    if problems:
        lines += ["", "Parses that came out wrong (their times are shown all the same):", ""]
        lines += [f"- {problem}" for problem in problems]
    profiled = [(parser, entry) for parser in parsers for entry in parser["profiles"]]
    if profiled:
        lines += ["", "Where the time goes where a target is missed (cProfile, own CPU time):", ""]
        for parser, entry in profiled:
            top = ", ".join(
                f"`{item['function']}` {item['own_share']:.0%}" for item in entry["top"][:5]
            )
            lines.append(
                f"- {_label(parser)}, {DRIVERS[entry['driver']]}, "
                f"{entry['argument_tokens']:,} argument tokens, "
                f"{entry['tokens_per_delta']} token(s)/delta: {top}"
            )
    lines += ["", f"All numbers: `{run['json']}` in the run's output folder.", ""]
    return "\n".join(lines)


def _targets(run: Mapping[str, Any], parsers: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-stream targets as a table: a value per target, ✗ where it is missed (the
    one-shot target is in the one-shot table)."""
    targets = {key: t for key, t in run["targets"].items() if key != "one-shot-json"}
    small, large = run["settings"]["growth"]
    top = max(run["settings"]["sizes"])
    what = {
        "adapter-above-floor": f"adapter above floor / built-in above floor at {top:,}",
        "adapter-growth": f"adapter growth {small:,} → {large:,}",
        "core-growth": f"core growth {small:,} → {large:,}",
        "core-us": f"core µs/token at {top:,}",
    }
    lines = [
        "",
        "Targets (issue 10; ✗: missed, with how far):",
        "",
        "| parser | tokens/delta | "
        + " | ".join(f"{what[key]} (≤ {_limits(target)})" for key, target in targets.items())
        + " |",
        "| --- | " + " | ".join(["---:"] * (len(targets) + 1)) + " |",
    ]
    rows: dict[tuple[str, int], dict[str, Mapping[str, Any]]] = {}
    for parser in parsers:
        for target in parser["targets"]:
            if target["tokens_per_delta"] is not None:
                key = (_label(parser), target["tokens_per_delta"])
                rows.setdefault(key, {})[target["target"]] = target
    for (name, tokens_per_delta), row in rows.items():
        cells = [_cell(row.get(key)) for key in targets]
        lines.append(f"| {name} | {tokens_per_delta} | " + " | ".join(cells) + " |")
    return lines


def _limits(target: Mapping[str, Any]) -> str:
    """``0.3``, or ``0.1 hermes, qwen3_json; 0.3 others`` where parsers differ."""
    limits: Mapping[str, float] = target.get("limits") or {}
    default = target["limit"]
    special: dict[float, list[str]] = {}
    for name, limit in sorted(limits.items()):
        if limit != default:
            special.setdefault(limit, []).append(name)
    if not special:
        return f"{default:g}"
    parts = [f"{limit:g} {', '.join(names)}" for limit, names in sorted(special.items())]
    return "; ".join([*parts, f"{default:g} others"])


def _cell(target: Mapping[str, Any] | None) -> str:
    if target is None or target["value"] is None:
        return "n/a"
    if target["met"]:
        return number(target["value"], 2)
    times = target["value"] / target["limit"]
    return f"✗ {number(target['value'], 2)} ({times:.2f} x the limit {target['limit']:g})"


def _problems(parsers: Iterable[Mapping[str, Any]]) -> Iterable[str]:
    """Wrong parses and failures, but those of a built-in that cannot be built at all."""
    for parser in parsers:
        skip = "builtin" if parser.get("builtin_unavailable") else ""
        for stream in parser["streams"]:
            for key, driver in stream["drivers"].items():
                if driver["problem"] and key != skip:
                    yield (
                        f"{_label(parser)}, {DRIVERS[key]}, {stream['argument_tokens']:,} "
                        f"argument tokens, {stream['tokens_per_delta']} token(s)/delta: "
                        f"{driver['problem']}"
                    )
        for key, driver in parser["one_shot"]["drivers"].items():
            if driver["problem"] and key != skip:
                yield f"{_label(parser)}, {DRIVERS[key]}, one-shot: {driver['problem']}"


def _label(parser: Mapping[str, Any]) -> str:
    """The parser's row label: its name, or the generation of its format it was measured on."""
    return str(parser.get("label", parser["name"]))


def number(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"
