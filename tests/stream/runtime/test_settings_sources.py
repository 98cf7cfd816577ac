"""Configuration never falls back silently: the user trial's cases, as a user runs them
(`ragpulse config --print` in a subprocess, the same validation as `ragpulse run`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _config(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args, "config", "--print"],
        env={**clean, **env}, cwd=tmp_path, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def test_a_list_of_strings_may_be_comma_separated(tmp_path: Path) -> None:
    done = _config(tmp_path, RAGPULSE_DETECTORS__ENABLED="refusal, pii")
    assert done.returncode == 0, done.stderr
    assert "enabled:\n  - type: refusal\n  - type: pii\n" in done.stdout


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("RAGPULSE_LABELS__ALLOW", "{service: [a]}", "RAGPULSE_LABELS__ALLOW: not valid JSON"),
        ("RAGPULSE_SLOS", "pii-free", "RAGPULSE_SLOS: not valid JSON"),
        (
            "RAGPULSE_SAMPLNG__RATE",
            "0.5",
            "RAGPULSE_SAMPLNG__RATE: no setting 'samplng'; did you mean sampling.rate "
            "(RAGPULSE_SAMPLING__RATE)?",
        ),
        (
            "RAGPULSE_LOGLEVEL",
            "DEBUG",
            "RAGPULSE_LOGLEVEL: no setting 'loglevel'; did you mean log_level",
        ),
        (
            "RAGPULSE_SAMPLING__RATEE",
            "0.5",
            "sampling.ratee (RAGPULSE_SAMPLING__RATEE): Extra inputs are not permitted; "
            "did you mean sampling.rate?",
        ),
        ("RAGPULSE_SAMPLING__RATE", "-1", "sampling.rate (RAGPULSE_SAMPLING__RATE): Input"),
        ("RAGPULSE_DETECTORS__ENABLED", "refusal,bogus", "unknown detector 'bogus'"),
    ],
)
def test_bad_environment_exits_2_naming_the_variable(
    tmp_path: Path, var: str, value: str, expected: str
) -> None:
    done = _config(tmp_path, **{var: value})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert expected in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_yaml_errors_name_the_file_and_the_closest_name(tmp_path: Path) -> None:
    config = tmp_path / "ragpulse.yaml"
    config.write_text("kafka:\n  bootstrap_server: x:9092\nsampling:\n  rat: 0.5\n")
    done = _config(tmp_path, "--config", str(config))
    assert done.returncode == 2
    err = done.stderr
    assert f"kafka.bootstrap_server (in {config}): Extra inputs are not permitted; " in err
    assert "did you mean kafka.bootstrap_servers?" in err
    assert f"sampling.rat (in {config})" in err and "did you mean sampling.rate?" in err


def test_variables_that_are_not_settings_are_left_alone(tmp_path: Path) -> None:
    done = _config(
        tmp_path, RAGPULSE_AZURE_KEY="k", RAGPULSE_TEST_ENGINE="faust", RAGPULSE_BROKER_LOG="info"
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("value", "shown"), [("all", "extra: all"), ("none", "extra: none")])
def test_a_word_setting_is_not_split_into_a_list(tmp_path: Path, value: str, shown: str) -> None:
    done = _config(tmp_path, RAGPULSE_SCORECARD__EXTRA=value)
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout


def test_a_variable_the_judge_reads_a_header_from_is_not_a_setting(tmp_path: Path) -> None:
    done = _config(
        tmp_path,
        RAGPULSE_JUDGE__HEADERS_FROM_ENV='{"x-gw": "RAGPULSE_JUDGES"}',
        RAGPULSE_JUDGES="gateway-secret-value",
    )
    assert "no setting" not in done.stderr
    assert "gateway-secret-value" not in done.stdout + done.stderr
