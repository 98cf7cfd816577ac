"""`ragpulse run` under tracemalloc, for the soak's `--trace` diagnostics.

    python -m bench.soak.traced DIR [FRAMES]

Starts tracemalloc (FRAMES frames per allocation, default 1), then runs the sidecar as
`ragpulse run` would. On SIGUSR1 it writes a snapshot to DIR/snap-<n>.pickle; the soak
sends one every `--trace-every` seconds and diffs them (bench/soak/report.py). Kept out of
the product: a sidecar never traces its own allocations.
"""

from __future__ import annotations

import gc
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType


def main() -> int:
    out = Path(sys.argv[1])
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    out.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(frames)
    count = 0

    def dump(_sig: int, _frame: FrameType | None) -> None:
        nonlocal count
        gc.collect()
        tracemalloc.take_snapshot().dump(str(out / f"snap-{count:03d}.pickle"))
        count += 1

    signal.signal(signal.SIGUSR1, dump)
    from stream.cli import main as cli_main

    return cli_main(["run"])


if __name__ == "__main__":
    sys.exit(main())
