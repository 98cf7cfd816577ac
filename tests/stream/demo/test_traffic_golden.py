"""The seeded traffic is byte-for-byte stable: sha256 of what `ragpulse traffic` writes.

The digests were recorded with the generator as it stood before the demo world moved into
``stream.demo`` (phrase banks from Python code to YAML data). A change of the generator's
output is a change of every benchmark and test baseline built on it: if it is intended,
re-record the digests here in the same commit and say so.
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
        "b18ee86ef0dfc084b90b934416163add600a8790384d4ae1a9e5d5cf10fe5fb0",
        "8960586c43cf9cf14411e7830eeb6de5528814b595bf320ceb4da0ce90238aba",
    ),
    (7, "degraded"): (
        "1e49412d2c286178f498793e2405b009f2371c7190d1ad3a189b17b0e87dab58",
        "c88663cf184b64484712e429c27f1e91433f6577292182fab5b97e1d06b7d924",
    ),
    (99, "baseline"): (
        "9d50a74349f4abbe65649aa69f1d23e27902ce965b83c343ad8f8d834cef85db",
        "469c61230e624560641bb9f63471d5f807f48087194716663aa658e5cb1a0ed7",
    ),
    (99, "degraded"): (
        "1950a51aebb3598b9ea584bfa222da8060ef359386e936c65d3cb930a42111a2",
        "83a9f78baf004458290ae2ea23d37c7f5464a32752342759b63fb3c689c9fb18",
    ),
    (3, "baseline"): (
        "f8bf894cdb0ba1b8d8560d10736ce0c28dc80ac3f096f9a3c50fd1f3b9a247b9",
        "244f1c5eb7c081f072abd26f39e9417f40d0cbdf6c984fe3bcf4f66ff16692d3",
    ),
    (3, "degraded"): (
        "16392cd5761c32af5f89ec88b0cd55f76fad97be30340d09dc477c0881261a6a",
        "4338787e0767c3d34f9bbead73e0b234ee76c49f171cdf37ab30537fbccef10b",
    ),
}

#: 2,000 messages from index 2,500 of (seed 11, degraded) at a 5 % malformed rate: a window
#: off the start, and every malformed kind (~20 each) with its variants
WINDOW = (
    "c1bbfacf003415ecec9a5c540c174cdc0a6361b6dcba638673909ccfd5c34310",
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
