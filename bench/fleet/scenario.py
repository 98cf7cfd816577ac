"""One run of one mechanism on a fresh embedded broker.

cold start (1 worker) -> steady state (1 worker) -> scale-out 1 -> 8 -> steady state (8)
-> failover (SIGKILL the owner of WATCH_KEY) -> rejoin (a replacement 8th worker)
-> crash-restart (SIGKILL the owner and start a replacement at once, as a pod restart).
Every time is seconds from the driver's action (Popen / SIGKILL), wall clock.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.fleet import common as c
from bench.fleet.fleet import Fleet, Worker, latest_assignment, wait_for, wait_stable
from stream.demo import EmbeddedBroker

SETTLE_S = 4.0  # no further assignment change for this long = the group is stable


def steady(fleet: Fleet, window_s: float) -> dict[str, Any]:
    a = fleet.sample()
    time.sleep(window_s)
    b = fleet.sample()
    names = [n for n in b if n in a]
    cpu = sum(b[n][0] - a[n][0] for n in names)
    done = sum(b[n][2] - a[n][2] for n in names)
    return {
        "workers": len(names), "window_s": window_s, "processed": done,
        "obs_per_s": done / window_s,
        "cpu_s_per_1k": 1000 * cpu / done if done else None,
        "rss_mib_mean": statistics.mean(b[n][1] for n in names) if names else None,
        "rss_mib_max": max((b[n][1] for n in names), default=None),
    }  # fmt: skip


def owner_of(fleet: Fleet, part: int) -> Worker | None:
    return next(
        (
            w
            for w in fleet.live()
            if part in (latest_assignment(fleet.events(w), 0) or (0, set()))[1]
        ),
        None,
    )


def cold_start(fleet: Fleet, timeout_s: float) -> dict[str, Any]:
    w = fleet.spawn()

    def first() -> dict[str, Any] | None:
        ev = fleet.events(w)
        got = [e for e in ev if e["kind"] == "first"]
        return {"ev": ev, "first": got[0]} if got else None

    got = wait_for(first, timeout_s)
    if got is None:
        return {"ok": False}
    ev, t0 = got["ev"], w.started
    at = {
        k: next((e for e in ev if e["kind"] == k), None) for k in ("start", "assigned", "restored")
    }
    return {
        "ok": True,
        "imported_s": at["start"]["t"] - t0 if at["start"] else None,
        "assigned_s": at["assigned"]["t"] - t0 if at["assigned"] else None,
        "restored_s": at["restored"]["t"] - t0 if at["restored"] else None,
        "restored_keys": at["restored"].get("keys") if at["restored"] else None,
        "first_obs_s": got["first"]["t"] - t0,
        "first_had_state": got["first"]["had"],
    }  # fmt: skip


def scale_out(fleet: Fleet, to: int, timeout_s: float) -> dict[str, Any]:
    t0 = time.time()
    for _ in range(to - len(fleet.live())):
        fleet.spawn()
    got = wait_stable(fleet, t0, timeout_s, SETTLE_S)
    gens = [len([e for e in fleet.events(w) if e["kind"] == "assigned" and e["t"] >= t0])
            for w in fleet.live()]  # fmt: skip
    return {"ok": got is not None, **(got or {}), "generations_max": max(gens)}


def failover(fleet: Fleet, timeout_s: float) -> dict[str, Any]:
    part = c.partition_of(c.WATCH_KEY)
    owner = owner_of(fleet, part)
    if owner is None:
        return {"ok": False, "error": f"no live worker reports partition {part}"}
    old = [e for e in fleet.events(owner) if e["kind"] == "obs"]
    old_n = old[-1]["n"] if old else None
    t0 = fleet.kill(owner)

    def resumed() -> tuple[str, dict[str, Any]] | None:
        for w in fleet.live():
            obs = [e for e in fleet.events(w) if e["kind"] == "obs" and e["t"] > t0]
            if obs:
                return w.name, obs[0]
        return None

    got = wait_for(resumed, timeout_s)
    if got is None:
        return {"ok": False, "killed": owner.name}
    name, ev = got
    new = next(w for w in fleet.workers if w.name == name)
    rest = [e for e in fleet.events(new) if e["kind"] == "restored" and t0 < e["t"] <= ev["t"]]
    stable = wait_stable(fleet, t0, timeout_s, SETTLE_S)
    # observations of the key the old owner had processed and the new owner processes again
    replayed = None if not old else max(0, (old[-1]["seq"] - ev["seq"]) // len(c.KEYS) + 1)
    return {
        "replayed": replayed,  # state_error = n_after - expected: >0 applied twice, <0 lost
        "state_error": None if replayed is None else ev["n"] - (old_n + 1 - replayed),
        "ok": True, "killed": owner.name, "new_owner": name,
        "resumed_s": ev["t"] - t0, "restored_s": rest[-1]["t"] - t0 if rest else None,
        "had_state": ev["had"], "n_before_kill": old_n, "n_after": ev["n"],
        "seq_before_kill": old[-1]["seq"] if old else None, "seq_after": ev.get("seq"),
        "stable_s": stable["processing_s"] if stable else None,
    }  # fmt: skip


def crash_restart(fleet: Fleet, timeout_s: float) -> dict[str, Any]:
    """SIGKILL the owner of WATCH_KEY and start a replacement at once (a pod restart)."""
    part = c.partition_of(c.WATCH_KEY)
    owner = owner_of(fleet, part)
    if owner is None:
        return {"ok": False, "error": f"no live worker reports partition {part}"}
    t0 = fleet.kill(owner)
    fleet.spawn()

    def resumed() -> float | None:
        ts = [
            e["t"]
            for w in fleet.live()
            for e in fleet.events(w)
            if e["kind"] == "obs" and e["t"] > t0
        ]
        return min(ts) - t0 if ts else None

    got = wait_stable(fleet, t0, timeout_s, SETTLE_S)
    return {"ok": got is not None, "resumed_s": resumed(), **(got or {})}


def crashes(report_dir: Path) -> dict[str, Any]:
    """Workers that died by themselves (faust: 'We experienced a crash'; any: a Traceback)."""
    died = {}
    for err in sorted(report_dir.glob("w*.err")):
        text = err.read_text(errors="replace")
        if "We experienced a crash" in text or "Traceback" in text:
            reason = next((ln for ln in text.splitlines() if "Error" in ln and "reason=" in ln), "")
            died[err.stem] = reason[reason.find("reason=") :][:160]
    return {"count": len(died), "workers": died}


def run_once(mech: str, quick: bool, standby: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"mechanism": mech}
    t_run = time.monotonic()
    tmp = tempfile.mkdtemp(prefix=f"fleet-{mech}-")  # kept: worker logs for the failure notes
    out["report_dir"] = tmp
    with EmbeddedBroker() as broker:
        fleet = Fleet(mech, broker.bootstrap_servers, Path(tmp), standby=standby)
        try:
            fleet.setup()
            time.sleep(1.0)
            out["cold_start"] = cold_start(fleet, 90)
            time.sleep(2.0)
            out["steady_1"] = steady(fleet, 8 if quick else 10)
            out["scale_out"] = scale_out(fleet, 8, 120)
            out["steady_8"] = steady(fleet, 8)
            out["failover"] = failover(fleet, 90)
            t0 = time.time()
            fleet.spawn()
            got = wait_stable(fleet, t0, 90, SETTLE_S)
            out["rejoin"] = {"ok": got is not None, **(got or {})}
            out["crash_restart"] = crash_restart(fleet, 90)
        except Exception as exc:
            out["error"] = repr(exc)
        else:
            out["broker_rss_mib"] = c.proc_rss_mib(broker.pid) if broker.pid else None
        finally:
            fleet.stop()
            out["notable_log_lines"] = fleet.notable()
    out["crashes"] = crashes(Path(tmp))
    out["run_s"] = time.monotonic() - t_run
    return out
