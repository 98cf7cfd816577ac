"""The detectors say exactly what they said when the verdicts were frozen (issue 16: a faster
detector path must not change a verdict; corpora and verdicts: tests.support.verdicts).
Frozen by `python -m bench.perf.verdicts --write` on the bundled traffic and on every
labelled data set in ../shared/datasets; re-freeze only for a deliberate detection change,
and say so in the commit. When the bundled traffic changes (session 7: golden/canary
replays), re-freeze the two traffic corpora with the detectors of the last commit (a
worktree of it plus the new stream/demo), never with detectors being changed in the same
commit. Session 12 (issue 26) re-froze `traffic_degraded` alone, detectors unchanged, when
the degraded phase started leaking PII in 20-30 % of turns. Session 17 (issue 30) added the
second stage's own file, `deflection_verdicts.json.gz` (`--stage deflection`: the opt-in
`deflection` detector alone); the first stage's file was not re-frozen."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.verdicts import STAGES, corpora, verdicts


def _load(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


_FROZEN = {stage: _load(path) for stage, (path, _settings) in STAGES.items()}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_corpus_is_frozen(stage: str) -> None:
    assert sorted(name for name, _ in corpora()) == sorted(_FROZEN[stage])


@pytest.mark.parametrize(
    ("stage", "name"), [(s, n) for s in sorted(_FROZEN) for n in sorted(_FROZEN[s])]
)
def test_verdicts_match_the_frozen_ones(stage: str, name: str) -> None:
    raws = dict(corpora())[name]
    now, then = verdicts(raws, STAGES[stage][1]()), _FROZEN[stage][name]
    assert now["events"] == then["events"]
    changed = sorted(set(now["detections"]) ^ set(then["detections"]))
    changed += [
        k
        for k in then["detections"]
        if now["detections"].get(k, then["detections"][k]) != then["detections"][k]
    ]
    assert not changed, {
        k: {"now": now["detections"].get(k), "frozen": then["detections"].get(k)}
        for k in changed[:5]
    }
