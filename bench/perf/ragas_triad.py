"""RAGAS's reference-free triad on the benchmark turns; runs in its own venv, not ragpulse's.

    /tmp/ragas-venv/bin/python bench/perf/ragas_triad.py --base-url URL --turns t.jsonl \
        --out r.json [--max-tokens 512]

Used by `bench.perf.economy` (which puts a counting proxy at URL): per turn, RAGAS 0.4's
collections metrics `Faithfulness`, `AnswerRelevancy` (strictness 3, embeddings from the
server's /v1/embeddings) and `ContextPrecisionWithoutReference`, one after the other.
Every request carries ``X-Bench-Tag: ragas/<turn>/<metric>`` so the proxy can attribute
it. Imports nothing from ragpulse (RAGAS is not installed in ragpulse's venv).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any


async def _turn(i: int, turn: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    from openai import AsyncOpenAI  # type: ignore[import-not-found]
    from ragas.embeddings.base import embedding_factory  # type: ignore[import-not-found]
    from ragas.llms.base import llm_factory  # type: ignore[import-not-found]
    from ragas.metrics.collections import (  # type: ignore[import-not-found]
        AnswerRelevancy,
        ContextPrecisionWithoutReference,
        Faithfulness,
    )

    def client(metric: str) -> Any:
        return AsyncOpenAI(
            base_url=args.base_url,
            api_key="none",
            max_retries=0,
            timeout=900,
            default_headers={"X-Bench-Tag": f"ragas/{i}/{metric}"},
        )

    def llm(metric: str) -> Any:
        return llm_factory("smollm2", client=client(metric), max_tokens=args.max_tokens)

    out: dict[str, Any] = {"turn": i}
    jobs = {
        "faithfulness": lambda: Faithfulness(llm=llm("faithfulness")).ascore(
            user_input=turn["query"],
            response=turn["response"],
            retrieved_contexts=turn["contexts"],
        ),
        "answer_relevancy": lambda: AnswerRelevancy(
            llm=llm("answer_relevancy"),
            embeddings=embedding_factory(
                "openai", model="smollm2", client=client("answer_relevancy")
            ),
            strictness=3,
        ).ascore(user_input=turn["query"], response=turn["response"]),
        "context_precision": lambda: ContextPrecisionWithoutReference(
            llm=llm("context_precision")
        ).ascore(
            user_input=turn["query"],
            response=turn["response"],
            retrieved_contexts=turn["contexts"],
        ),
    }
    for name, job in jobs.items():
        started = time.monotonic()
        try:
            result = await job()
            out[name] = {"value": float(result.value), "error": None}
        except Exception as exc:  # a weak model's output: recorded, the run goes on
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            out[name] = {"value": None, "error": detail[-400:]}
        out[name]["seconds"] = time.monotonic() - started
    return out


async def _main(args: argparse.Namespace, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = []
    for i, turn in enumerate(turns):
        results.append(await _turn(i, turn, args))
        print(json.dumps(results[-1]), flush=True)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--turns", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-tokens", type=int, default=512)
    args = ap.parse_args()
    lines = Path(args.turns).read_text(encoding="utf-8").splitlines()
    results = asyncio.run(_main(args, [json.loads(line) for line in lines if line.strip()]))
    import ragas  # type: ignore[import-not-found]

    data = {"ragas_version": ragas.__version__, "turns": results}
    Path(args.out).write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
