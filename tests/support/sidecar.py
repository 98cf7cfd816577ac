"""`ragpulse run` as a real child process on loopback, for the tests and the benchmarks.

The one wrapper: the tests' `SidecarProcess` fixture, the fleet harness, `python -m
bench.soak` and the Kafka benchmarks (`bench.perf.sidecarproc.BenchSidecar`, a subclass)
all use it. Test support, imported by bench (never the other way round). For each sidecar,
the child gets its topics, group and port through `RAGPULSE_*` environment variables
(the parent's own `RAGPULSE_*` are dropped), logs to a file, and is ready when `/readyz`
answers 200.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from stream.demo import free_port

__all__ = ["ROOT", "Samples", "SidecarProcess", "SidecarStartError", "Topics", "scrape"]

ROOT = Path(__file__).resolve().parents[2]
#: (sample name, sorted labels) -> value
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class SidecarStartError(RuntimeError):
    """The child exited at start, or did not become ready in time."""


@dataclass
class Topics:
    input: str
    dlq: str
    scores: str
    group: str
    alarms: str
    state: str
    observations: str = ""

    def __post_init__(self) -> None:
        self.observations = self.observations or f"{self.state}.obs"

    @classmethod
    def unique(cls, prefix: str = "in") -> Topics:
        t = uuid.uuid4().hex[:8]
        return cls(f"{prefix}-{t}", f"{prefix}-{t}.dlq", f"scores-{t}", f"rp-{t}",
                   f"alarms-{t}", f"state-{t}")  # fmt: skip


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    out: Samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@dataclass
class SidecarProcess:
    """`python -m stream.cli run` configured through RAGPULSE_* env (judge off unless set)."""

    bootstrap: str
    topics: Topics
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    argv: tuple[str, ...] = ("-m", "stream.cli", "run")  # after sys.executable
    prefix: tuple[str, ...] = ()  # before sys.executable, e.g. ("taskset", "-c", "1")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def env(self) -> dict[str, str]:
        t = self.topics
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGPULSE_")}
        env.update(
            {
                "RAGPULSE_KAFKA__BOOTSTRAP_SERVERS": self.bootstrap,
                "RAGPULSE_KAFKA__INPUT_TOPIC": t.input,
                "RAGPULSE_KAFKA__DLQ_TOPIC": t.dlq,
                "RAGPULSE_KAFKA__SCORES_TOPIC": t.scores,
                "RAGPULSE_KAFKA__GROUP_ID": t.group,
                "RAGPULSE_KAFKA__ALARMS_TOPIC": t.alarms,
                "RAGPULSE_KAFKA__STATE_TOPIC": t.state,
                "RAGPULSE_KAFKA__OBSERVATIONS_TOPIC": t.observations,
                "RAGPULSE_SERVER__HOST": "127.0.0.1",
                "RAGPULSE_SERVER__PORT": str(self.port),
                "RAGPULSE_JUDGE__BACKEND__TYPE": "none",
            }
        )
        env.update(self.extra_env)
        return env

    def launch(self, log: Path) -> SidecarProcess:
        """Start the child, logging to `log`, without waiting for it to be ready."""
        self.log = log
        with log.open("wb") as fh:
            self.proc = subprocess.Popen(
                [*self.prefix, sys.executable, *self.argv],
                env=self.env(), stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
            )  # fmt: skip
        return self

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/readyz", timeout=2) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def wait_ready(self, ready_timeout: float = 60.0) -> SidecarProcess:
        assert self.proc is not None
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SidecarStartError(f"sidecar exited at start:\n{self.output()[-3000:]}")
            if self.ready():
                return self
            time.sleep(0.3)
        raise SidecarStartError(f"sidecar not ready in {ready_timeout}s:\n{self.output()[-3000:]}")

    def start(self, log: Path, ready_timeout: float = 60.0) -> SidecarProcess:
        return self.launch(log).wait_ready(ready_timeout)

    def metrics(self) -> Samples:
        return scrape(self.url + "/metrics")

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(timeout)

    def stop(self, timeout: float = 60.0) -> int:
        """Terminate, and kill if it has not exited within `timeout`; 0 if never started."""
        if self.proc is None:
            return 0
        self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log else ""
