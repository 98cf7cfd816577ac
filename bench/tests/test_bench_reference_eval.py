"""`bench.quality.reference_eval`: the overlap baselines, the figures and a harness run.

The harness runs on a small TruthfulQA file written here (same columns as the shared copy)
with the real MiniLM encoder; the judge metric is either a registered one or a stand-in
patched over `create_metric`, so the tests do not depend on `answer_correctness` existing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.quality import reference_eval as ref
from monitors.metrics import MetricOutcome

_COLS = ["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers"]
_KEYS = {"auc", "auc_ci95", "pairwise", "n_pairs", "n_events", "n_questions"}


@pytest.fixture()
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(ref, "RESAMPLES", 100)  # the bootstrap's figures are not checked here
    (tmp_path / "truthfulqa").mkdir()
    with (tmp_path / "truthfulqa" / "truthfulqa.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(_COLS)
        for n in range(6):
            w.writerow(
                [
                    "Adversarial",
                    "Myths",
                    f"Where does river {n} end?",
                    f"River {n} ends in the sea",
                    f"River {n} ends in the sea.; In the sea; It flows into the ocean",
                    f"River {n} ends in a lake; It never ends; In the mountains",
                ]
            )
    return tmp_path


def test_token_f1_is_squad_style() -> None:
    assert ref.token_f1("The cat sat on the mat.", "the cat is on the mat") == 0.75
    assert ref.token_f1("Paris!", "paris") == 1.0
    assert ref.token_f1("an apple", "oranges") == 0.0
    assert ref.token_f1("cat cat", "cat") == pytest.approx(2 / 3)  # bag, not set, of tokens
    assert ref.token_f1("the", "a") == 1.0  # both empty after normalisation: SQuAD's 1


def test_rouge_l_is_the_lcs_f_measure() -> None:
    assert ref.rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(5 / 6)
    assert ref.rouge_l("a b c d", "b d a c") == 0.5  # LCS "b d" (or "a c"): order matters
    assert ref.rouge_l("Police!", "police") == 1.0
    assert ref.rouge_l("x y", "z") == 0.0
    assert ref.rouge_l("a b", "a b c d") == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_pairwise_counts_ties_half_and_stays_within_questions() -> None:
    scores = [0.9, 0.5, 0.5, 0.1, 0.2, 0.3, 0.7]
    correct = [True, True, False, False, True, False, True]
    groups = ["q1", "q1", "q1", "q1", "q2", "q2", "q3"]
    # q1: 1 + 1 + 0.5 (tie) + 1; q2: 0; q3 has no incorrect answer: no pair
    assert ref.pairwise(scores, correct, groups) == (3.5 / 5, 5)
    assert ref.pairwise([0.5, 0.5], [True, False], [1, 1]) == (0.5, 1)
    assert ref.pairwise([0.5], [True], [1]) == (None, 0)


def test_figures_leave_unscored_events_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ref, "RESAMPLES", 200)
    scores: list[float | None] = [0.9, None, 0.1, 0.8, 0.2, None]
    correct = [True, True, False, True, False, False]
    f = ref.figures(scores, correct, [1, 1, 1, 2, 2, 3])
    assert f["auc"] == 1.0 and f["pairwise"] == 1.0 and f["n_pairs"] == 2
    assert f["n_events"] == 4 and f["n_questions"] == 2
    assert f["auc_ci95"] == [1.0, 1.0]
    rng = np.random.default_rng(1)
    s, c = rng.random(60), rng.random(60) < 0.5
    g = [i // 4 for i in range(60)]
    ci = ref.auc_ci(s, c, g)
    assert ci is not None and ci[0] < ci[1] and ci == ref.auc_ci(s, c, g)  # seeded


def _check(report: dict[str, Any], baselines_only: bool) -> None:
    assert report["split"] == "all" and report["n_events"] == 20 and report["limit"] == 20
    assert report["n_correct"] + report["n_incorrect"] == 20
    names = {"token_f1", "rouge_l", "minilm_cosine"}
    assert names <= set(report["scorers"])
    assert (set(report["scorers"]) == names) is baselines_only
    for f in report["scorers"].values():
        assert set(f) >= _KEYS
    assert report["scorers"]["minilm_cosine"]["n_events"] == 20


def test_harness_runs_with_the_default_metric(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "ref.json"
    argv = ["--split", "all", "--limit", "20", "--data", str(data), "--json", str(out)]
    assert ref.main(argv) == 0
    report = json.loads(out.read_text())
    m = report["metric"]
    assert m["name"] == "answer_correctness"
    _check(report, baselines_only=not m["available"])
    if m["available"]:
        assert set(report["scorers"]["answer_correctness"]["counts"]) == {
            "scored",
            "skipped",
            "judge_error",
        }
    else:
        assert "answer_correctness" in m["error"]


def test_harness_reports_an_unknown_metric_and_keeps_the_baselines(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ref.json"
    argv = ["--split", "all", "--limit", "20", "--metric", "no_such_metric"]
    assert ref.main([*argv, "--data", str(data), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    _check(report, baselines_only=True)
    assert report["metric"]["available"] is False
    assert "no_such_metric" in report["metric"]["error"]
    assert "NOT MEASURED" in capsys.readouterr().out


class _Spy:
    """A stand-in metric: scored, skipped, judge error or a crash, by response; records
    the labels it is shown."""

    name, needs, outputs = "spy", frozenset({"query", "response"}), ("spy",)

    def __init__(self) -> None:
        self.seen: list[dict[str, Any] | None] = []

    async def __call__(self, event: Any, judge: Any) -> list[MetricOutcome]:
        self.seen.append(event.labels)
        if event.response == "It never ends":
            raise RuntimeError("boom")
        if event.response == "In the mountains":
            return [MetricOutcome("spy", "judge_error", reason="timeout")]
        if event.response == "In the sea":
            return [MetricOutcome("spy", "skipped", reason="missing: reference")]
        return [MetricOutcome("spy", "scored", score=float("ocean" in event.response))]


def test_harness_counts_errors_and_hides_the_gold_labels(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import monitors.metrics

    spy = _Spy()
    monkeypatch.setattr(monitors.metrics, "create_metric", lambda name: spy)
    out = tmp_path / "ref.json"
    argv = ["--split", "all", "--limit", "20", "--metric", "spy", "--json", str(out)]
    assert ref.main([*argv, "--data", str(data)]) == 0
    report = json.loads(out.read_text())
    _check(report, baselines_only=False)
    # 20 events = 4 questions x 5 answers: per question the ocean and the lake answers
    # scored, "In the sea" skipped, a judge error and a crash
    assert report["scorers"]["spy"]["counts"] == {"scored": 8, "skipped": 4, "judge_error": 8}
    assert report["scorers"]["spy"]["n_events"] == 8
    assert report["scorers"]["spy"]["pairwise"] == 1.0  # ocean (correct) 1 > lake (wrong) 0
    assert report["scorers"]["spy"]["auc"] == 1.0
    assert report["metric"]["reasons"] == {
        "judge_error: timeout": 4,
        "judge_error: exception: RuntimeError: boom": 4,
        "skipped: missing: reference": 4,
    }
    assert len(spy.seen) == 20
    for labels in spy.seen:  # the reference only: no category, no human verdict
        assert labels is not None and set(labels) == {"expected_answer"}
        assert labels["expected_answer"].startswith("River ")
