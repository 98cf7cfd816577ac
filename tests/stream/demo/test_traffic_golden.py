"""The seeded traffic is byte-for-byte stable: sha256 of what `ragpulse traffic` writes.

The digests were recorded with the generator as it stood before the demo world moved into
``stream.demo`` (phrase banks from Python code to YAML data), and the events digests
re-recorded, deliberately, when golden/canary replays (``stream/demo/golden.py``) joined the
traffic: each replay replaces a clean single-turn conversation (about 1.25 % of messages),
every other message is byte-identical, and the truth digests did not change. The degraded
digests were re-recorded again, deliberately, when the degraded phase started leaking PII
in 20-30 % of turns (x100, for the `pii-free` SLO page, docs/slo.md) and its canary offers
rose to keep ~1.25 % replays; baseline unchanged. A change of the generator's output is
a change of every benchmark and test baseline built on it: if it is intended, re-record the
digests here in the same commit and say so.
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
        "1059a085a11bd615e7a916f13a05ef650b8bcb68683f666a57ceb637009984a6",
        "cd2d9c0343c874bc9b83f1a823a4808197623fed94fb3343df69edb254553eaa",
    ),
    (99, "baseline"): (
        "a5c8632f6ebf3427707f1934e2acc447231ba56b423847b58db3cd394cc0f470",
        "469c61230e624560641bb9f63471d5f807f48087194716663aa658e5cb1a0ed7",
    ),
    (99, "degraded"): (
        "3f8c70e3854016cca2c9824b79a90c154257938ea922eb672933a317fb841131",
        "a623972dc8af3f4141d52e85ea980ab33d9b82c4bb159802e5c77242934d7d37",
    ),
    (3, "baseline"): (
        "f7f6406f165603b6e7576509594a1605f75bdcbb41c08d0d9c8fea71d4427f45",
        "244f1c5eb7c081f072abd26f39e9417f40d0cbdf6c984fe3bcf4f66ff16692d3",
    ),
    (3, "degraded"): (
        "e4346892d184c15a75c71fcca57c92e42ac97ef97a507dc23e203a69bf801fd3",
        "1b7c17189d4e993bc25598820e96e78671726f51e4077ecd0e2d7d6894722b4f",
    ),
}

#: 2,000 messages from index 2,500 of (seed 11, degraded) at a 5 % malformed rate: a window
#: off the start, and every malformed kind (~20 each) with its variants
WINDOW = (
    "196cfd41a61c16d8b2451fad216f7470c512d8004b24db1f768ccbedfe7844ff",
    "c5feced63e485611c673f432216127aee5197fc5f3a3a0a777d767e7e69a59ba",
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
