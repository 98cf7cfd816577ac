"""Detection delay, misses and false alarms of the drift detectors on seeded streams.

    python -m bench.drift [--seeds 50] [--json bench/results/drift.json] [--workers 2]

Per (contender, scenario, seed) the stream of `bench.drift.streams` is fed sample by
sample. Delay = post-change samples seen when the first alarm at or after the change
fires (1 = on the first changed sample); a miss = no alarm within 5,000 samples after
the change. False alarms = every alarm on the stationary streams, per 100,000 samples.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from scipy import stats

from bench.drift.contenders import CONTENDERS, Contender, build
from bench.drift.streams import POST, SCENARIOS, Scenario, generate

__all__ = ["run_task", "summarise"]

# main table: the scenarios the targets are defined on; robustness: what else can go wrong
MAIN = {
    "score": ["drop_0.10", "drop_0.05", "gradual_0.10", "stationary_score"],
    "rate": ["refusal_2_to_6", "stationary_rate"],
}
ROBUSTNESS = {
    "score": ["stationary_clustered", "stationary_wide", "drop_0.10_at_0.90", "stationary_at_0.77"]
}
SCENARIO = {s.name: s for s in SCENARIOS}
TARGET_DELAY = 300  # p90, samples, on drop_0.10
TARGET_FALSE_ALARMS = 1.0  # per 100,000 stationary samples (independent, at 0.82 / 2 %)


def run_task(task: tuple[Contender, Scenario, list[int]]) -> dict[str, Any]:
    contender, scenario, seeds = task
    started = time.process_time()
    alarms: list[list[int]] = []
    for seed in seeds:
        detector = build(contender)
        hits: list[int] = []
        for i, x in enumerate(generate(scenario, seed).tolist()):
            detector.update(x)
            if detector.drift_detected:
                hits.append(i)
        alarms.append(hits)
    return {"alarms": alarms, "cpu_s": time.process_time() - started, "seeds": seeds}


def _quantile(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values, dtype=float), q, method="inverted_cdf"))


def summarise(scenario: Scenario, alarms: list[list[int]]) -> dict[str, Any]:
    if scenario.change is None:
        count = sum(len(a) for a in alarms)
        samples = scenario.length * len(alarms)
        upper = stats.chi2.ppf(0.95, 2 * count + 2) / 2  # one-sided 95 % Poisson bound
        return {
            "false_alarms": count,
            "samples": samples,
            "false_alarms_per_100k": count / samples * 1e5,
            "false_alarms_per_100k_upper95": upper / samples * 1e5,
        }
    cp = scenario.change
    delays: list[float] = []
    for hits in alarms:
        after = [i for i in hits if cp <= i < cp + POST]
        delays.append(after[0] - cp + 1 if after else math.inf)
    found = [d for d in delays if math.isfinite(d)]
    return {
        "delays": [d if math.isfinite(d) else None for d in delays],
        "delay_median": _quantile(delays, 0.5),
        "delay_p90": _quantile(delays, 0.9),
        "miss_rate": 1 - len(found) / len(delays),
        "alarms_before_change": sum(sum(1 for i in hits if i < cp) for hits in alarms),
        "samples_before_change": cp * len(alarms),
    }


def _fmt(value: float) -> str:
    return "miss" if not math.isfinite(value) else f"{value:.0f}"


def _meets(kind: str, per: dict[str, Any]) -> str:
    fa_ok = per[MAIN[kind][-1]]["false_alarms_per_100k"] <= TARGET_FALSE_ALARMS
    if kind != "score":
        return "false alarms" if fa_ok else "—"
    delay_ok = per["drop_0.10"]["delay_p90"] <= TARGET_DELAY
    met = [name for name, ok in (("delay", delay_ok), ("false alarms", fa_ok)) if ok]
    return " + ".join(met) or "—"


def _cell(r: dict[str, Any]) -> str:
    if "delays" in r:
        return f"{_fmt(r['delay_median'])} / {_fmt(r['delay_p90'])}, {r['miss_rate']:.0%}"
    return f"{r['false_alarms_per_100k']:.2f} ({r['false_alarms_per_100k_upper95']:.2f})"


def _table(kind: str, names: list[str], results: dict[str, dict[str, Any]], main: bool) -> str:
    head = ["detector"]
    for name in names:
        what = (
            "delay median / p90, miss"
            if SCENARIO[name].change is not None
            else "FA/100k (95 % upper)"
        )
        head.append(f"{name}: {what}")
    head += ["targets met", "CPU s"] if main else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, per in results.items():
        cells = [f"`{label}`"] + [_cell(per[name]) for name in names]
        cells += [_meets(kind, per), f"{per['cpu_s']:.0f}"] if main else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", default="bench/results/drift.json", help="raw numbers ('' = none)")
    ap.add_argument("--only", action="append", help="contender label(s) to run")
    args = ap.parse_args()

    seeds = list(range(args.seeds))
    chunks = [seeds[i : i + 10] for i in range(0, len(seeds), 10)]
    by_name = SCENARIO
    contenders = [c for c in CONTENDERS if not args.only or c.label in args.only]
    tasks: list[tuple[Contender, Scenario, list[int]]] = []
    for c in contenders:
        for name in [*MAIN[c.kind], *ROBUSTNESS.get(c.kind, [])]:
            tasks.extend((c, by_name[name], chunk) for chunk in chunks)

    wall = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        outputs = list(pool.map(run_task, tasks, chunksize=1))
    wall = time.perf_counter() - wall

    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for (c, scenario, _), out in zip(tasks, outputs, strict=True):
        slot = merged.setdefault((c.kind, c.label, scenario.name), {"alarms": [], "cpu_s": 0.0})
        slot["alarms"].extend(out["alarms"])
        slot["cpu_s"] += out["cpu_s"]
    results: dict[str, dict[str, dict[str, Any]]] = {"score": {}, "rate": {}}
    for (kind, label, name), slot in merged.items():
        per = results[kind].setdefault(label, {"cpu_s": 0.0})
        per[name] = summarise(by_name[name], slot["alarms"])
        per["cpu_s"] += slot["cpu_s"]
    specs = {f"{c.kind}/{c.label}": c.spec for c in contenders}

    machine = f"{os.cpu_count()} cores {_cpu()}, Python {platform.python_version()}"
    print(f"seeds {args.seeds}, workers {args.workers}, wall {wall:.1f} s, {machine}")
    for kind in ("score", "rate"):
        if results[kind]:
            print(f"\n{kind} streams\n" + _table(kind, MAIN[kind], results[kind], True))
        if results[kind] and kind in ROBUSTNESS:
            print(f"\n{kind} streams, robustness\n")
            print(_table(kind, ROBUSTNESS[kind], results[kind], False))
    if args.json:
        payload = {
            "date": time.strftime("%Y-%m-%d"),
            "seeds": args.seeds,
            "workers": args.workers,
            "targets": {
                "delay_p90_drop_0.10": TARGET_DELAY,
                "false_alarms_per_100k": TARGET_FALSE_ALARMS,
            },
            "wall_s": wall,
            "machine": machine,
            "scenarios": {s.name: {**s.__dict__} for s in SCENARIOS},
            "specs": specs,
            "results": results,
        }
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1)
        print(f"\nraw numbers: {args.json}")


if __name__ == "__main__":
    main()
