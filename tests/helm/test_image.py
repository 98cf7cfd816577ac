"""The Dockerfile, read with Docker's own parser (the `dockerfile` package wraps BuildKit's).

No Docker engine is available here, so the image is not built; these checks keep the recipe
consistent with the package layout and with what the chart expects of the image.
"""

from __future__ import annotations

import fnmatch
import tomllib
from typing import Any

import dockerfile
import yaml

from tests.helm.manifests import CHART, REPO

COMPILERS = ("build-essential", "gcc", "g++", "clang", "cargo", "rustc")


def _stages() -> list[list[Any]]:
    stages: list[list[Any]] = []
    for command in dockerfile.parse_file(str(REPO / "Dockerfile")):
        if command.cmd == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(command)
    return stages


def _final() -> list[Any]:
    return _stages()[-1]


def test_multi_stage_with_a_slim_python_final_stage() -> None:
    stages = _stages()
    assert len(stages) >= 2
    args = {
        c.value[0].split("=")[0]: c.value[0].split("=")[1]
        for c in dockerfile.parse_file(str(REPO / "Dockerfile"))
        if c.cmd == "ARG" and "=" in c.value[0]
    }
    assert args["PYTHON_VERSION"] == "3.11"
    assert _final()[0].value[0] == "python:${PYTHON_VERSION}-slim"


def test_final_stage_has_no_compilers_and_installs_offline_from_wheels() -> None:
    runs = " ".join(" ".join(c.value) for c in _final() if c.cmd == "RUN")
    assert not [tool for tool in COMPILERS if tool in runs]
    assert "apt-get install" not in runs
    assert "--no-index" in runs and "--find-links=/wheels" in runs


def test_runs_as_the_user_the_chart_expects() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    users = [c.value[0] for c in _final() if c.cmd == "USER"]
    uid, gid = users[-1].split(":")
    assert (int(uid), int(gid)) == (
        values["securityContext"]["runAsUser"],
        values["securityContext"]["runAsGroup"],
    )
    assert int(uid) != 0


def test_entrypoint_command_and_port_match_the_chart() -> None:
    final = {c.cmd: c for c in _final()}
    assert final["ENTRYPOINT"].json and final["ENTRYPOINT"].value == ("ragpulse",)
    assert final["CMD"].json and final["CMD"].value == ("run",)
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert final["EXPOSE"].value == (str(values["config"]["server"]["port"]),)


def test_oci_labels() -> None:
    labels: dict[str, str] = {}
    for command in _final():
        if command.cmd == "LABEL":
            pairs = command.value
            labels.update(zip(pairs[::2], pairs[1::2], strict=True))
    for key in ("title", "description", "version", "revision", "created", "licenses"):
        assert f"org.opencontainers.image.{key}" in labels


def test_every_package_is_copied_and_not_docker_ignored() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = {
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    builder = _stages()[0]
    copied = {src.rstrip("/") for c in builder if c.cmd == "COPY" for src in c.value[:-1]}
    assert packages <= copied
    assert {"pyproject.toml", pyproject["project"]["readme"]} <= copied
    ignored = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for source in copied:
        assert not [p for p in ignored if fnmatch.fnmatch(source, p)], source
