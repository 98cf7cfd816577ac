"""Judge economy: LLM calls and tokens per judged turn, ragpulse vs RAGAS's triad.

    python -m bench.perf.economy [--turns 50] [--max-tokens 512] [--ragas-python PATH]

The first `--turns` well-formed turns of the traffic generator (seed 7) are judged by
ragpulse's full LLM metric set through `OpenAIJudge` (default settings: `json_schema`
first) against a local llama.cpp server (llama-cpp-python serving SmolLM2-135M), then by
RAGAS's reference-free triad (`bench/perf/ragas_triad.py`, in the separate venv at
`--ragas-python`) against the same server. A counting proxy on loopback records every
HTTP request and the server-reported `usage`, so both sides are counted the same way.
A 135M model cannot judge: this counts calls and tokens, not verdicts. Writes
bench/results/economy.json and replaces the `economy` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from bench.perf.detectors import load_events
from bench.perf.economy_dry import canned_replies
from bench.perf.economy_md import markdown
from bench.perf.llm_server import CountingProxy, Record, llama_server
from bench.perf.mdsection import machine, replace_section, spread, write_result
from monitors.judges.openai import OpenAIJudge
from monitors.judges.settings import BUNDLED_METRICS, DEFAULT_METRICS
from monitors.metrics import create_metric
from stream.contract.events import Event

__all__ = ["METRICS", "SEPARATE", "judge_turns", "markdown", "run", "summarise"]

NAME = "economy"
#: the LLM judge's default metric set (the bundles), and the same outputs metric by metric
METRICS = tuple(BUNDLED_METRICS)
SEPARATE = tuple(DEFAULT_METRICS)
RAGAS_METRICS = ("faithfulness", "answer_relevancy", "context_precision")
RAGAS_PYTHON = "/tmp/ragas-venv/bin/python"
HINT = "\n\nAnswer with one JSON object and nothing else."  # OpenAIJudge's schema hint
CHAT = "/v1/chat/completions"
CHECKS = 2  # dry mode: prompts per side also evaluated by the server, to check the count
EMBED = "/v1/embeddings"


def _tally(records: list[Record]) -> dict[str, Any]:
    chat = [r for r in records if r.path == CHAT]
    return {
        "requests": len(chat),
        "ok": sum(r.status == 200 for r in chat),
        "rejected_format": sum(
            r.status == 500 and r.response_format == "json_schema" for r in chat
        ),
        "http_statuses": dict(Counter(str(r.status) for r in chat)),
        "prompt_tokens": sum(r.prompt_tokens for r in chat),
        "completion_tokens": sum(r.completion_tokens for r in chat),
        "embedding_requests": sum(r.path == EMBED for r in records),
        "embedding_tokens": sum(r.prompt_tokens for r in records if r.path == EMBED),
        "seconds": sum(r.seconds for r in records),
    }


def _hint_tokens(server: str, records: list[Record]) -> int:
    """Tokens of the schema hints OpenAIJudge put into system prompts (llama.cpp's own
    tokenizer via /extras/tokenize/count); a json_schema server would not see them."""
    total = 0
    counts: dict[str, int] = {}
    for r in records:
        if r.path != CHAT or r.status != 200 or HINT not in r.system:
            continue
        hint = r.system[r.system.rindex(HINT) :]
        if hint not in counts:
            req = urllib.request.Request(
                server.removesuffix("/v1") + "/extras/tokenize/count",
                data=json.dumps({"input": hint}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=60) as resp:
                counts[hint] = int(json.load(resp)["count"])
        total += counts[hint]
    return total


async def judge_turns(
    events: list[Event],
    proxy: CountingProxy,
    metrics: tuple[str, ...] = METRICS,
    max_tokens: int = 512,
    count_hints: bool = True,
) -> list[dict[str, Any]]:
    """ragpulse's metrics on each event in turn through one `OpenAIJudge` (as in a sidecar
    process), one row per (turn, metric) with the proxy's tally of that metric's calls."""
    judge = OpenAIJudge(
        base_url=proxy.base_url,
        model="smollm2",
        timeout_s=600.0,
        max_total_s=1800.0,
        concurrency=1,
        max_tokens=max_tokens,
    )
    built = {name: create_metric(name) for name in metrics}
    rows = []
    try:
        for i, event in enumerate(events):
            for name, metric in built.items():
                mark = proxy.mark()
                outcomes = await metric(event, judge)
                records = proxy.since(mark)
                tally = _tally(records)
                print(
                    f"ragpulse turn {i} {name}: {tally['requests']} requests "
                    f"{tally['prompt_tokens']}+{tally['completion_tokens']} tokens "
                    f"{tally['seconds']:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
                rows.append(
                    {
                        "turn": i,
                        "metric": name,
                        "outcomes": dict(Counter(o.status for o in outcomes)),
                        "reasons": sorted({o.reason for o in outcomes if o.reason}),
                        **tally,
                        "hint_tokens": _hint_tokens(proxy.upstream, records) if count_hints else 0,
                    }
                )
    finally:
        await judge.aclose()
    return rows


def _ragas(
    events: list[Event], proxy: CountingProxy, python: str, max_tokens: int
) -> dict[str, Any]:
    if not Path(python).is_file():
        return {"ran": False, "why": f"{python} not found (pip install ragas into its own venv)"}
    with tempfile.TemporaryDirectory() as tmp:
        turns = Path(tmp) / "turns.jsonl"
        turns.write_text(
            "".join(
                json.dumps(
                    {
                        "query": e.query,
                        "response": e.response,
                        "contexts": [c.content for c in e.retrieved_context],
                    }
                )
                + "\n"
                for e in events
            )
        )
        out = Path(tmp) / "ragas.json"
        script = Path(__file__).with_name("ragas_triad.py")
        cmd = [python, str(script), "--base-url", proxy.base_url, "--turns", str(turns)]
        cmd += ["--out", str(out), "--max-tokens", str(max_tokens)]
        mark = proxy.mark()
        env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0 or not out.exists():
            return {"ran": False, "why": proc.stderr[-2000:]}
        data = json.loads(out.read_text())
    records = proxy.since(mark)
    rows = []
    for turn in data["turns"]:
        for name in RAGAS_METRICS:
            mine = [r for r in records if r.tag == f"ragas/{turn['turn']}/{name}"]
            rows.append({"turn": turn["turn"], "metric": name, **turn[name], **_tally(mine)})
    return {"ran": True, "version": data["ragas_version"], "rows": rows}


def _per_turn(rows: list[dict[str, Any]], key: str, n: int) -> list[float]:
    totals = [0.0] * n
    for row in rows:
        totals[row["turn"]] += row[key]
    return totals


def summarise(rows: list[dict[str, Any]], n: int) -> dict[str, Any]:
    keys: tuple[str, ...] = ("requests", "rejected_format", "ok", "prompt_tokens")
    keys += ("completion_tokens", "embedding_requests", "embedding_tokens")
    out: dict[str, Any] = {k: spread(_per_turn(rows, k, n)) for k in keys}
    out["totals"] = {k: sum(r[k] for r in rows) for k in keys}
    if rows and "hint_tokens" in rows[0]:
        out["hint_tokens"] = spread(_per_turn(rows, "hint_tokens", n))
        out["totals"]["hint_tokens"] = sum(r["hint_tokens"] for r in rows)
    by_metric: dict[str, Counter[str]] = {}
    for row in rows:
        m = by_metric.setdefault(row["metric"], Counter[str]())
        for k in ("requests", "rejected_format", "prompt_tokens", "completion_tokens"):
            m[k] += row[k]
        outcomes = row.get("outcomes")
        if outcomes is None:  # results written before the key was split from http_statuses
            outcomes = {"skipped": 1} if not row["requests"] and row.get("reasons") else {}
        m["errors"] += bool(row.get("error") or outcomes.get("judge_error"))
        m["skipped"] += bool(outcomes.get("skipped"))
    out["by_metric"] = {k: dict(v) for k, v in by_metric.items()}
    return out


def run(
    runs: int = 1,
    smoke: bool = False,
    turns: int = 50,
    max_tokens: int = 512,
    ragas_python: str = RAGAS_PYTHON,
    mode: str = "dry",
    skip_ragas: bool = False,
) -> dict[str, Any]:
    """`runs` is accepted for the harness; the counts are deterministic per turn.

    `mode`: ``dry`` (every call's exact prompt evaluated by the server with max_tokens 1,
    canned valid replies; completion tokens not measured) or ``live`` (the model answers)."""
    if mode not in ("dry", "live"):
        raise ValueError(f"mode must be dry or live, not {mode!r}")
    metrics: tuple[str, ...] = METRICS
    if smoke:
        turns, max_tokens, metrics = 1, 48, ("answer_relevance", "citation_coverage")
    events = load_events(turns)
    info = machine()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, llama_server(Path(tmp) / "chat.log") as chat:
        emb_ctx = llama_server(Path(tmp) / "emb.log", n_ctx=2048, embedding=True)
        with emb_ctx if not smoke else _nullurl(chat) as emb:
            dry = canned_replies(events) if mode == "dry" else None
            checks = 0 if smoke else CHECKS
            proxy = CountingProxy(chat, emb, dry=dry, check_first=checks)
            try:
                ours = asyncio.run(judge_turns(events, proxy, metrics, max_tokens))
                proxy.checks_left = 0
                separate = (
                    []
                    if smoke
                    else asyncio.run(judge_turns(events, proxy, SEPARATE, max_tokens, False))
                )
                proxy.checks_left = checks
                theirs: dict[str, Any] = (
                    {"ran": False, "why": "smoke run" if smoke else "--skip-ragas"}
                    if smoke or skip_ragas
                    else _ragas(events, proxy, ragas_python, max_tokens)
                )
            finally:
                proxy.close()
    if theirs.get("ran"):
        theirs["summary"] = summarise(theirs["rows"], len(events))
    return {
        "name": NAME,
        "machine": info,
        "smoke": smoke,
        "turns": len(events),
        "max_tokens": max_tokens,
        "mode": mode,
        "tokenizer_checks": proxy.checks,
        "wall_s": time.monotonic() - started,
        "ragpulse": {
            "metrics": list(metrics),
            "rows": ours,
            "summary": summarise(ours, len(events)),
        },
        "ragpulse_separate": {
            "metrics": list(SEPARATE),
            "rows": separate,
            "summary": summarise(separate, len(events)) if separate else None,
        },
        "ragas": theirs,
    }


class _nullurl:
    """A context manager that yields the URL it was given (no embeddings server)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> str:
        return self.url

    def __exit__(self, *exc: object) -> None:
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="accepted; counts do not vary by run")
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--ragas-python", default=RAGAS_PYTHON)
    ap.add_argument("--mode", choices=("dry", "live"), default="dry")
    ap.add_argument("--skip-ragas", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    result = run(
        args.runs,
        args.smoke,
        args.turns,
        args.max_tokens,
        args.ragas_python,
        args.mode,
        args.skip_ragas,
    )
    if args.smoke:  # a smoke run proves the harness works; it is not a measurement
        print(markdown(result))
        return 0
    name = NAME if args.mode == "dry" else f"{NAME}-live"  # a live run has its own section
    write_result(name, result)
    replace_section(name, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
