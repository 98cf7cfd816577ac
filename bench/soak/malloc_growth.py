"""What the pipeline keeps in glibc's heap as events go by, in one process.

    python -m bench.soak.malloc_growth [--events 400000] [--every 20000] [--dedupe N]
        [--seed 11] [--rebuild-at N] [--json bench/results/malloc_growth.json]

Feeds generated traffic through ``Pipeline.process`` (judges off) and every `--every`
events trims the heap (``malloc_trim``) and records glibc's ``mallinfo2``: bytes in use
(``uordblks``, live ``malloc`` memory: RE2 programs and DFA caches, large Python buffers
and dict tables; Python's small objects live in obmalloc's own mmap arenas and are not
counted), the main arena's size and mmapped blocks; also RSS, the detector patterns
compiled so far and the dedupe window's length. ``--dedupe 0`` turns the window off, to
see what it holds. ``--rebuild-at N`` replaces the pipeline by a fresh one after N events
(the row after that is marked ``rebuilt``): the drop in bytes in use is what the old
pipeline's objects (RE2 programs and their DFA caches, metric children, drift streams)
had gathered beyond a fresh one's. A minute of the soak at 200 events/s is 12,000 events.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import time
from pathlib import Path
from typing import Any

from bench.perf.kafkabench import rss_mb

ROOT = Path(__file__).resolve().parents[2]
_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
           "fordblks", "keepcost")  # fmt: skip


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


def run(
    events: int, every: int, dedupe: int | None, seed: int, rebuild_at: int | None = None
) -> list[dict[str, Any]]:
    import os

    from exporters.prometheus import PromFamilies
    from stream.demo import generate
    from stream.runtime.pipeline import Pipeline
    from stream.runtime.settings import load_settings

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    settings = load_settings()

    def build() -> Pipeline:
        metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
        built = Pipeline(settings, metrics)
        if dedupe is not None:
            built.dedupe.size = dedupe
        return built

    pipeline = build()
    rows: list[dict[str, Any]] = []
    started = time.process_time()
    rebuilt = False
    for i, g in enumerate(generate(events, seed=seed), 1):
        pipeline.process(g.raw)
        if i == rebuild_at:
            del pipeline
            gc.collect()
            pipeline = build()
            rebuilt = True
        if i % every == 0:
            libc.malloc_trim(0)
            info = libc.mallinfo2()
            rows.append({
                "events": i,
                "malloc_in_use_mb": round(info.uordblks / 2**20, 2),
                "main_arena_mb": round(info.arena / 2**20, 2),
                "mmapped_mb": round(info.hblkhd / 2**20, 2),
                "rss_mb": round(rss_mb(os.getpid()), 1),
                "patterns_compiled": len(pipeline.scanner._compiled),
                "dedupe_ids": len(pipeline.dedupe._ids),
                "cpu_s": round(time.process_time() - started, 1),
                **({"rebuilt": True} if rebuilt else {}),
            })  # fmt: skip
            rebuilt = False
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--events", type=int, default=400_000)
    p.add_argument("--every", type=int, default=20_000)
    p.add_argument("--dedupe", type=int, default=None, help="window size (default: settings)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--rebuild-at", type=int, default=None, help="fresh pipeline after N events")
    p.add_argument("--json", type=Path, default=ROOT / "bench/results/malloc_growth.json")
    a = p.parse_args(argv)
    rows = run(a.events, a.every, a.dedupe, a.seed, a.rebuild_at)
    a.json.write_text(json.dumps({"args": vars(a) | {"json": str(a.json)}, "rows": rows}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
