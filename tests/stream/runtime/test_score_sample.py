"""`ragpulse score` on the bundled sample reproduces its ground truth at the stated P/R.

The thresholds are the ones README.md and BENCHMARKS.md state (measured on 10,000
messages; here 3,000 to keep the suite fast). The sample is ours: this guards against
regressions on the failure shapes we know, it is not a claim about traffic in the wild.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from stream.cli import main

MIN_PRECISION = 0.95
MIN_RECALL = {"invented_identifier": 0.75}
DEFAULT_MIN_RECALL = 0.95


def test_score_reproduces_ground_truth(tmp_path: Path) -> None:
    events, truth, scores = tmp_path / "e.jsonl", tmp_path / "t.jsonl", tmp_path / "s.jsonl"
    assert (
        main(["traffic", "-n", "3000", "--seed", "21", "-o", str(events), "--truth", str(truth)])
        == 0
    )
    assert main(["score", "-i", str(events), "-o", str(scores)]) == 0

    want = {}
    malformed = set()
    for line in truth.read_text().splitlines():
        row = json.loads(line)
        if row["malformed"]:
            malformed.add(row["line"])
        else:
            want[row["event_id"]] = set(row["failure_modes"])
    got = {}
    errors = []
    for line in scores.read_text().splitlines():
        row = json.loads(line)
        if "error" in row:
            errors.append(row["line"])
        else:
            got[row["event_id"]] = set(row["failure_modes"])
    assert set(errors) == malformed  # every malformed line, and only those, is an error line
    assert got.keys() == want.keys()

    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for event_id, modes in want.items():
        for mode in modes | got[event_id]:
            if mode in modes and mode in got[event_id]:
                tp[mode] += 1
            elif mode in modes:
                fn[mode] += 1
            else:
                fp[mode] += 1
    report = {}
    for mode in sorted(set(tp) | set(fp) | set(fn)):
        precision = tp[mode] / ((tp[mode] + fp[mode]) or 1)
        recall = tp[mode] / ((tp[mode] + fn[mode]) or 1)
        report[mode] = (round(precision, 3), round(recall, 3), tp[mode] + fn[mode])
    assert len(report) == 11, report  # every failure mode occurs in the sample
    low = {
        mode: r
        for mode, r in report.items()
        if r[0] < MIN_PRECISION or r[1] < MIN_RECALL.get(mode, DEFAULT_MIN_RECALL)
    }
    assert low == {}, report
