"""What the pipeline keeps over hours, in minutes: `Pipeline.process` on a simulated clock.

    python -m bench.soak.accelerated [--minutes 120] [--rate 200] [--snap-every 10]
        [--frames 4] [--json bench/results/soak-accelerated.json]

The real soak (``python -m bench.soak``) needs the wall-clock hours, and its RSS mixes
what ragpulse keeps with allocator fragmentation, the Kafka client's buffers and the
backlog a slow broker causes. This run isolates the first: one process builds the
sidecar's pipeline (the settings a judges-off ``ragpulse run`` uses) with ``time.time``
and ``time.monotonic`` replaced by a simulated clock that advances 1/`--rate` s per
event, so every time-based window, rate test and cache ages as it would in
`--minutes` of traffic. It feeds `--rate` x 60 x `--minutes` events: a pool of 20,000
bundled events (the soak's: seed 3, 0.2 % malformed), repeated with unique event ids,
each scorecard serialised as the engine does, and the C heap trimmed every simulated
minute as the engine's timer does.
tracemalloc (`--frames` frames per allocation) is snapshotted every `--snap-every`
simulated minutes (only the first and the newest are kept, so RSS is not inflated by
them); the result is the traced memory, RSS and glibc malloc's in-use and free bytes
(mallinfo2) over simulated time and the top
allocation sites that grew from the first snapshot (minute `--snap-every`, after the
warm-up) to the last. ``--frames 0`` runs without tracemalloc: RSS alone, at full speed.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class SimClock:
    """time.time / time.monotonic stand-ins: `now` advances only when told to."""

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]  # fmt: skip


def _malloc_mb() -> dict[str, float]:
    """glibc's malloc: bytes in use (heap + mapped blocks) and free inside the heap (MiB);
    empty elsewhere than glibc."""
    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _MallInfo2
    m = fn()
    return {
        "malloc_in_use_mb": round((m.uordblks + m.hblkhd) / 2**20, 2),
        "malloc_free_mb": round(m.fordblks / 2**20, 2),
    }


def run(minutes: float, rate: float, snap_every: float, frames: int) -> dict[str, Any]:
    clock = SimClock()
    time.time = clock  # before the pipeline's modules bind them as defaults
    time.monotonic = clock
    import tracemalloc

    from exporters import PromFamilies
    from stream.demo import generate
    from stream.platform.heap import trim_heap
    from stream.runtime.factory import build_sidecar
    from stream.runtime.settings import load_settings

    settings = load_settings(kafka={"bootstrap_servers": "127.0.0.1:9"})
    metrics = PromFamilies.with_label_caps(settings.labels.max_values, settings.labels.allow)
    pipeline = build_sidecar(settings, metrics).pipeline
    total = int(minutes * 60 * rate)
    pool = min(20_000, total)
    items = list(generate(pool, seed=3, malformed_rate=0.002))  # the soak's traffic
    raws = [g.raw for g in items]
    ids = [g.event_id.encode() if g.event_id else b"" for g in items]
    if frames > 0:
        tracemalloc.start(frames)
    step = 1.0 / rate
    snaps: list[tracemalloc.Snapshot] = []
    rows: list[dict[str, Any]] = []
    next_trim, next_snap = 60.0, snap_every * 60.0
    started, cpu0 = clock.now, time.process_time()
    for i in range(total):
        raw, eid = raws[i % pool], ids[i % pool]
        if i >= pool and eid:
            raw = raw.replace(eid, eid + b".c%d" % (i // pool), 1)
        result = pipeline.process(raw)
        if result.outcome == "scored":
            result.scorecard_bytes()
        clock.now = started + (i + 1) * step  # no float drift over millions of steps
        t = clock.now - started
        if t >= next_trim:
            next_trim += 60.0
            trim_heap()
        if t >= next_snap or i == total - 1:
            next_snap += snap_every * 60.0
            del snaps[1:]  # the first and the newest only: a snapshot holds megabytes
            gc.collect()
            traced = tracemalloc.get_traced_memory()[0] if frames > 0 else 0
            rows.append(
                {
                    "sim_minute": round(t / 60.0, 2),
                    "events": i + 1,
                    "traced_mb": round(traced / 2**20, 3),
                    "rss_mb": round(_rss_mb(), 2),
                    **_malloc_mb(),
                    "cpu_s": round(time.process_time() - cpu0, 1),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            if frames > 0:
                snaps.append(tracemalloc.take_snapshot())
    growth = []
    if len(snaps) == 2:
        for stat in snaps[-1].compare_to(snaps[0], "traceback")[:15]:
            growth.append(
                {
                    "site": [str(f) for f in stat.traceback][-frames:],
                    "size_diff_kib": round(stat.size_diff / 1024, 1),
                    "size_kib": round(stat.size / 1024, 1),
                    "count_diff": stat.count_diff,
                }
            )
    return {"rows": rows, "growth_first_to_last": growth}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak.accelerated", description=__doc__)
    p.add_argument("--minutes", type=float, default=120.0, help="simulated minutes")
    p.add_argument("--rate", type=float, default=200.0, help="simulated events per second")
    p.add_argument("--snap-every", type=float, default=10.0, help="simulated minutes")
    p.add_argument("--frames", type=int, default=4, help="frames per allocation (0: no tracing)")
    p.add_argument("--json", default=str(ROOT / "bench/results/soak-accelerated.json"))
    a = p.parse_args(argv)
    out = run(a.minutes, a.rate, a.snap_every, a.frames)
    rows = out["rows"]
    half = [r for r in rows if r["sim_minute"] >= a.minutes / 2]
    if len(half) >= 2:
        span = half[-1]["sim_minute"] - half[0]["sim_minute"]
        out["traced_slope_mb_per_min_second_half"] = round(
            (half[-1]["traced_mb"] - half[0]["traced_mb"]) / span, 5
        )
    out.update(minutes=a.minutes, rate=a.rate, frames=a.frames)
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "growth_first_to_last"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
