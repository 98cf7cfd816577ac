"""The seeded traffic is byte-for-byte stable: sha256 of what `ragpulse traffic` writes.

The digests were recorded with the generator as it stood before the demo world moved into
``stream.demo`` (phrase banks from Python code to YAML data), and the events digests
re-recorded, deliberately, when golden/canary replays (``stream/demo/golden.py``) joined the
traffic: each replay replaces a clean single-turn conversation (about 1.25 % of messages),
every other message is byte-identical, and the truth digests did not change. A change of
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
        "2b5ab09ec0dc5a3a062cd700f426c4f5ff8f6e2ae5ffb99fdd38e8fba6b3b03a",
        "c88663cf184b64484712e429c27f1e91433f6577292182fab5b97e1d06b7d924",
    ),
    (99, "baseline"): (
        "a5c8632f6ebf3427707f1934e2acc447231ba56b423847b58db3cd394cc0f470",
        "469c61230e624560641bb9f63471d5f807f48087194716663aa658e5cb1a0ed7",
    ),
    (99, "degraded"): (
        "4882c2299789cb87abd45faea750c9f277ada658e89c7eccde5fc4e68175ef01",
        "83a9f78baf004458290ae2ea23d37c7f5464a32752342759b63fb3c689c9fb18",
    ),
    (3, "baseline"): (
        "f7f6406f165603b6e7576509594a1605f75bdcbb41c08d0d9c8fea71d4427f45",
        "244f1c5eb7c081f072abd26f39e9417f40d0cbdf6c984fe3bcf4f66ff16692d3",
    ),
    (3, "degraded"): (
        "c4ec88d66b7d22b40a0fd9f292e338ddf7820545df1f2089245767844c832a16",
        "4338787e0767c3d34f9bbead73e0b234ee76c49f171cdf37ab30537fbccef10b",
    ),
}

#: 2,000 messages from index 2,500 of (seed 11, degraded) at a 5 % malformed rate: a window
#: off the start, and every malformed kind (~20 each) with its variants
WINDOW = (
    "dbd4fe29b04c9fcb484461d5686f6b366032cb78f7f82f84d507c15e8689ffb4",
    "f5997501f04fc73eb8ed26f46a874edee084e83bbe575b9ce6c730ca417f2aa8",
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
