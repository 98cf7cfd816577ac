"""A fitted compound score: non-negative weights over judge metrics that separate good
turns from bad ones (`ragpulse weights fit`).

The fit is a logistic regression of good (1) / bad (0) on the metric scores with the
weights bounded to [0, inf), a free intercept and a small L2 penalty on the weights
(scipy L-BFGS-B). The weights are then normalised to sum to 1, so the compound
Σ w_i·score_i is a weighted mean of the scores, in [0, 1]. Its AUC is measured out of
fold (stratified k-fold: each row scored with weights fitted without its fold) and
compared with the plain mean of the same metrics; percentile bootstrap CIs resample rows.
scipy and scikit-learn are imported on use (`ragpulse run` imports this package).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "L2",
    "Fit",
    "auc",
    "bootstrap_ci",
    "fit_logistic",
    "fit_weights",
    "normalise",
    "oof_auc",
    "oof_predictions",
]

L2 = 1e-3  #: penalty on the weights (mean log-loss + L2/2 · |w|²)
Fit = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _loss(params: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float) -> tuple[float, np.ndarray]:
    w, b = params[:-1], params[-1]
    z = x @ w + b
    sign = 2.0 * y - 1.0
    loss = float(np.mean(np.logaddexp(0.0, -sign * z))) + 0.5 * l2 * float(w @ w)
    resid = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    grad = np.append(x.T @ resid + l2 * w, resid.sum())
    return loss, grad


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """Raw non-negative weights and the intercept of the constrained logistic fit
    (`x`: one row per turn, one column per metric, `y`: 1 good / 0 bad)."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    k = x.shape[1]
    start = np.zeros(k + 1)
    bounds = [(0.0, None)] * k + [(None, None)]
    res = minimize(_loss, start, args=(x, y, l2), jac=True, method="L-BFGS-B", bounds=bounds)
    weights = np.clip(res.x[:-1], 0.0, None)
    weights[weights < 1e-8] = 0.0
    return weights, float(res.x[-1])


def normalise(weights: np.ndarray) -> np.ndarray | None:
    """Weights scaled to sum to 1; None when they are all 0."""
    total = float(np.sum(weights))
    return np.asarray(weights, dtype=float) / total if total > 0 else None


def fit_weights(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Non-negative weights summing to 1 (equal weights when the fit zeroes them all)."""
    weights = normalise(fit_logistic(x, y, l2)[0])
    k = np.asarray(x).shape[1]
    return weights if weights is not None else np.full(k, 1.0 / k)


def auc(y: np.ndarray, scores: np.ndarray) -> float:
    """ROC AUC of `scores` for the good class (sklearn.metrics.roc_auc_score)."""
    from sklearn.metrics import roc_auc_score  # type: ignore[import-untyped]

    return float(roc_auc_score(y, scores))


def oof_predictions(
    x: np.ndarray, y: np.ndarray, folds: int = 5, seed: int = 0, fit: Fit = fit_weights
) -> np.ndarray:
    """The compound of every row, computed with the weights `fit` learned on the other
    folds of a stratified (shuffled, seeded) k-fold split: never on a row's own fold."""
    from sklearn.model_selection import StratifiedKFold  # type: ignore[import-untyped]

    x = np.asarray(x, dtype=float)
    y = np.asarray(y)
    out = np.full(len(y), np.nan)
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in split.split(x, y):
        out[test] = x[test] @ fit(x[train], y[train])
    return out


def oof_auc(
    x: np.ndarray, y: np.ndarray, folds: int = 5, seed: int = 0, fit: Fit = fit_weights
) -> tuple[float, np.ndarray]:
    """Out-of-fold AUC of the compound and the out-of-fold predictions behind it."""
    pred = oof_predictions(x, y, folds, seed, fit)
    return auc(np.asarray(y), pred), pred


def bootstrap_ci(
    y: np.ndarray,
    scores: np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the AUC, resampling (label, score) rows; resamples with
    one class only are skipped. None when fewer than 10 resamples are usable."""
    y = np.asarray(y)
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(y), len(y))
        sample = y[idx]
        if sample.min() == sample.max():
            continue
        values.append(auc(sample, scores[idx]))
    if len(values) < 10:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return float(lo), float(hi)
