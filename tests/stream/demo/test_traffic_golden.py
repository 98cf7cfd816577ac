"""The seeded traffic is byte-for-byte stable: sha256 of what `ragpulse traffic` writes.

The digests were recorded with the generator as it stood before the demo world moved into
``stream.demo`` (phrase banks from Python code to YAML data), and the events digests
re-recorded, deliberately, when golden/canary replays (``stream/demo/golden.py``) joined the
traffic: each replay replaces a clean single-turn conversation (about 1.25 % of messages),
every other message is byte-identical, and the truth digests did not change. The degraded
digests were re-recorded again, deliberately, when the degraded phase started leaking PII
in 12-18 % of turns (x60, for the `pii-free` SLO page, docs/slo.md); baseline unchanged. A change of
the generator's output is a change of every benchmark and test baseline built on it: if it
is intended, re-record the digests here in the same commit and say so.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from stream.cli import main
from stream.demo import generate, write_jsonl, write_truth

N = 3000

#: (seed, phase) -> (sha256 of the events JSONL, sha256 of the --truth JSONL), N messages
GOLDEN = {
    (7, "baseline"): (
        "76380f6e37f2c6079499744b402d3985b1e8bc51b545d56e817f96c36e7b6088",
        "8960586c43cf9cf14411e7830eeb6de5528814b595bf320ceb4da0ce90238aba",
    ),
    (7, "degraded"): (
        "ff0a3f6b39900e85e150b9661777603a0cb533df7b037ae5b1f95941b5878af5",
        "aa8086d1bd17321fab713cb855d71f135fdc066a84fc6405cf3b4d6e805f77e9",
    ),
    (99, "baseline"): (
        "a5c8632f6ebf3427707f1934e2acc447231ba56b423847b58db3cd394cc0f470",
        "469c61230e624560641bb9f63471d5f807f48087194716663aa658e5cb1a0ed7",
    ),
    (99, "degraded"): (
        "0aa4202f08c346cf81f4bc4e1324ca2a8fcbe22e908ac501ff1fd9727f7dc2dc",
        "0c07765b9ad39a6a8ba09e0176815055c51db2b6e20093c34a7a12026736b818",
    ),
    (3, "baseline"): (
        "f7f6406f165603b6e7576509594a1605f75bdcbb41c08d0d9c8fea71d4427f45",
        "244f1c5eb7c081f072abd26f39e9417f40d0cbdf6c984fe3bcf4f66ff16692d3",
    ),
    (3, "degraded"): (
        "5912f245d4b925707d022ca36da0feb368b62a3b181daea4b5c48580b8b22710",
        "d89a1902c537855dd7702f6c34c9f3261e2f976fa265138c8dfe20937c8ff34b",
    ),
}

#: 2,000 messages from index 2,500 of (seed 11, degraded) at a 5 % malformed rate: a window
#: off the start, and every malformed kind (~20 each) with its variants
WINDOW = (
    "64fc9a0e56c8cbe67f2c88b1d947f51c4f0d1522c2d9364ee5475f9f2db8a87d",
    "54ba2be3419c275143fd8b4cb1ce518fda933645ce6c16e5526c78bc2a738a51",
)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("seed", "phase"), list(GOLDEN))
def test_ragpulse_traffic_output_is_unchanged(tmp_path: Path, seed: int, phase: str) -> None:
    events, truth = tmp_path / "events.jsonl", tmp_path / "truth.jsonl"
    args = ["traffic", "-n", str(N), "--seed", str(seed), "--phase", phase]
    assert main([*args, "-o", str(events), "--truth", str(truth)]) == 0
    assert len(events.read_bytes().splitlines()) == N
    assert (_sha256(events), _sha256(truth)) == GOLDEN[seed, phase]


def test_a_window_with_every_malformed_kind_is_unchanged() -> None:
    items = list(generate(2000, seed=11, phase="degraded", start_index=2500, malformed_rate=0.05))
    events, truth = io.BytesIO(), io.BytesIO()
    write_jsonl(events, items)
    write_truth(truth, items)
    digests = (
        hashlib.sha256(events.getvalue()).hexdigest(),
        hashlib.sha256(truth.getvalue()).hexdigest(),
    )
    assert digests == WINDOW
