"""The BENCHMARKS.md section of the detector benchmark (`bench.perf.detectors`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.perf.mdsection import spread

__all__ = ["markdown"]

SEED = 7


def _s(values: Sequence[float], scale: float = 1.0, digits: int = 1) -> str:
    s = spread([v * scale for v in values])
    return f"{s['min']:,.{digits}f} / **{s['median']:,.{digits}f}** / {s['max']:,.{digits}f}"


def _naive_cell(naive: dict[str, Any]) -> str:
    if naive["seconds"] and not naive["timed_out"]:
        return _s(naive["seconds"], 1000, 0)
    if naive["seconds"]:
        return f"{_s(naive['seconds'], 1000, 0)}, then > {naive['cap_s'] * 1000:,.0f} (killed)"
    return f"**> {naive['cap_s'] * 1000:,.0f}** (killed at the cap, no run finished)"


def markdown(result: dict[str, Any]) -> str:
    m, eq, mbs = result["machine"], result["equivalence"], result["mb_per_s"]
    ratio = result["ratio_engine_over_naive"]
    same = "identical to the engine, pair by pair"
    size_kb = next(iter(result["adversarial"].values()))["bytes"] / 1024
    verdict = "met" if ratio["median"] >= result["target_ratio"] else "**not met**"
    lines = [
        "## Detector engine vs the naive approach",
        "",
        "`python -m bench.perf.detectors --runs 5` (code: `bench/perf/detectors.py`, "
        "`bench/perf/naive_patterns.py`; raw numbers: `bench/results/detectors.json`).",
        f"Machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}; {m['date']}; "
        f"commit {m['commit']}; load average {m['loadavg']} before, "
        f"{result['loadavg_after']} after (other jobs shared the machine). "
        f"{result['runs']} runs, interleaved; min / **median** / max."
        + (" **Smoke run: not a measurement.**" if result["smoke"] else ""),
        "",
        f"Input: the first {result['responses']:,} well-formed responses of the traffic "
        f"generator (seed {SEED}), {result['megabytes']:.2f} MB of UTF-8. Pattern set: the "
        f"{result['patterns']} regexes the detectors screen every response with, read from "
        "the built detectors ("
        + ", ".join(f"{k} {v}" for k, v in result["pattern_sets"].items())
        + "). Naive = the seed plan's style: each regex compiled with Python `re` "
        "(IGNORECASE where RE2 is case-insensitive), a Python loop of `re.search` per "
        "pattern per response, first span of each hit. Engine = `detectors.regex`: one "
        "`re2.Set` pass per set, then `finditer` spans (up to 200) for the patterns that "
        "matched. Suite = all enabled detectors ("
        + ", ".join(result["detectors"])
        + ") on the same events, with everything they do besides regexes (quote blanking, "
        "negation windows, Luhn/IBAN checks, n-gram source policy over the context, "
        "citations); MB/s still counts response bytes only.",
        "",
        "| side | MB/s | s per 10k responses |",
        "|---|---|---|",
    ]
    scale = 10_000 / result["responses"]
    for key, label in (
        ("naive", "naive `re.search` loop"),
        ("engine", "ragpulse engine (RE2 Set + spans)"),
        ("suite", "ragpulse full detector suite"),
    ):
        lines.append(
            f"| {label} | {_s([mbs[key]['min'], mbs[key]['median'], mbs[key]['max']], digits=2)} "
            f"| {_s(result['seconds'][key], scale, 2)} |"
        )
    lines += [
        "",
        "Engine / naive, per run (same run, paired): "
        f"{_s([ratio['min'], ratio['median'], ratio['max']])} times; target >= 5x: {verdict}.",
        "",
        f"Equivalence: (response, pattern) pairs that match — naive {eq['naive_pairs']:,}, "
        f"engine {eq['engine_pairs']:,}, and the first match has the same span in "
        f"{eq.get('same_first_span', 0):,} of the common pairs; "
        f"naive with `re.ASCII` {eq['naive_ascii_pairs']:,} "
        f"({same if eq['ascii_identical'] else 'still differs'}).",
    ]
    lines += [
        "",
        "Where the sides differ by construction: both are leftmost-first (Perl) matchers, "
        "so hits and first spans agree, but Python `re` on `str` makes `\\w`, `\\d`, "
        "`\\s` and `\\b` Unicode-aware while RE2 keeps them ASCII (a ticker next to an "
        "accented letter, non-ASCII digits); `re.ASCII` removes that difference. Python `re` "
        "backtracks, with no time bound (the adversarial rows). The naive loop stops at the "
        "first match of each pattern; the engine collects up to 200 spans per matching "
        "pattern, as the detectors need. Neither side applies the detectors' scopes (refusal "
        "lead region, quote blanking, negation windows, validators): those are in the suite "
        "row.",
    ]
    if eq["differences"]:
        lines.append("Where they differ:")
        for d in eq["differences"][:8]:
            lines.append(
                f"- {d['side']}: `{d['pattern']}` on {d['responses']} responses "
                f"(e.g. response #{d['example_index']})"
            )
    lines += [
        "",
        f"Adversarial {size_kb:,.0f} KB responses (one per row; times per response, ms). The naive "
        "loop runs in a child process killed at the cap. The pipeline's default "
        "`limits.max_text_chars` (20,000) dead-letters such a response before any regex "
        "runs; these figures are with the cap raised.",
        "",
        "| input | naive `re` loop | engine | full suite |",
        "|---|---|---|---|",
    ]
    for case, adv in result["adversarial"].items():
        lines.append(
            f"| `{adv['unit']!r}` x {adv['bytes'] // len(adv['unit']):,} ({case}) "
            f"| {_naive_cell(adv['naive'])} | {_s(adv['engine_s'], 1000, 1)} "
            f"| {_s(adv['suite_s'], 1000, 1)} |"
        )
    hot = "; ".join(
        f"{case}: " + ", ".join(f"`{k}` {v * 1000:,.0f} ms" for k, v in adv["naive_hot_10kb"])
        for case, adv in result["adversarial"].items()
    )
    lines += ["", f"Slowest naive patterns on a 10 KB slice of each input: {hot}."]
    return "\n".join(lines)
