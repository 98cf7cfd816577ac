"""Detector state is checked plain data: it round-trips through JSON mid-stream with the
same decisions after it, and a state that does not fit is refused with nothing changed."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from monitors.drift import (
    BaseDriftDetector,
    StateError,
    available_drift_detectors,
    create_drift_detector,
    detector_from_state,
)
from monitors.drift.adwin import AdwinDetector
from monitors.drift.base import MAX_SIZE, STATE_ERROR_REASONS, STATE_VERSION
from tests.monitors.test_drift_detectors import CHANGE, bernoulli, scores, shifted

KINDS = ["adwin", "page_hinkley", "ks_window", "mannwhitney_window", "proportion"]


def stream_for(kind: str, seed: int = 21) -> list[float]:
    """Two changes, so that every snapshot point still has a detection after it."""
    if kind == "proportion":
        values = bernoulli([(0.02, CHANGE), (0.06, 4000), (0.15, 3000)], seed)
    else:
        second = scores(3000, 0.62, seed + 1)
        values = np.concatenate([shifted(0.72, seed, n_after=2500), second])
    return values.tolist()


def trace(detector: Any, values: list[float]) -> list[tuple[Any, ...]]:
    out = []
    for x in values:
        detector.update(x)
        out.append(
            (detector.drift_detected, detector.n, detector.reference_mean, detector.recent_mean)
        )
    return out


def first_detection(kind: str, values: list[float]) -> int:
    detector = create_drift_detector({"type": kind})
    for i, x in enumerate(values):
        detector.update(x)
        if detector.drift_detected:
            return i
    raise AssertionError("no detection in the test stream")


def as_data(detector: Any) -> dict[str, Any]:
    """What the changelog carries: the state through strict JSON."""
    state = json.loads(json.dumps(detector.to_state(), allow_nan=False))
    assert isinstance(state, dict)
    return state


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["warming_up", "in_control", "at_a_detection", "after_one"])
def test_state_round_trip_mid_stream_makes_identical_decisions(kind: str, where: str) -> None:
    values = stream_for(kind)
    hit = first_detection(kind, values)
    cut = {
        "warming_up": 150,
        "in_control": 2500,
        "at_a_detection": hit + 1,
        "after_one": hit + 700,
    }[where]
    original = create_drift_detector({"type": kind})
    assert isinstance(original, BaseDriftDetector)
    trace(original, values[:cut])
    if where == "at_a_detection":
        assert original.drift_detected  # snapshot taken right on the detecting update
    state = as_data(original)
    restored = create_drift_detector({"type": kind})
    restored.load_state(state)
    assert restored.to_state() == state  # data in, the same data out
    assert restored.spec == original.spec and restored.n == original.n == cut  # type: ignore[attr-defined]
    assert restored.drift_detected == original.drift_detected
    expected = trace(original, values[cut:])
    assert trace(restored, values[cut:]) == expected
    assert any(step[0] for step in expected), "no detection after the snapshot: weak test"


@pytest.mark.parametrize("kind", KINDS)
def test_reset_forgets_everything(kind: str) -> None:
    values = stream_for(kind)
    used = create_drift_detector({"type": kind})
    assert isinstance(used, BaseDriftDetector)
    trace(used, values[: CHANGE + 1500])
    used.reset()
    assert used.n == 0 and not used.drift_detected
    assert used.reference_mean is None and used.recent_mean is None
    fresh = create_drift_detector({"type": kind})
    assert isinstance(fresh, BaseDriftDetector)
    assert used.to_state() == fresh.to_state()
    assert trace(used, values) == trace(fresh, values)


# ---------------------------------------------------------------- every registered detector
def random_stream(detector: Any, n: int, seed: int) -> list[float]:
    """Full-precision values (the largest encoding), with a level shift at 60 %."""
    rng = np.random.default_rng(seed)
    shift = int(n * 0.6)
    if getattr(detector, "binary", False):
        return (rng.random(n) < np.where(np.arange(n) < shift, 0.03, 0.2)).astype(float).tolist()
    return np.clip(rng.normal(np.where(np.arange(n) < shift, 0.8, 0.6), 0.1), 0, 1).tolist()


@pytest.mark.parametrize("kind", available_drift_detectors())
def test_every_detector_round_trips_as_data(kind: str) -> None:
    original = create_drift_detector({"type": kind})
    values = random_stream(original, 9000, seed=5)
    trace(original, values[:6000])
    state = as_data(original)
    assert state["v"] == STATE_VERSION and state["spec"] == original.spec  # type: ignore[attr-defined]
    restored = detector_from_state(state)
    assert restored.to_state() == state
    assert trace(restored, values[6000:]) == trace(original, values[6000:])


@pytest.mark.parametrize("kind", available_drift_detectors())
def test_state_of_default_parameters_stays_under_200_kb_of_json(kind: str) -> None:
    detector = create_drift_detector({"type": kind})
    largest = 0
    for i, x in enumerate(random_stream(detector, 30_000, seed=6)):
        detector.update(x)
        if i % 250 == 0 or detector.drift_detected:
            largest = max(largest, len(json.dumps(detector.to_state(), allow_nan=False)))
    assert 0 < largest < 200_000


def test_adwin_replay_is_exact_below_the_log_cap_counted_from_its_last_restart() -> None:
    """River starts ADWIN over after each detection; the log does too, so a restore is
    exact whenever fewer than `state_samples` samples came since then (here n >> 600)."""
    values = stream_for("adwin")
    spec = {"type": "adwin", "state_samples": 600}
    original = create_drift_detector(spec)
    assert isinstance(original, AdwinDetector)
    hit = first_detection("adwin", values)
    trace(original, values[: hit + 400])
    assert original.n > 600 and original.to_state()["internal"]["seen"] == 399
    restored = create_drift_detector(spec)
    restored.load_state(as_data(original))
    assert isinstance(restored, AdwinDetector) and restored.width == original.width
    expected = trace(original, values[hit + 400 :])
    assert trace(restored, values[hit + 400 :]) == expected and any(s[0] for s in expected)


def test_adwin_beyond_the_log_cap_restores_an_adwin_of_the_last_samples() -> None:
    values = scores(5000, 0.8, seed=3).tolist()
    original = create_drift_detector({"type": "adwin", "state_samples": 1000})
    trace(original, values)
    state = as_data(original)
    assert state["internal"]["seen"] == 5000  # no detection: one window since the start
    restored = detector_from_state(state)
    assert isinstance(restored, AdwinDetector) and restored.n == 5000
    assert restored.width == 1000 and restored.recent_mean == original.recent_mean  # type: ignore[attr-defined]
    assert restored.reference_mean == pytest.approx(np.mean(values[-1000:]))
    assert restored.to_state() == state  # and it saves the same log again


def test_page_hinkley_restores_river_internals_exactly() -> None:
    """Fails when river renames or adds PageHinkley state: then `_parse_internal` and
    `_river_state` must follow."""
    from river import stats
    from river.drift import PageHinkley

    from monitors.drift.page_hinkley import RIVER_ATTRIBUTES, PageHinkleyDetector

    params = {"min_instances", "delta", "threshold", "alpha", "mode"}
    assert set(vars(PageHinkley())) == params | RIVER_ATTRIBUTES
    assert set(vars(stats.Mean())) == {"n", "_mean"}
    original = create_drift_detector({"type": "page_hinkley"})
    assert isinstance(original, PageHinkleyDetector)
    trace(original, stream_for("page_hinkley")[:2000])
    restored = detector_from_state(as_data(original))
    assert isinstance(restored, PageHinkleyDetector)
    ours, theirs = vars(original._ph), vars(restored._ph)
    assert ours.keys() == theirs.keys()
    for name, value in ours.items():
        if name == "_x_mean":
            assert vars(theirs[name]) == vars(value)
        elif name == "_test_drift":
            assert theirs[name].__func__ is value.__func__
        else:
            assert theirs[name] == value and type(theirs[name]) is type(value), name


# ---------------------------------------------------------------- hostile states
def _pack(values: list[float]) -> str:
    import base64

    return base64.b64encode(np.asarray(values, dtype="<f8").tobytes()).decode()


BIG_LIST = [0.5] * 10**6
NAN, INF = float("nan"), float("inf")

#: (path, new value or DELETE, reason): corruptions every detector must refuse
DELETE = object()
COMMON: list[tuple[tuple[str, ...], Any, str]] = [
    (("v",), 2, "version"),
    (("v",), "1", "version"),
    (("v",), True, "version"),
    (("v",), DELETE, "missing_field"),
    (("spec",), {"type": "adwin", "delta": 0.5}, "spec_mismatch"),
    (("spec",), "adwin", "bad_type"),
    (("spec",), DELETE, "missing_field"),
    (("n",), "100", "bad_type"),
    (("n",), 100.0, "bad_type"),
    (("n",), True, "bad_type"),
    (("n",), -1, "out_of_range"),
    (("drift",), "no", "bad_type"),
    (("drift",), 0, "bad_type"),
    (("internal",), [], "bad_type"),
    (("internal",), "{}", "bad_type"),
    (("internal",), DELETE, "missing_field"),
    (("extra",), {}, "bad_type"),
]
WINDOW: list[tuple[tuple[str, ...], Any, str]] = [
    (("internal", "ring"), BIG_LIST, "bad_type"),
    (("internal", "ring"), "A" * 4 * 10**6, "bad_length"),
    (("internal", "ring"), _pack([0.5] * 299), "bad_length"),
    (("internal", "ring"), _pack([0.5] * 299 + [NAN]), "not_finite"),
    (("internal", "ring"), _pack([INF] * 300), "not_finite"),
    (("internal", "ring"), "!!!!not base64", "bad_type"),
    (("internal", "pos"), 300, "out_of_range"),
    (("internal", "pos"), -1, "out_of_range"),
    (("internal", "pos"), "3", "bad_type"),
    (("internal", "filled"), 301, "out_of_range"),
    (("internal", "reference"), _pack([0.5] * 999), "bad_length"),
    (("internal", "reference"), {"values": []}, "bad_type"),
    (("internal", "reference_mean"), NAN, "not_finite"),
    (("internal", "reference_mean"), "0.8", "bad_type"),
    (("internal", "reference_mean"), 0.123, "out_of_range"),
    (("internal", "building"), _pack([0.5] * 1000), "bad_length"),
    (("internal", "cooling"), -1, "out_of_range"),
    (("internal", "cooling"), 301, "out_of_range"),
    (("internal", "since_reference"), -2, "out_of_range"),
    (("internal", "since_reference"), 10**9, "out_of_range"),
    (("internal", "last_pvalue"), 1.5, "out_of_range"),
    (("internal", "last_pvalue"), INF, "not_finite"),
    (("internal", "since_reference"), DELETE, "missing_field"),
    (("internal", "surprise"), 1, "bad_type"),
]
PROPORTION: list[tuple[tuple[str, ...], Any, str]] = [
    (("internal", "ring"), "0" * 10**6, "bad_length"),
    (("internal", "ring"), "0" * 299, "bad_length"),
    (("internal", "ring"), "0" * 299 + "2", "out_of_range"),
    (("internal", "ring"), "0" * 299 + "x", "out_of_range"),
    (("internal", "ring"), "0" * 299 + "\u00e9", "out_of_range"),
    (("internal", "ring"), [0] * 300, "bad_type"),
    (("internal", "reference"), "0" * 1999, "bad_length"),
    (("internal", "reference"), "1" * 1999 + "-", "out_of_range"),
    (("internal", "building"), "0" * 2000, "bad_length"),
    (("internal", "pos"), 300, "out_of_range"),
    (("internal", "reference_mean"), 0.5, "out_of_range"),
    (("internal", "cooling"), 301, "out_of_range"),
    (("internal", "pos"), DELETE, "missing_field"),
]
PAGE_HINKLEY: list[tuple[tuple[str, ...], Any, str]] = [
    (("internal", "recent"), BIG_LIST, "bad_type"),
    (("internal", "recent"), _pack([0.5] * 101), "bad_length"),
    (("internal", "recent"), _pack([0.5] * 99 + [NAN]), "not_finite"),
    (("internal", "warmup"), _pack([0.5] * 300), "bad_length"),
    (("internal", "warmup"), _pack([0.5] * 10), "out_of_range"),  # warm-up after it ended
    (("internal", "scale"), 0.0, "out_of_range"),
    (("internal", "scale"), -1.0, "out_of_range"),
    (("internal", "scale"), INF, "not_finite"),
    (("internal", "scale"), "1", "bad_type"),
    (("internal", "ref_sum"), NAN, "not_finite"),
    (("internal", "ref_count"), -1, "out_of_range"),
    (("internal", "ref_count"), 10**9, "out_of_range"),
    (("internal", "ph"), [], "bad_type"),
    (("internal", "ph", "n"), 0, "out_of_range"),
    (("internal", "ph", "n"), "2500", "bad_type"),
    (("internal", "ph", "n"), 7.0, "out_of_range"),  # not the samples since the restart
    (("internal", "ph", "mean"), NAN, "not_finite"),
    (("internal", "ph", "min_increase"), INF, "not_finite"),
    (("internal", "ph", "max_decrease"), [1], "bad_type"),
    (("internal", "ph", "drift"), "no", "bad_type"),
    (("internal", "ph", "drift"), True, "out_of_range"),
    (("internal", "ph", "sum_increase"), DELETE, "missing_field"),
    (("internal", "ph", "river"), 1, "bad_type"),
]
ADWIN: list[tuple[tuple[str, ...], Any, str]] = [
    (("internal", "log"), BIG_LIST, "bad_type"),
    (("internal", "log"), "A" * 4 * 10**6, "bad_length"),
    (("internal", "log"), _pack([0.5] * 2501), "bad_length"),
    (("internal", "log"), _pack([0.5] * 2499), "bad_length"),
    (("internal", "log"), _pack([0.5] * 2499 + [NAN]), "not_finite"),
    (("internal", "seen"), 2501, "out_of_range"),
    (("internal", "seen"), -1, "out_of_range"),
    (("internal", "seen"), 2499.0, "bad_type"),
    (("internal", "recent"), _pack([0.5] * 99), "bad_length"),
    (("internal", "before"), "0.8", "bad_type"),
    (("internal", "before"), INF, "not_finite"),
    (("drift",), True, "out_of_range"),  # a detection the replayed window does not make
    (("internal", "log"), DELETE, "missing_field"),
]
SPECIFIC = {
    "ks_window": WINDOW,
    "mannwhitney_window": WINDOW,
    "proportion": PROPORTION,
    "page_hinkley": PAGE_HINKLEY,
    "adwin": ADWIN,
}
CASES = [
    pytest.param(kind, path, value, reason, id=f"{kind}-{'.'.join(path)}-{i}")
    for kind in KINDS
    for i, (path, value, reason) in enumerate(COMMON + SPECIFIC[kind])
]
_VALID: dict[str, dict[str, Any]] = {}


def valid_state(kind: str) -> dict[str, Any]:
    """The state after 2,500 samples (in control: a reference or test in force)."""
    if kind not in _VALID:
        detector = create_drift_detector({"type": kind})
        trace(detector, stream_for(kind)[:2500])
        _VALID[kind] = as_data(detector)
    return json.loads(json.dumps(_VALID[kind]))  # a copy


def corrupt(state: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    target = state
    for step in path[:-1]:
        target = target[step]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return state


@pytest.mark.parametrize(("kind", "path", "value", "reason"), CASES)
def test_a_corrupt_state_is_refused_with_its_reason_and_changes_nothing(
    kind: str, path: tuple[str, ...], value: Any, reason: str
) -> None:
    bad = corrupt(valid_state(kind), path, value)
    used = create_drift_detector({"type": kind})  # a detector with a state of its own
    used.load_state(valid_state(kind))
    with pytest.raises(StateError) as err:
        used.load_state(bad)
    assert err.value.reason == reason, str(err.value)
    assert used.to_state() == valid_state(kind)  # left exactly as it was
    fresh, untouched = create_drift_detector({"type": kind}), create_drift_detector({"type": kind})
    with pytest.raises(StateError):
        fresh.load_state(bad)
    tail = stream_for(kind)[:400]
    assert trace(fresh, tail) == trace(untouched, tail)
    if path[0] != "spec":
        with pytest.raises(StateError) as again:
            detector_from_state(bad)
        assert again.value.reason == reason


@pytest.mark.parametrize("kind", KINDS)
def test_an_oversized_array_is_refused_before_it_is_decoded(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    class NoCounting(str):
        def count(self, *args: Any) -> int:
            raise AssertionError("looked at the characters of an oversized string")

    def no_decoding(*args: Any, **kwargs: Any) -> bytes:
        raise AssertionError("decoded an oversized string")

    monkeypatch.setattr(base64, "b64decode", no_decoding)
    field = {"adwin": "log", "page_hinkley": "recent"}.get(kind, "ring")
    huge = NoCounting(("0" if kind == "proportion" else "A") * 8 * 10**6)
    with pytest.raises(StateError) as err:
        create_drift_detector({"type": kind}).load_state(
            corrupt(valid_state(kind), ("internal", field), huge)
        )
    assert err.value.reason == "bad_length"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"type": "no_such_detector"}, "spec_mismatch"),
        ({"type": "ks_window", "window_size": MAX_SIZE + 1}, "spec_mismatch"),  # no allocation
        ({"type": "adwin", "state_samples": 10**12}, "spec_mismatch"),
        ({"type": "adwin", "delta": "0.1"}, "spec_mismatch"),
        ({"type": ["adwin"]}, "spec_mismatch"),
        ([["type", "adwin"]], "bad_type"),
    ],
)
def test_detector_from_state_builds_only_valid_specs(spec: Any, reason: str) -> None:
    state = valid_state("adwin")
    state["spec"] = spec
    with pytest.raises(StateError) as err:
        detector_from_state(state)
    assert err.value.reason == reason


def test_unknown_reasons_keep_the_label_set_fixed() -> None:
    assert StateError("weird", "x").reason in STATE_ERROR_REASONS
    assert set(STATE_ERROR_REASONS) == {
        "version", "spec_mismatch", "bad_type", "bad_length", "not_finite", "out_of_range",
        "missing_field",
    }  # fmt: skip
    assert isinstance(StateError("version", "x"), ValueError)


def test_a_plugin_without_state_methods_says_so() -> None:
    class Bare(BaseDriftDetector):
        def _reset_state(self) -> None:
            pass

        def _step(self, x: float) -> bool:
            return False

        reference_mean = None  # type: ignore[assignment]
        recent_mean = None  # type: ignore[assignment]

    with pytest.raises(NotImplementedError, match="_internal_state"):
        Bare().to_state()


# ---------------------------------------------------------------- a pickle is not state
class _Exploit:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.system, (f"touch {self.marker}",))


def pickle_inputs(marker: str) -> list[Any]:
    import base64
    import pickle

    payload = pickle.dumps(_Exploit(marker))
    latin, b64 = payload.decode("latin-1"), base64.b64encode(payload).decode()
    return [
        payload,
        bytearray(payload),
        memoryview(payload),
        latin,
        b64,
        {"pickle": b64},
        {"v": 1, "state": latin},
        [payload],
        None,
        42,
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_payloads_are_refused_and_never_run(kind: str, tmp_path: Any) -> None:
    marker = tmp_path / "pwned"
    for hostile in pickle_inputs(str(marker)):
        with pytest.raises(StateError) as err:
            create_drift_detector({"type": kind}).load_state(hostile)
        assert err.value.reason in ("bad_type", "version", "missing_field")
        with pytest.raises(StateError):
            detector_from_state(hostile)
    import base64
    import pickle

    payload = pickle.dumps(_Exploit(str(marker)))
    for field in ("ring", "log", "recent", "reference", "building"):
        for blob in (payload, payload.decode("latin-1"), base64.b64encode(payload).decode()):
            state = valid_state(kind)
            if field in state["internal"]:
                with pytest.raises(StateError):
                    detector_from_state(corrupt(state, ("internal", field), blob))
    assert not marker.exists()
