"""One broker, one observation producer and N worker processes of one mechanism.

The driver only reads the workers' JSON-lines reports (bench.fleet.common.Reporter) and
/proc; `converged()` is the "every partition has exactly one owner" check.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bench.fleet import common as c

T = TypeVar("T")
NOTABLE = re.compile(r"error|timed out|timeout|traceback|exception|crash|rebalanc|recover", re.I)


@dataclass
class Worker:
    name: str
    proc: subprocess.Popen[bytes]
    started: float

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Fleet:
    mech: str  # "f" or "k"
    bootstrap: str
    report_dir: Path
    standby: int = 1
    workers: list[Worker] = field(default_factory=list)
    producer: subprocess.Popen[bytes] | None = None

    def setup(self) -> None:
        state = c.F_CHANGELOG if self.mech == "f" else c.K_STATE_TOPIC
        asyncio.run(c.create_topics(self.bootstrap, [c.OBS_TOPIC, state], {state}))
        asyncio.run(c.wait_metadata(self.bootstrap, [c.OBS_TOPIC, state]))
        asyncio.run(c.seed_state(self.bootstrap, state, json_keys=self.mech == "f"))
        self.producer = subprocess.Popen(
            [sys.executable, "-m", "bench.fleet._producer", self.bootstrap, "100"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def spawn(self) -> Worker:
        name = f"w{len(self.workers)}"
        cmd = [sys.executable, "-m", f"bench.fleet._worker_{self.mech}", self.bootstrap,
               str(self.report_dir), name]  # fmt: skip
        if self.mech == "f":
            cmd.append(str(self.standby))
        err = (self.report_dir / f"{name}.err").open("wb")
        w = Worker(name, subprocess.Popen(cmd, stdout=err, stderr=err), time.time())
        self.workers.append(w)
        return w

    def kill(self, w: Worker) -> float:
        t = time.time()
        os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait()
        return t

    def stop(self) -> None:
        for p in [w.proc for w in self.workers] + ([self.producer] if self.producer else []):
            if p.poll() is None:
                p.kill()
                p.wait()

    def live(self) -> list[Worker]:
        return [w for w in self.workers if w.alive]

    def events(self, w: Worker) -> list[dict[str, Any]]:
        return c.read_events(self.report_dir / f"{w.name}.jsonl")

    def sample(self) -> dict[str, tuple[float, float, int]]:
        """name -> (cpu s, rss MiB, processed so far) for the live workers."""
        out: dict[str, tuple[float, float, int]] = {}
        for w in self.live():
            counts = [e["processed"] for e in self.events(w) if e["kind"] == "count"]
            out[w.name] = (c.proc_cpu_s(w.proc.pid), c.proc_rss_mib(w.proc.pid),
                           counts[-1] if counts else 0)  # fmt: skip
        return out

    def notable(self, limit: int = 12) -> list[str]:
        """Distinct log lines from the workers' stderr that look like errors or rebalances."""
        seen: dict[str, None] = {}
        for w in self.workers:
            path = self.report_dir / f"{w.name}.err"
            text = path.read_text(errors="replace") if path.exists() else ""
            for line in text.splitlines():
                if NOTABLE.search(line):
                    key = re.sub(r"\d+", "N", re.sub(r"\x1b\[[0-9;]*m", "", line))[:220]
                    seen.setdefault(key.strip(), None)
        return list(seen)[:limit]


def latest_assignment(events: list[dict[str, Any]], after: float) -> tuple[float, set[int]] | None:
    found = [e for e in events if e["kind"] == "assigned" and e["t"] >= after]
    return (found[-1]["t"], set(found[-1]["parts"])) if found else None


def converged(fleet: Fleet, after: float) -> dict[str, float] | None:
    """Times (relative to `after`) once every partition has one owner among the live workers,
    every live worker has an assignment newer than `after`, and every key has been processed
    by its owner since that assignment; None until then."""
    owners: dict[int, str] = {}
    assigned_t: list[float] = []
    restored_t: list[float] = []
    first_t: list[float] = []
    for w in fleet.live():
        ev = fleet.events(w)
        la = latest_assignment(ev, after)
        if la is None:
            return None
        t_assigned, parts = la
        for p in parts:
            if p in owners:
                return None
            owners[p] = w.name
        assigned_t.append(t_assigned)
        rest = [e["t"] for e in ev if e["kind"] == "restored" and e["t"] >= t_assigned]
        restored_t.extend(rest[:1])  # faust may skip the callback when nothing is new
        firsts = {e["key"]: e["t"] for e in ev if e["kind"] == "first" and e["t"] >= t_assigned}
        for key in c.KEYS:
            if c.partition_of(key) in parts:
                if key not in firsts:
                    return None
                first_t.append(firsts[key])
    if len(owners) != c.PARTITIONS:
        return None
    return {
        "assigned_s": max(assigned_t) - after,
        "restored_s": max(restored_t, default=max(assigned_t)) - after,
        "processing_s": max(first_t) - after,
    }


def wait_for(check: Callable[[], T | None], timeout_s: float, poll_s: float = 0.2) -> T | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got is not None:
            return got
        time.sleep(poll_s)
    return None


def wait_stable(
    fleet: Fleet, after: float, timeout_s: float, settle_s: float
) -> dict[str, float] | None:
    """converged(), and still the same assignment `settle_s` later (no further rebalance)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = wait_for(lambda: converged(fleet, after), deadline - time.monotonic())
        if got is None:
            return None
        time.sleep(settle_s)
        again = converged(fleet, after)
        if again is not None and again["assigned_s"] == got["assigned_s"]:
            return again
    return None
