"""The per-stream stage without Kafka: aggregate, merge once, release in order, same alarms
whatever the number of replicas, and records that are data (hostile ones refused)."""

from __future__ import annotations

import json
import pickle
import random
import zlib
from typing import Any

import msgspec
import pytest

from monitors.drift.monitor import DriftMonitor, DriftSettings
from monitors.fleet import (
    Command,
    FleetOwner,
    Observation,
    ObservationBuffer,
    RecordError,
    SeriesMerger,
    decode_control_or_observation,
    decode_state,
    encode,
    encode_state,
    spread,
)

GROUP = "rp-test"
MAX = 1_048_588


def settings(**kw: Any) -> DriftSettings:
    base: dict[str, Any] = {
        "rate_metrics": ["refusal", "training_cutoff_excuse"],
        "rate_detectors": [{"type": "proportion", "reference_size": 600, "window_size": 150,
                            "cooldown": 100}],
        "score_metrics": ["faithfulness"],
        "score_detectors": [{"type": "page_hinkley", "min_instances": 60}],
        "min_hold_s": 3600,
        "allowed_lateness_s": 2.0,
    }  # fmt: skip
    base.update(kw)
    return DriftSettings(**base)


def obs(producer: str = "p1", interval: int = 1_000_000, n: int = 10, k: int = 1, **kw: Any):  # type: ignore[no-untyped-def]
    return Observation(v=1, group=GROUP, producer=producer, series="rate|refusal|all",
                       interval=interval, interval_ms=1000, n=n, k=k, **kw)  # fmt: skip


def test_spread_places_k_ones_evenly() -> None:
    assert spread(10, 0) == [0.0] * 10
    assert sum(spread(10, 3)) == 3 and sum(spread(7, 7)) == 7
    assert spread(4, 2) == [1.0, 0.0, 1.0, 0.0] or spread(4, 2) == [0.0, 1.0, 0.0, 1.0]


def test_buffer_flushes_closed_intervals_only_and_records_decode() -> None:
    buf = ObservationBuffer(GROUP, 1.0, producer="rep-a")
    buf.add_rates([("refusal", 1.0), ("training_cutoff_excuse", 0.0)], "all", 100.2)
    buf.add_rates([("refusal", 0.0)], "all", 100.7)
    buf.add_rates([("refusal", 1.0)], "all", 101.1)
    buf.add_scores([("faithfulness", 0.9), ("faithfulness", float("nan"))], "all", 100.5)
    out = buf.flush(101.5)
    assert {(o.series, o.interval, o.n, o.k, tuple(o.scores)) for o in out} == {
        ("rate|refusal|all", 100_000, 2, 1, ()),
        ("rate|training_cutoff_excuse|all", 100_000, 1, 0, ()),
        ("score|faithfulness|all", 100_000, 0, 0, (0.9,)),  # NaN never leaves the replica
    }
    assert len(buf) == 1  # the open interval stays
    for o in out:
        assert decode_control_or_observation(encode(o), GROUP, MAX) == o
    assert [o.interval for o in buf.flush(0, everything=True)] == [101_000]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (pickle.dumps(Exception("x")), "not_json"),
        (b"\x80\x04\x95", "not_json"),
        (b"[]", "schema"),
        (json.dumps({"type": "obs", "v": 1}).encode(), "schema"),
        (encode(obs()).replace(b'"v":1', b'"v":2'), "version"),
        (encode(obs()).replace(GROUP.encode(), b"someone-else"), "other_group"),
        (encode(obs(n=1, k=5)), "inconsistent"),
        (encode(obs(scores=[0.5])), "inconsistent"),
        (encode(obs()).replace(b'"n":10', b'"n":10,"exec":"rm -rf /"'), "schema"),
        (encode(obs()).replace(b'"n":10', b'"n":-1'), "schema"),
        (encode(obs()).replace(b'"series":"rate|refusal|all"', b'"series":"x"'), "schema"),
        (b"{" + b" " * (MAX + 1) + b"}", "too_large"),
        (
            b'{"type":"cmd","v":1,"group":"rp-test","id":"abcdefgh","action":"shell","at":1}',
            "schema",
        ),
    ],
)
def test_hostile_observation_records_are_refused_with_a_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(RecordError) as info:
        decode_control_or_observation(raw, GROUP, MAX)
    assert info.value.reason == reason


def test_merger_merges_each_record_once_and_counts_late_ones() -> None:
    m = SeriesMerger()
    now = 1_010_000
    assert m.offer(obs("a", 1_000_000), now, 600_000, 60_000) == "merged"
    assert m.offer(obs("b", 1_000_000, n=5, k=0), now, 600_000, 60_000) == "merged"
    assert m.offer(obs("a", 1_000_000), now, 600_000, 60_000) == "duplicate"  # a replay
    assert m.offer(obs("a", 999_000), now, 600_000, 60_000) == "duplicate"  # older than a's mark
    assert m.offer(obs("c", 1_200_000), now, 600_000, 60_000) == "future"
    assert m.offer(obs("c", 100_000), now, 600_000, 60_000) == "too_late"
    released = m.release(now, 2000)
    assert [(end, len(s), sum(s)) for end, s in released] == [(1_001_000, 15, 1)]
    # a record for a released interval: merged into the next release, and said to be late
    assert m.offer(obs("d", 1_000_000, n=3, k=3), now, 600_000, 60_000) == "late"
    assert [(len(s), sum(s)) for _, s in m.release(now + 1, 2000)] == [(3, 3)]
    assert m.release(now + 2, 2000) == []


def test_merger_bounds_the_samples_of_one_interval() -> None:
    m = SeriesMerger(max_samples=1000)
    m.offer(obs("a", 1_000_000, n=10_000_000, k=2_000_000), 1_005_000, 600_000, 60_000)
    [(_, samples)] = m.release(1_005_000, 2000)
    assert len(samples) == 1000 and sum(samples) == 200  # the rate kept, the work bounded


def test_merger_state_is_data_and_round_trips() -> None:
    m = SeriesMerger()
    m.offer(obs("a", 1_000_000), 1_000_500, 600_000, 60_000)
    m.offer(obs("b", 1_001_000, n=4, k=4), 1_001_500, 600_000, 60_000)
    state = json.loads(json.dumps(m.to_state()))
    r = SeriesMerger.from_state(state)
    assert r.release(1_010_000, 2000) == m.release(1_010_000, 2000)
    assert r.offer(obs("a", 1_000_000), 1_010_000, 600_000, 60_000) == "duplicate"
    bad = json.loads(json.dumps(SeriesMerger().to_state()))
    bad["pending"] = [[5, 1, 3, 9, []]]  # end before start, k > n
    with pytest.raises(msgspec.ValidationError):
        SeriesMerger.from_state(bad)


# ---------------------------------------------------------------------------- the fleet


def _traffic(seed: int = 3) -> list[tuple[float, str, bool]]:
    """25 events/s: 60 s at a 2 % refusal rate, then 60 s at 20 % (time, key, refused)."""
    rng = random.Random(seed)
    out = []
    for i in range(25 * 120):
        t = 1_000_000.0 + i / 25
        rate = 0.02 if i < 25 * 60 else 0.20
        out.append((t, f"conv-{rng.randrange(400)}", rng.random() < rate))
    return out


def _run_fleet(replicas: int, partitions: int = 16) -> list[tuple[str, str, float]]:
    """Events to partitions by key, partitions to replicas round-robin; one owner for the
    series; a clock that ticks every 0.25 s. Returns (state, metric, time) transitions."""
    cfg = settings()
    buffers = [
        ObservationBuffer(GROUP, cfg.interval_s, producer=f"rep-{r}") for r in range(replicas)
    ]
    monitor = DriftMonitor(cfg)
    owner = FleetOwner(cfg, monitor, GROUP)
    for p in range(partitions):
        owner.assign(p)
    offsets = [0] * partitions
    out: list[tuple[str, str, float]] = []
    events = _traffic()
    tick = events[0][0]
    for t, key, refused in [*events, (events[-1][0] + 10, "", False)]:
        while tick <= t:
            for buf in buffers:
                for rec in buf.flush(tick):
                    p = zlib.crc32(rec.series.encode()) % partitions
                    assert owner.offer(p, offsets[p], rec, tick) == "merged"
                    offsets[p] += 1
            for _owned, alarms in owner.release(tick):
                out += [(a.state, a.metric, tick) for a in alarms]
            tick += 0.25
        if key:
            replica = (zlib.crc32(key.encode()) % partitions) % replicas
            samples = [("refusal", 1.0 if refused else 0.0), ("training_cutoff_excuse", 0.0)]
            buffers[replica].add_rates(samples, "all", t)
    return out


def test_one_four_and_eight_replicas_raise_the_same_alarms_at_the_same_time() -> None:
    one = _run_fleet(1)
    assert [(s, m) for s, m, _ in one] == [("raised", "refusal")]
    assert 1_000_060 < one[0][2] < 1_000_090  # raised after the switch, not before it
    assert _run_fleet(4) == one
    assert _run_fleet(8) == one


def test_series_state_record_round_trips_and_poisoned_ones_are_refused() -> None:
    cfg = settings()
    monitor = DriftMonitor(cfg)
    owner = FleetOwner(cfg, monitor, GROUP)
    owner.assign(3)
    buf = ObservationBuffer(GROUP, 1.0, producer="rep")
    for i in range(700):
        buf.add_rates([("refusal", 1.0 if i % 50 == 0 else 0.0)], "all", 1000.0 + i / 25)
    for off, rec in enumerate(buf.flush(2000.0)):
        owner.offer(3, off, rec, 1000.0 + off)
    owner.release(2000.0)
    [owned] = owner.series()
    raw = encode_state(owner.record(owned))
    rec = decode_state(raw, GROUP, owned.sid, MAX)
    other = FleetOwner(cfg, DriftMonitor(cfg), GROUP)
    restored = other.restore(3, rec)
    assert restored.offset == owned.offset
    assert encode_state(other.record(restored)) == raw
    for bad, reason in [
        (pickle.dumps({"v": 1}), "not_json"),
        (raw.replace(b'"v":1', b'"v":7', 1), "version"),
        (raw.replace(b'"partition":3', b'"partition":3,"__reduce__":"os.system"'), "schema"),
        (raw, "inconsistent"),  # right bytes, read as another series' key
    ]:
        with pytest.raises(RecordError) as info:
            decode_state(bad, GROUP, owned.sid if reason != "inconsistent" else "rate|x|all", MAX)
        assert info.value.reason == reason


def test_command_rebaselines_every_series_of_the_partition_once() -> None:
    cfg = settings()
    owner = FleetOwner(cfg, DriftMonitor(cfg), GROUP)
    owner.assign(0)
    buf = ObservationBuffer(GROUP, 1.0, producer="rep")
    for i in range(2000):
        refused = (i % 50 == 0) if i < 1000 else (i % 4 == 0)
        buf.add_rates([("refusal", 1.0 if refused else 0.0)], "all", 1000.0 + i / 25)
    off = 0
    for rec in buf.flush(3000.0):
        owner.offer(0, off, rec, 1100.0)
        off += 1
    [(owned, [raised])] = owner.release(3000.0)
    assert raised.state == "raised" and [a["state"] for a in owned.outbox] == ["raised"]
    owned.outbox = []  # published (the runtime empties the outbox after delivery)
    assert owner.active(lambda *a: None) == 1
    cmd = Command(v=1, group=GROUP, id="c0ffee00c0ffee00", action="rebaseline", at=1)
    assert owner.offer(0, off, cmd, 3001.0) == "applied"
    assert owner.active(lambda *a: None) == 0
    assert owner.commanded() == [owned]
    assert [a["state"] for a in owned.outbox] == ["cleared"]
    assert owner.offer(0, off + 1, cmd, 3002.0) == "duplicate"  # the same command again


# ---------------------------------------------------------------------------- hostile owners' input


def test_deeply_nested_state_is_refused_not_a_recursion_crash() -> None:
    raw = b'{"v":1,"group":"rp-test","series":"rate|refusal|all","partition":0,"offset":0,' \
        b'"merger":' + b"[" * 100_000 + b"]" * 100_000 + b',"streams":{}}'  # fmt: skip
    with pytest.raises(RecordError) as info:
        decode_state(raw, GROUP, "rate|refusal|all", 10 * MAX)
    assert info.value.reason == "schema"


def test_owner_refuses_series_and_intervals_this_configuration_would_not_make() -> None:
    cfg = settings()
    owner = FleetOwner(cfg, DriftMonitor(cfg), GROUP)
    owner.assign(0)
    now = 1_000.5
    other_service = obs().__class__(**{**msgspec.structs.asdict(obs()), "series": "rate|refusal|x"})
    assert owner.offer(0, 0, other_service, now) == "unconfigured"  # key_by_service is off
    coarse = obs().__class__(**{**msgspec.structs.asdict(obs()), "interval_ms": 3_600_000})
    assert owner.offer(0, 1, coarse, now) == "rejected"  # not the configured interval
    assert owner.offer(0, 2, obs(interval=999_500), now) == "rejected"  # not aligned
    assert owner.series() == []


def test_a_backlog_is_fed_over_several_ticks_within_the_budget() -> None:
    cfg = settings()
    owner = FleetOwner(cfg, DriftMonitor(cfg), GROUP)
    owner.assign(0)
    start = 1_000_000
    for i in range(60):  # a minute of intervals, each at the per-interval cap
        rec = obs(f"p{i}", start + 1000 * i, n=10_000_000, k=1_000_000)
        assert owner.offer(0, i, rec, start / 1000 + 61) == "merged"
    fed = []
    monitor = owner.monitor
    for _ in range(20):
        before = sum(s.samples for s in monitor.streams.values())
        owner.release(start / 1000 + 70)
        fed.append(sum(s.samples for s in monitor.streams.values()) - before)
    assert max(fed) <= FleetOwner.TICK_BUDGET + cfg.max_samples_per_interval
    assert sum(fed) == 60 * cfg.max_samples_per_interval  # everything fed, over many ticks


def test_restored_series_of_a_metric_no_longer_configured_is_dropped() -> None:
    cfg = settings()
    owner = FleetOwner(cfg, DriftMonitor(cfg), GROUP)
    owner.assign(0)
    buf = ObservationBuffer(GROUP, 1.0, producer="rep")
    buf.add_rates([("training_cutoff_excuse", 1.0)], "all", 1000.0)
    [rec] = buf.flush(2000.0)
    owner.offer(0, 0, rec, 1000.5)
    [owned] = owner.series()
    state = decode_state(encode_state(owner.record(owned)), GROUP, owned.sid, MAX)
    narrower = settings(rate_metrics=["refusal"])
    other = FleetOwner(narrower, DriftMonitor(narrower), GROUP)
    assert other.restore(0, state) is None and other.series() == []
