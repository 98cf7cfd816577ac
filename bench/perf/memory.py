"""Memory: steady-state RSS at 1,000 events/s, import floor, tracemalloc top-10 (`memory`).

    python -m bench memory [--runs 5] [--rate 1000] [--seconds 20] [--smoke]

Steady state: one `ragpulse run` child (judges off, then the embedded judge with
sampling at 1 %) fed at `--rate` for `--seconds`; VmRSS is read from /proc every 0.5 s
and the steady figure is the median of the second half (the peak is reported too).
Import floor: VmRSS of a fresh interpreter after importing what `ragpulse run` imports,
then after building the pipeline. tracemalloc: a child that starts tracing before the
imports, builds the pipeline and runs 3,000 events through it; the ten files holding
the most traced memory at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from bench.perf.kafkabench import create_topic, dataset, rss_mb, save_perf
from bench.perf.mdsection import ROOT, machine, replace_section
from bench.perf.sidecarproc import BenchSidecar, paced_produce
from stream.demo import EmbeddedBroker

__all__ = ["main", "run", "tracemalloc_top"]

NAME = "memory"
TOPIC = "mem.in"

_FLOOR = """
import json, sys
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
base = rss()
import stream.cli, stream.runtime.factory, stream.runtime.engine_aiokafka, exporters
imported = rss()
from stream.runtime.settings import load_settings
from exporters import PromFamilies
from stream.runtime.factory import build_sidecar
s = load_settings(judge={"backend": "none"})
build_sidecar(s, PromFamilies.with_label_caps(s.labels.max_values, s.labels.allow))
built = rss()
print(json.dumps({"interpreter_mb": base, "imported_mb": imported, "built_mb": built}))
"""

_TRACE = """
import json, pickle, sys, tracemalloc
with open(sys.argv[1], "rb") as fh:
    raws = pickle.load(fh)  # the input itself is not counted
tracemalloc.start(25)
from stream.runtime.settings import load_settings
from exporters import PromFamilies
from stream.runtime.factory import build_sidecar
s = load_settings(judge={"backend": "none"})
sc = build_sidecar(s, PromFamilies.with_label_caps(s.labels.max_values, s.labels.allow))
for raw in raws:
    sc.pipeline.process(raw)
snap = tracemalloc.take_snapshot()
ROOT = sys.path[0] or "."

def owner(tb):
    # the innermost frame that is not import machinery: the module that allocated
    for frame in reversed(tb):
        f = frame.filename
        if f.startswith("<frozen") or "/importlib/" in f:
            continue
        if "site-packages/" in f:
            return f.split("site-packages/")[1].split("/")[0].removesuffix(".py")
        if "/lib/python3" in f:
            return "stdlib"
        return "ragpulse:" + f.rsplit("/main/", 1)[-1].split("/")[0]
    return "import machinery"

sizes = {}
for st in snap.statistics("traceback"):
    key = owner(st.traceback)
    sizes[key] = sizes.get(key, 0) + st.size
total = sum(sizes.values())
top = sorted(sizes.items(), key=lambda kv: -kv[1])[:10]
print(json.dumps({"traced_total_mb": total / 2**20,
                  "top": [{"file": k, "kb": v / 1024} for k, v in top]}))
"""


def _child(code: str, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def tracemalloc_top(events: int) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".pickle") as fh:
        pickle.dump([raw for _key, raw in dataset(events)], fh)
        fh.flush()
        return _child(_TRACE, fh.name)


def _steady(bs: str, rate: float, seconds: float, judge: bool, offset: int) -> dict[str, Any]:
    env = (
        {"RAGPULSE_JUDGE__BACKEND__TYPE": "embedded", "RAGPULSE_SAMPLING__RATE": "0.01"}
        if judge
        else {}
    )
    topic = f"{TOPIC}-{offset}"
    asyncio.run(create_topic(bs, topic, 4))
    sc = BenchSidecar(bs, topic, cpu=1, **env).start()
    samples: list[float] = []
    stop = threading.Event()
    try:
        sc.wait_ready()
        assert sc.proc is not None
        pid = sc.proc.pid

        def watch() -> None:
            while not stop.is_set():
                samples.append(rss_mb(pid))
                time.sleep(0.5)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        messages = list(dataset(int(rate * seconds) + offset))[offset:]
        achieved = asyncio.run(paced_produce(bs, topic, messages, rate))
        stop.set()
        watcher.join()
        consumed = sc.consumed()
    finally:
        stop.set()
        sc.stop()
    half = samples[len(samples) // 2 :] or samples
    return {
        "judge": "embedded" if judge else "none",
        "achieved_per_s": achieved,
        "consumed": consumed,
        "steady_rss_mb": statistics.median(half),
        "peak_rss_mb": max(samples),
        "loadavg": list(os.getloadavg()),
    }


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def run(runs: int, rate: float, seconds: float, smoke: bool = False) -> dict[str, Any]:
    per_run: list[dict[str, Any]] = []
    for i in range(runs):
        with EmbeddedBroker() as broker:
            off = _steady(broker.bootstrap_servers, rate, seconds, False, 0)
            on = _steady(broker.bootstrap_servers, rate, seconds, True, 1)
        floor = _child(_FLOOR)
        per_run.append({"judges_off": off, "embedded_judge": on, "floor": floor})
        print(f"  run {i + 1}: off {off['steady_rss_mb']:.0f} MB, "
              f"judge {on['steady_rss_mb']:.0f} MB, floor {floor['imported_mb']:.0f}/"
              f"{floor['built_mb']:.0f} MB", flush=True)  # fmt: skip
    trace = tracemalloc_top(300 if smoke else 3000)
    summary = {
        "judges_off_steady_mb": _spread([r["judges_off"]["steady_rss_mb"] for r in per_run]),
        "judges_off_peak_mb": _spread([r["judges_off"]["peak_rss_mb"] for r in per_run]),
        "judge_steady_mb": _spread([r["embedded_judge"]["steady_rss_mb"] for r in per_run]),
        "judge_peak_mb": _spread([r["embedded_judge"]["peak_rss_mb"] for r in per_run]),
        "interpreter_mb": _spread([r["floor"]["interpreter_mb"] for r in per_run]),
        "imported_mb": _spread([r["floor"]["imported_mb"] for r in per_run]),
        "built_mb": _spread([r["floor"]["built_mb"] for r in per_run]),
        "loadavg_1m": _spread([r["judges_off"]["loadavg"][0] for r in per_run]),
    }
    return {"runs": runs, "rate": rate, "seconds": seconds, "per_run": per_run,
            "summary": summary, "tracemalloc": trace}  # fmt: skip


def _short(path: str) -> str:
    if not path.startswith("/"):
        return path
    if path.startswith(str(ROOT)):
        return os.path.relpath(path, ROOT)
    return path.split("site-packages/")[-1]


def _f(s: dict[str, float]) -> str:
    return f"{s['min']:.0f} / **{s['median']:.0f}** / {s['max']:.0f}"


def markdown(result: dict[str, Any], smoke: bool) -> str:
    m, s, t = result.get("machine") or machine(), result["summary"], result["tracemalloc"]
    top = [f"| {i} | `{_short(e['file'])}` | {e['kb']:,.0f} |" for i, e in enumerate(t["top"], 1)]
    return "\n".join(
        [
            "## Memory",
            "",
            f"`python -m bench memory --runs {result['runs']}` (code: `bench/perf/memory.py`)."
            + (" **Smoke run: not a measurement.**" if smoke else ""),
            f"Machine: {m['cpu']}, {m['cores']} cores; {m['date']}; commit {m['commit']}. "
            f"RSS (MiB) of one `ragpulse run` fed {result['rate']:,.0f} events/s for "
            f"{result['seconds']:.0f} s; steady = median of the second half of 0.5 s samples; "
            f"min / **median** / max over {result['runs']} runs (target < 250 MB).",
            "",
            "| | steady RSS | peak RSS |",
            "|---|---|---|",
            f"| judges off | {_f(s['judges_off_steady_mb'])} | {_f(s['judges_off_peak_mb'])} |",
            f"| embedded judge, sampling 1 % | {_f(s['judge_steady_mb'])} | "
            f"{_f(s['judge_peak_mb'])} |",
            f"| floor: bare interpreter | {_f(s['interpreter_mb'])} | |",
            f"| floor: after the `ragpulse run` imports | {_f(s['imported_mb'])} | |",
            f"| floor: + pipeline and detectors built | {_f(s['built_mb'])} | |",
            "",
            f"tracemalloc (imports + pipeline + 3,000 events, {t['traced_total_mb']:.1f} MiB "
            "traced in total; the input events are loaded before tracing starts), top-10 "
            "contributors by memory held, each allocation charged to the innermost "
            "non-import frame's package (module-level code counts for its package):",
            "",
            "| # | package | KiB |",
            "|---|---|---|",
            *top,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench memory")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--smoke", action="store_true")
    a = p.parse_args(argv)
    if a.smoke:
        a.runs, a.seconds = 1, 1.0
    result = run(max(1, a.runs), a.rate, a.seconds, a.smoke)
    result["smoke"] = a.smoke
    save_perf(NAME, result)
    replace_section(NAME, markdown(result, a.smoke))
    return 0
