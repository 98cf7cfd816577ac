"""Where the embedded judge's memory goes: RSS step by step, in fresh processes (issue 16).

    python -m bench.perf.judge_memory [--events 200] [--cpu 1] [--repeats 1]
        [--variants head,int8_tables,runs,batch_tokens] [--scores 300] [--smoke]
        [--json bench/results/judge_memory.json]

tracemalloc does not see onnxruntime's C++ heap, so each variant runs in a fresh child
process that reads VmRSS (/proc/self/status) after each step: the app imports the judge
path needs (settings, judging, event parsing, the demo generator) and the parsed events;
``import onnxruntime``; ``import tokenizers``; the tokenizer; the onnxruntime session (the
encoder's own `malloc_trim` included); the first event judged; `--events` events of
`bench memory`'s traffic (`stream.demo.generate(seed=7)`) judged by the configured
metrics through a `JudgeService` (concurrency 2, queue kept full); the embedding cache
cleared and the free heap trimmed (what the cache and the heap's free pages held). The
child is pinned to CPU `--cpu` (`bench memory` runs the sidecar under ``taskset -c 1``).

Variants, cumulative (each adds one change to the one before; ``head`` reproduces the
encoder before issue 16 part 3 by switching those changes off):

* ``head``: embedding tables folded to float32, 2,048 tokens per run, unbounded
  concurrent onnxruntime runs;
* ``int8_tables``: + the embedding tables stay int8 (`gather_int8_tables`);
* ``runs``: + at most one onnxruntime run per usable CPU at once;
* ``batch_tokens``: + at most ``_BATCH_TOKENS`` padded tokens per run (the current
  encoder: 128; 256 when issue 16 measured these variants).

`--scores N`: the judge's scores (every metric output) on the first N events of
``halueval_qa`` and N of the demo traffic, and the embedding of every cached text, under
``head`` and under the current encoder, each in its own process; reports whether they
are identical and the largest absolute difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.perf.mdsection import ROOT, machine

__all__ = ["VARIANTS", "child", "main", "scores_child"]

VARIANTS = ("head", "int8_tables", "runs", "batch_tokens")
OUT = ROOT / "bench" / "results" / "judge_memory.json"


def _rss() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _configure(variant: str) -> dict[str, Any]:
    """Switch the encoder's changes off down to `variant`; the judge options to use."""
    from monitors.judges import embedded_encoder as ee

    level = VARIANTS.index(variant)
    if level < 1:
        ee.gather_int8_tables = lambda model: (model, 0)
    if level < 3:
        ee._BATCH_TOKENS = 2048  # the cap before issue 16
    return {} if level >= 2 else {"runs": 64}


def child(variant: str, events: int) -> dict[str, Any]:
    """The RSS steps of one variant (run in a fresh process)."""
    steps: list[dict[str, Any]] = []
    base = _rss()

    def mark(step: str) -> None:
        now = _rss()
        before = steps[-1]["rss_mb"] if steps else base
        steps.append({"step": step, "rss_mb": round(now, 1), "delta_mb": round(now - before, 1)})

    from monitors.judges import embedded_encoder as ee
    from stream.contract.events import parse_event
    from stream.demo import generate
    from stream.runtime.judging_build import build_judging
    from stream.runtime.settings import load_settings

    options = _configure(variant)
    raws = [g.raw for g in generate(events + 1, seed=7, malformed_rate=0.0)]
    evs = [parse_event(raw) for raw in raws]
    mark("interpreter, app imports, events parsed")
    import onnxruntime  # noqa: F401

    mark("import onnxruntime")
    import tokenizers  # noqa: F401

    mark("import tokenizers")
    settings = load_settings(judge={"backend": {"type": "embedded", **options}})
    svc = build_judging(settings)
    assert svc is not None
    judge: Any = svc.judge
    enc: ee.Encoder = judge.encoder
    counts = {"runs": 0, "tokens": 0, "max_tokens": 0}
    real_run = enc._run

    def counted(rows: list[list[int]]) -> Any:
        counts["runs"] += 1
        padded = len(rows) * max(map(len, rows))
        counts["tokens"] += padded
        counts["max_tokens"] = max(counts["max_tokens"], padded)
        return real_run(rows)

    enc._run = counted  # type: ignore[method-assign]
    mark("judge and metrics built")
    enc.load_tokenizer()
    mark("tokenizer")
    enc.load()
    mark("onnxruntime session (malloc_trim included)")
    svc.judge_now(evs[0])
    mark("first event judged")
    import threading

    done = threading.Semaphore(0)
    cpu, wall = time.process_time(), time.monotonic()
    for ev in evs[1:]:
        while not svc.submit(ev, lambda _r: done.release()):
            time.sleep(0.005)
    for _ in evs[1:]:
        done.acquire()
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    mark(f"{events} more events judged")
    cached = len(enc._cache)
    with enc._cache_lock:
        enc._cache.clear()
    import gc

    gc.collect()
    ee.release_free_heap()
    mark("cache cleared, heap trimmed")
    svc.close(5)
    import resource

    return {
        "variant": variant,
        "steps": steps,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "steady_cpu_s": round(cpu, 2),
        "steady_wall_s": round(wall, 2),
        "cached_texts": cached,
        "onnx_runs": counts["runs"],
        "padded_tokens": counts["tokens"],
        "max_padded_tokens_per_run": counts["max_tokens"],
        "concurrent_runs_allowed": enc.runs,
        "embedding_tables_int8": enc.rewritten,
    }


def scores_child(variant: str, n: int, out: str) -> dict[str, Any]:
    """Every metric score on n halueval_qa + n demo events; the cached embeddings to `out`."""
    import itertools

    import numpy as np

    from stream.contract.events import parse_event
    from stream.demo import generate
    from stream.runtime.judging_build import build_judging
    from stream.runtime.settings import load_settings
    from tests.support.datasets import adapt

    options = _configure(variant)
    svc = build_judging(load_settings(judge={"backend": {"type": "embedded", **options}}))
    assert svc is not None
    evs = [parse_event(json.dumps(e)) for e in itertools.islice(adapt("halueval_qa"), n)]
    evs += [parse_event(g.raw) for g in generate(n, seed=7, malformed_rate=0.0)]
    scores = {}
    for ev in evs:
        scores[ev.event_id] = dict(sorted(svc.judge_now(ev).scores().items()))
    enc: Any = svc.judge.encoder
    texts = sorted(enc._cache)
    vecs = np.stack([enc._cache[t] for t in texts])
    np.save(out, vecs)
    svc.close(5)
    return {"variant": variant, "texts": texts, "scores": scores}


def _run_child(args: list[str], cpu: int | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-m", "bench.perf.judge_memory", *args]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def compare_scores(n: int, cpu: int | None) -> dict[str, Any]:
    import tempfile

    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        a = _run_child(["--child-scores", "head", "--scores", str(n), "--out", f"{tmp}/a.npy"], cpu)
        b = _run_child(
            ["--child-scores", VARIANTS[-1], "--scores", str(n), "--out", f"{tmp}/b.npy"], cpu
        )
        va, vb = np.load(f"{tmp}/a.npy"), np.load(f"{tmp}/b.npy")
    diffs = [
        abs(x - b["scores"][event].get(metric, float("nan")))
        for event, row in a["scores"].items()
        for metric, x in row.items()
    ]
    same_texts = a["texts"] == b["texts"]
    return {
        "events": len(a["scores"]),
        "scores_compared": len(diffs),
        "scores_identical": a["scores"] == b["scores"],
        "max_abs_score_diff": max(diffs) if diffs else 0.0,
        "embeddings_compared": int(va.shape[0]),
        "embeddings_identical": bool(same_texts and np.array_equal(va, vb)),
        "max_abs_embedding_diff": float(np.abs(va - vb).max()) if same_texts else None,
        "scores_sha256": hashlib.sha256(json.dumps(b["scores"]).encode()).hexdigest(),
    }


def _summary(per_variant: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Median RSS per step and variant (steps in the order of the first run)."""
    rows = []
    steps = [s["step"] for s in next(iter(per_variant.values()))[0]["steps"]]
    for i, step in enumerate(steps):
        row: dict[str, Any] = {"step": step}
        for variant, runs in per_variant.items():
            row[variant] = {
                "rss_mb": round(statistics.median(r["steps"][i]["rss_mb"] for r in runs), 1),
                "delta_mb": round(statistics.median(r["steps"][i]["delta_mb"] for r in runs), 1),
            }
        rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]], variants: list[str]) -> str:
    head = "| step | " + " | ".join(f"{v}: RSS (Δ)" for v in variants) + " |"
    lines = [head, "|---" * (len(variants) + 1) + "|"]
    for row in rows:
        cells = [f"{row[v]['rss_mb']:.1f} ({row[v]['delta_mb']:+.1f})" for v in variants]
        lines.append(f"| {row['step']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf.judge_memory")
    p.add_argument("--events", type=int, default=200)
    p.add_argument("--cpu", type=int, default=1, help="pin the children to this CPU; -1: no")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--scores", type=int, default=300, help="0: skip the score comparison")
    p.add_argument("--json", type=Path, default=OUT)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--runs", type=int, default=None, help=argparse.SUPPRESS)  # bench harness
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--child-scores", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.events)))
        return 0
    if a.child_scores:
        print(json.dumps(scores_child(a.child_scores, a.scores, a.out)))
        return 0
    if a.smoke:
        a.events, a.repeats, a.scores = 5, 1, 3
    cpu = None if a.cpu < 0 else a.cpu
    variants = [v for v in a.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        p.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    per_variant: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for _ in range(max(1, a.repeats)):
        for v in variants:
            run = _run_child(["--child", v, "--events", str(a.events)], cpu)
            per_variant[v].append(run)
            last = run["steps"][-2]["rss_mb"]
            print(f"  {v}: after {a.events} events {last:.1f} MiB, peak {run['peak_rss_mb']} MiB, "
                  f"steady CPU {run['steady_cpu_s']} s", flush=True)  # fmt: skip
    rows = _summary(per_variant)
    print(_table(rows, variants))
    result: dict[str, Any] = {
        "machine": machine(),
        "smoke": a.smoke,
        "events": a.events,
        "cpu": cpu,
        "repeats": a.repeats,
        "summary": rows,
        "runs": per_variant,
    }
    if a.scores > 0:
        result["scores"] = compare_scores(a.scores, cpu)
        print(json.dumps(result["scores"], indent=1))
    result["machine_after"] = machine()
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
