"""The soak's verdict: a trimmed heap makes RSS a sawtooth; its per-minute floor is what
the process keeps."""

from __future__ import annotations

import math

from bench.soak.report import floor, verdict


def _rows(minutes: int, peak_growth: float, floor_growth: float) -> list[dict[str, float]]:
    rows = []
    for i in range(minutes * 12):  # a sample every 5 s; the trim at each minute's start
        t = i * 5.0
        m, within = divmod(t, 60.0)
        base = 100.0 + floor_growth * m
        rows.append(
            {"t_s": t, "rss_mb": base + (within / 60.0) * (10 + peak_growth * m), "fds": 9,
             "consumer_lag": 0, "loop_lag_s": 0.001}
        )  # fmt: skip
    return rows


def test_floor_is_the_smallest_sample_of_each_minute() -> None:
    rows = _rows(3, 0.0, 1.0)
    assert floor(rows) == [(0.0, 100.0), (60.0, 101.0), (120.0, 102.0)]


def test_growing_peaks_over_a_flat_floor() -> None:
    out = verdict(_rows(40, peak_growth=1.0, floor_growth=0.0))
    assert out["rss_mb"]["slope_per_min_second_half"] > 0.3  # the samples climb
    assert math.isclose(out["rss_floor_mb"]["slope_per_min_second_half"], 0.0, abs_tol=1e-9)
    grows = verdict(_rows(40, peak_growth=0.0, floor_growth=0.5))
    assert math.isclose(grows["rss_floor_mb"]["slope_per_min_second_half"], 0.5, rel_tol=1e-6)


def test_sparse_series_take_the_rows_that_carry_them() -> None:
    rows = _rows(40, peak_growth=0.0, floor_growth=0.0)
    for i, row in enumerate(rows[::12]):  # one smaps sample a minute, anon growing 0.25/min
        row.update({"mem_anon_mb": 50.0 + 0.25 * i, "mem_heap_mb": 30.0})
    out = verdict(rows)
    assert math.isclose(out["mem_anon_mb"]["slope_per_min_second_half"], 0.25, rel_tol=1e-6)
    assert math.isclose(out["mem_heap_mb"]["slope_per_min_second_half"], 0.0, abs_tol=1e-9)
    assert out["mem_anon_mb"]["first"] == 50.0
    assert "mem_file_mb" not in out  # never sampled: not reported
