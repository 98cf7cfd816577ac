"""Alarm delays of a consumer group, 1 replica against N: the issue-25 trial, re-runnable.

    python -m bench.perf.fleet_delays [--replicas 1 8] [--rate 25] [--healthy 150]
        [--degraded 170] [--out bench/results/fleet_delays.json]

The demo's traffic (seed 11) at `--rate` events/s into a 16-partition topic on the
embedded broker: `--healthy` seconds of the baseline phase, then the degraded prompt
version for up to `--degraded` seconds (stopping early once the four alarms are up).
Each replica count runs real `ragpulse run` processes in one group with the default
drift settings (`proportion`, reference 2,000, window 300). Reported per replica count:
seconds from the switch to each metric's first raise on the alarms topic (its Kafka
record timestamp), raises in the healthy phase, raises per metric.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.perf.mdsection import machine
from stream.demo import EmbeddedBroker
from tests.support.fleet import FLEET_ENV, RATE_METRICS, Fleet
from tests.support.sidecar import Topics

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--replicas", type=int, nargs="+", default=[1, 8])
    p.add_argument("--rate", type=float, default=25.0)
    p.add_argument("--healthy", type=float, default=150.0)
    p.add_argument("--degraded", type=float, default=170.0)
    p.add_argument("--out", type=Path, default=ROOT / "bench/results/fleet_delays.json")
    args = p.parse_args(argv)
    defaults = {"RAGPULSE_DRIFT__RATE_DETECTORS": json.dumps([{"type": "proportion"}])}
    runs: dict[str, Any] = {}
    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory() as tmp:
        for n in args.replicas:
            fleet = Fleet(broker.bootstrap_servers, Topics.unique(f"delay{n}"), n, Path(tmp),
                          defaults)  # fmt: skip
            fleet.start()
            try:
                fleet.produce(args.healthy, args.degraded, rate=args.rate,
                              until=lambda f=fleet: set(RATE_METRICS) <= set(f.raised()))  # type: ignore[misc]  # fmt: skip
                delays = fleet.first_raise_delays()
                runs[str(n)] = {
                    "first_raise_s": delays,
                    "healthy_phase_raises": sum(1 for d in delays.values() if d <= 0),
                    "raises_per_metric": {m: len(v) for m, v in fleet.raised().items()},
                }
                print(f"{n} replica(s): {runs[str(n)]}", flush=True)
            finally:
                fleet.close()
    report = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine(),
              "args": {k: str(v) for k, v in vars(args).items()},
              "settings": {**FLEET_ENV, **defaults}, "runs": runs}  # fmt: skip
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
