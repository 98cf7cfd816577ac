"""`ragpulse score`, `config --print` and start-up errors, through the real console entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stream.cli import main


def _run(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        input=stdin,
        capture_output=True,
        env=full_env,
        timeout=120,
    )


def test_score_file_writes_one_line_per_input_line(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    good = {
        "event_id": "a",
        "query": "q",
        "response": "As an AI language model, I cannot browse the web.",
    }
    src.write_bytes(
        json.dumps(good).encode() + b"\n" + b"{broken\n" + b"\n" + json.dumps(good).encode() + b"\n"
    )
    out = tmp_path / "out.jsonl"
    assert main(["score", "--input", str(src), "--output", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["event_id"] == "a" and lines[0]["detections"]
    assert lines[1]["line"] == 2 and lines[1]["error"].startswith("invalid_json")
    assert lines[2] == {"line": 4, "event_id": "a", "duplicate": True}


def test_score_stdin_to_stdout_and_summary_on_stderr() -> None:
    event = {"event_id": "x", "query": "q", "response": "Email me at jane.doe@example.com"}
    proc = _run("score", "--input", "-", "--output", "-", stdin=json.dumps(event).encode() + b"\n")
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    assert card["failure_modes"] == ["pii_leak"]
    assert "jane.doe@example.com" not in proc.stdout.decode()  # evidence is masked
    assert b"1 scored" in proc.stderr


def test_score_missing_input_exits_nonzero(tmp_path: Path) -> None:
    assert main(["score", "--input", str(tmp_path / "missing.jsonl")]) == 2


def test_config_print_masks_secrets() -> None:
    proc = _run(
        "config",
        "--print",
        env={"RAGPULSE_KAFKA__SASL_PASSWORD": "s3cret", "RAGPULSE_KAFKA__GROUP_ID": "g1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert b"s3cret" not in proc.stdout
    assert b"group_id: g1" in proc.stdout
    assert b"**********" in proc.stdout


def test_bad_config_fails_at_start_naming_the_field() -> None:
    proc = _run("run", env={"RAGPULSE_KAFKA__AUTO_OFFSET_RESET": "sometimes"})
    assert proc.returncode == 2
    assert b"kafka.auto_offset_reset" in proc.stderr


def test_admin_enabled_without_a_token_fails_at_start_naming_the_field() -> None:
    proc = _run("run", env={"RAGPULSE_SERVER__ADMIN__ENABLED": "true"})
    assert proc.returncode == 2
    assert b"server.admin.token (RAGPULSE_SERVER__ADMIN__TOKEN)" in proc.stderr


def test_config_print_masks_the_admin_token() -> None:
    token = "adm1n-t0ken-0123456789abcdef"
    env = {"RAGPULSE_SERVER__ADMIN__ENABLED": "true", "RAGPULSE_SERVER__ADMIN__TOKEN": token}
    for fmt in ("yaml", "json"):
        proc = _run("config", "--print", "--format", fmt, env=env)
        assert proc.returncode == 0, proc.stderr
        assert token.encode() not in proc.stdout + proc.stderr
        assert proc.stdout.count(b"**********") == 1, proc.stdout


def test_score_offline_ignores_the_live_budget_unless_asked(tmp_path: Path) -> None:
    events, out = tmp_path / "events.jsonl", tmp_path / "scores.jsonl"
    assert main(["traffic", "-n", "30", "-o", str(events), "--seed", "3"]) == 0
    env = {
        "RAGPULSE_SAMPLING__BUDGET__CALLS_PER_MINUTE": "6",  # a bucket of < 1 call
        "RAGPULSE_JUDGE__METRICS": '["answer_relevance"]',
    }
    judged = {}
    for flag in ([], ["--budget"]):
        args = ["score", "-i", str(events), "-o", str(out), "--judge", "embedded"]
        proc = _run(*args, "--sample-rate", "1", *flag, env=env)
        assert proc.returncode == 0, proc.stderr.decode()
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        judged[bool(flag)] = sum(1 for r in rows if r.get("metrics"))
    assert judged[False] == 30  # every event judged: no wall-clock budget offline
    # the configured budget, when asked for, still starves it: a bucket of one call in
    # each of its two pools (shared, flagged) and no refill within the run
    assert judged[True] <= 3
