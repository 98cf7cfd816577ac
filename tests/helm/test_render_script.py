"""`python helm/render.py`: the documented way to render the chart without a helm binary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import helm_python as helm
import yaml

from tests.helm.manifests import REPO, render


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "helm" / "render.py"), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_renders_what_helm_install_would_create(chart: helm.Chart, tmp_path: Path) -> None:
    values = {"config": {"sampling": {"rate": 0.2}}, "networkPolicy": {"enabled": True}}
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    done = _run("-f", str(path), "--name", "rp", "--namespace", "observability")
    assert done.returncode == 0, done.stderr
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    assert docs == render(chart, values)  # the tests' own rendering, object for object
    assert "NetworkPolicy" in {d["kind"] for d in docs}


def test_bad_values_fail_with_the_schema_message(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("mode: bogus\n")
    done = _run("-f", str(path))
    assert done.returncode == 1
    assert "/mode" in done.stderr and "standalone" in done.stderr
