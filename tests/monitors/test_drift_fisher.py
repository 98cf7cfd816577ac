"""`proportion`'s Fisher exact test (integer arithmetic) against scipy.stats.fisher_exact."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scipy import stats

from monitors.drift.rate import fisher_exact_pvalue

ALTERNATIVES = ("less", "greater", "two-sided")


def _tables() -> list[tuple[int, int, int, int]]:
    small = [(a, b, c, d) for a, b, c, d in itertools.product(range(6), repeat=4)]
    rng = random.Random(11)
    drawn = []
    for _ in range(400):
        n_rec, n_ref = rng.choice([(300, 2000), (50, 500), (1000, 300)])
        p = rng.choice([0.001, 0.02, 0.06, 0.3, 0.5, 0.97])
        k_rec = min(n_rec, max(0, round(rng.gauss(p * n_rec, 2 + 0.3 * p * n_rec))))
        k_ref = min(n_ref, max(0, round(rng.gauss(p * n_ref, 2 + 0.1 * p * n_ref))))
        drawn.append((k_rec, n_rec - k_rec, k_ref, n_ref - k_ref))
    return small + drawn


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_matches_scipy(alternative: str) -> None:
    for a, b, c, d in _tables():
        expected = float(stats.fisher_exact([[a, b], [c, d]], alternative=alternative).pvalue)
        got = fisher_exact_pvalue(a, b, c, d, alternative)
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-300), (a, b, c, d)


def test_exact_fraction_and_edges() -> None:
    # [[8, 2], [1, 5]]: P(X >= 8) = (C(10,8)C(6,1) + C(10,9)C(6,0)) / C(16,9), exactly
    assert fisher_exact_pvalue(8, 2, 1, 5, "greater") == 280 / 11440
    assert fisher_exact_pvalue(0, 300, 0, 2000, "greater") == 1.0  # no events: a zero margin
    with pytest.raises(ValueError, match="alternative"):
        fisher_exact_pvalue(1, 2, 3, 4, "up")
