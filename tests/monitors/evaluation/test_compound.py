"""The fitted compound score (`monitors.evaluation.compound`): non-negative weights,
out-of-fold AUC that never scores a row with weights fitted on it, bootstrap CIs."""

from __future__ import annotations

import numpy as np
import pytest

from monitors.evaluation.compound import (
    auc,
    bootstrap_ci,
    fit_logistic,
    fit_weights,
    normalise,
    oof_auc,
    oof_predictions,
)


def _data(n: int = 400, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Column 0 separates good from bad, column 1 is noise, column 2 is reversed."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    informative = np.clip(0.5 + 0.2 * (2 * y - 1) + rng.normal(0, 0.2, n), 0, 1)
    reversed_ = np.clip(0.5 - 0.1 * (2 * y - 1) + rng.normal(0, 0.2, n), 0, 1)
    return np.c_[informative, rng.random(n), reversed_], y


def test_fit_weights_recovers_the_informative_metric() -> None:
    x, y = _data()
    w = fit_weights(x, y)
    assert w[0] > 0.8 and w[0] > w[1]
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0)
    assert w[2] == 0.0  # a metric that points the wrong way is bounded at 0, not negative
    raw, intercept = fit_logistic(x, y)
    assert raw[0] > 1 and intercept < 0


def test_all_zero_weights_fall_back_to_equal_weights() -> None:
    x, y = _data()
    only_reversed = x[:, [2, 2]]
    raw, _ = fit_logistic(only_reversed, y)
    assert np.all(raw == 0) and normalise(raw) is None
    assert fit_weights(only_reversed, y) == pytest.approx([0.5, 0.5])


def test_out_of_fold_predictions_never_use_the_rows_own_fold() -> None:
    n = 60
    ids = np.arange(n, dtype=float)
    x = np.c_[ids, np.ones(n)]
    y = np.array([0, 1] * (n // 2))
    fits: list[set[float]] = []

    def spy(x_train: np.ndarray, y_train: np.ndarray) -> np.ndarray:
        fits.append(set(x_train[:, 0].tolist()))
        return np.array([0.0, float(len(fits))])  # the compound = the number of this fit

    pred = oof_predictions(x, y, folds=4, seed=1, fit=spy)
    assert len(fits) == 4 and all(len(f) == 45 for f in fits)
    for row, which in enumerate(pred.astype(int)):
        assert row not in fits[which - 1]  # scored by a fit that never saw it
    assert sorted(np.bincount(pred.astype(int))[1:]) == [15, 15, 15, 15]


def test_pure_noise_has_an_out_of_fold_auc_near_chance() -> None:
    rng = np.random.default_rng(11)
    x = rng.random((400, 20))
    y = (rng.random(400) < 0.5).astype(int)
    oof, pred = oof_auc(x, y, folds=5, seed=0)
    in_sample = auc(y, x @ fit_weights(x, y))
    assert abs(oof - 0.5) < 0.15
    assert in_sample > oof + 0.03  # fitting on the scored rows flatters the fit
    assert pred.shape == (400,) and np.all((pred >= 0) & (pred <= 1))


def test_oof_auc_of_a_real_signal_beats_the_plain_mean_and_is_seeded() -> None:
    x, y = _data()
    first, pred = oof_auc(x, y, folds=5, seed=4)
    again, pred_again = oof_auc(x, y, folds=5, seed=4)
    assert first == again and np.array_equal(pred, pred_again)
    assert first > auc(y, x.mean(axis=1)) + 0.05


def test_bootstrap_ci_contains_the_estimate_and_is_deterministic() -> None:
    x, y = _data(200)
    scores = x[:, 0]
    point = auc(y, scores)
    ci = bootstrap_ci(y, scores, n_boot=300, seed=5)
    assert ci is not None and ci[0] < point < ci[1] and ci[1] - ci[0] < 0.2
    assert bootstrap_ci(y, scores, n_boot=300, seed=5) == ci
    assert bootstrap_ci(y, scores, n_boot=300, seed=6) != ci
    assert bootstrap_ci(y, scores, n_boot=5, seed=5) is None  # too few resamples
