"""Seeded synthetic metric streams with known change points.

Scores are judge-like: Beta-distributed with the given mean and concentration 20
unless a scenario sets another (standard deviation ~0.084 at mean 0.82), rounded to
two decimals as a judge prints them. Rates are Bernoulli. Every stream of a
(scenario, seed) pair is the same for every contender.

`conversation_turns` > 0 makes scores conversation-clustered, as the sampler's
per-conversation hashing delivers them: consecutive turns of one conversation (1 +
Poisson(turns - 1) of them) share a conversation-level mean drawn from a Beta around
the stream mean with concentration 50 (intra-conversation correlation ~0.3; lag-1
autocorrelation 0.19, standard deviation 0.099 at mean 0.82).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["CONCENTRATION", "SCENARIOS", "Scenario", "generate"]

CONCENTRATION = 20.0
CONVERSATION_CONCENTRATION = 50.0


@dataclass(frozen=True)
class Scenario:
    """`change` = index of the first changed sample (None: stationary)."""

    name: str
    kind: str  # "score" | "rate"
    length: int
    start: float
    end: float
    change: int | None = None
    ramp: int = 0  # samples over which the mean moves from start to end (0: abrupt)
    conversation_turns: float = 0.0  # mean turns per conversation; 0: independent samples
    concentration: float = CONCENTRATION
    title: str = ""

    def means(self) -> np.ndarray:
        mean = np.full(self.length, self.start)
        if self.change is None:
            return mean
        idx = np.arange(self.length) - self.change
        step = (idx >= 0).astype(float)
        frac = np.clip((idx + 1) / self.ramp, 0.0, 1.0) if self.ramp else step
        return self.start + (self.end - self.start) * frac


PRE = 3000  # in-control samples before a change
POST = 5000  # horizon after the change: no alarm within it is a miss
STATIONARY = 20_000  # per seed

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("drop_0.10", "score", PRE + POST, 0.82, 0.72, PRE, title="abrupt drop 0.82 -> 0.72"),
    Scenario("drop_0.05", "score", PRE + POST, 0.82, 0.77, PRE, title="abrupt drop 0.82 -> 0.77"),
    Scenario(
        "gradual_0.10",
        "score",
        PRE + POST,
        0.82,
        0.72,
        PRE,
        ramp=2000,
        title="linear decline 0.82 -> 0.72 over 2,000 samples",
    ),
    Scenario("stationary_score", "score", STATIONARY, 0.82, 0.82, title="stationary at 0.82"),
    Scenario(
        "stationary_clustered",
        "score",
        STATIONARY,
        0.82,
        0.82,
        conversation_turns=3.0,
        title="stationary at 0.82, conversation-clustered (3 turns on average)",
    ),
    Scenario(
        "drop_0.10_at_0.90",
        "score",
        PRE + POST,
        0.90,
        0.80,
        PRE,
        title="abrupt drop 0.90 -> 0.80 (a service with a higher normal level)",
    ),
    Scenario(
        "stationary_at_0.77",
        "score",
        STATIONARY,
        0.77,
        0.77,
        title="stationary at 0.77 (a service with a lower normal level)",
    ),
    Scenario(
        "stationary_wide",
        "score",
        STATIONARY,
        0.70,
        0.70,
        concentration=6.0,
        title="stationary at 0.70, concentration 6 (a noisier metric: sd 0.17)",
    ),
    Scenario("refusal_2_to_6", "rate", PRE + POST, 0.02, 0.06, PRE, title="refusal rate 2% -> 6%"),
    Scenario("stationary_rate", "rate", STATIONARY, 0.02, 0.02, title="stationary at 2%"),
)


def generate(scenario: Scenario, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, zlib.crc32(scenario.name.encode()), 2026])
    mean = scenario.means()
    if scenario.kind == "rate":
        return (rng.random(scenario.length) < mean).astype(np.float64)
    if scenario.conversation_turns:
        sizes = 1 + rng.poisson(scenario.conversation_turns - 1.0, scenario.length)
        c = CONVERSATION_CONCENTRATION
        per_conversation = rng.beta(mean * c, (1.0 - mean) * c)
        mean = np.repeat(per_conversation, sizes)[: scenario.length]
    k = scenario.concentration
    scores = rng.beta(mean * k, (1.0 - mean) * k)
    return np.round(scores, 2)
