"""Real Prometheus and Alertmanager servers and a webhook receiver on loopback, for the
end-to-end test (`test_prometheus_e2e.py`), plus Grafana's query-variable substitution.

Each server is Debian's binary as a subprocess on a free loopback port, with its config,
storage and log in a temp directory; `stop()` is idempotent and also ends what the process
started (the demo's embedded broker). `make tools` installs the binaries.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import yaml

from stream.demo import free_port

__all__ = [
    "Alertmanager",
    "GrafanaTime",
    "Prometheus",
    "Server",
    "WebhookReceiver",
    "binary",
    "get_json",
    "grafana_expr",
    "panel_targets",
    "wait_until",
]

T = TypeVar("T")


def binary(name: str, package: str) -> str:
    """The path of a Debian binary; a missing one fails the test (no skip)."""
    exe = shutil.which(name) or shutil.which(name, path="/usr/bin:/usr/sbin")
    assert exe, f"{name} not found: `make tools` installs Debian's {package} package"
    return exe


def get_json(url: str, params: Sequence[tuple[str, str]] = (), timeout: float = 10) -> Any:
    if params:
        url += "?" + urllib.parse.urlencode(list(params))
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read())


def wait_until(
    what: str,
    probe: Callable[[], T | None],
    timeout: float,
    interval: float = 1.0,
    detail: Callable[[], str] = lambda: "",
) -> T:
    """Call `probe` until it returns a truthy value (connection errors count as "not yet");
    on timeout an AssertionError names `what` and appends `detail()`."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
            value = probe()
            if value:
                return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}\n{detail()}")
        time.sleep(interval)


def _descendants(pid: int) -> list[int]:
    """Child processes of `pid`, recursively, from /proc (Linux)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as fh:
                for child in map(int, fh.read().split()):
                    out += [child, *_descendants(child)]
    return out


@dataclass
class Server:
    """A subprocess in its own process group, its output in a log file."""

    name: str
    args: list[str]
    log: Path
    env: dict[str, str] | None = None
    cwd: Path | None = None
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                self.args,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def output(self, tail: int = 4000) -> str:
        return f"--- {self.name}: {self.log} (last {tail} characters) ---\n{self.text()[-tail:]}"

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (graceful), SIGKILL after `timeout`; then end any process it started that
        outlived it (e.g. a broker in its own session)."""
        proc = self.proc
        if proc is None:
            return None
        children = _descendants(proc.pid)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        return proc.returncode


def _ready(server: Server | None, url: str) -> bool:
    assert server is not None and server.alive(), server.output() if server else "not started"
    with urllib.request.urlopen(url, timeout=2) as resp:
        return bool(resp.status == 200)


@dataclass
class Prometheus:
    """/usr/bin/prometheus scraping `targets` (with `target_labels`) every `interval`,
    evaluating `rule_files` every `interval` and sending alerts to `alertmanagers`."""

    workdir: Path
    targets: Sequence[str]
    rule_files: Sequence[Path]
    alertmanagers: Sequence[str] = ()
    target_labels: Mapping[str, str] = field(default_factory=dict)
    interval: str = "1s"
    job: str = "ragpulse"
    port: int = field(default_factory=free_port)
    server: Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, Any]:
        static: dict[str, Any] = {"targets": list(self.targets)}
        if self.target_labels:
            static["labels"] = dict(self.target_labels)
        cfg: dict[str, Any] = {
            "global": {
                "scrape_interval": self.interval,
                "scrape_timeout": self.interval,
                "evaluation_interval": self.interval,
            },
            "rule_files": [str(p) for p in self.rule_files],
            "scrape_configs": [{"job_name": self.job, "static_configs": [static]}],
        }
        if self.alertmanagers:
            cfg["alerting"] = {
                "alertmanagers": [{"static_configs": [{"targets": list(self.alertmanagers)}]}]
            }
        return cfg

    def start(self, timeout: float = 60.0) -> Prometheus:
        exe = binary("prometheus", "prometheus")
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "prometheus.yml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        args = [
            exe,
            f"--config.file={config}",
            f"--storage.tsdb.path={self.workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--log.level=warn",
        ]
        self.server = Server("prometheus", args, self.workdir / "prometheus.log").start()
        wait_until(
            "Prometheus /-/ready",
            lambda: _ready(self.server, self.url + "/-/ready"),
            timeout,
            interval=0.2,
            detail=self.server.output,
        )
        return self

    def api(self, path: str, *params: tuple[str, str]) -> Any:
        body = get_json(f"{self.url}/api/v1/{path}", params)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = [("query", expr)] + ([("time", f"{at:.3f}")] if at is not None else [])
        data = self.api("query", *params)
        assert data["resultType"] in ("vector", "matrix"), data
        return list(data["result"])

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[Any]:
        params = [("query", expr), ("start", f"{start:.3f}"), ("end", f"{end:.3f}")]
        return list(self.api("query_range", *params, ("step", f"{step:g}"))["result"])

    def label_values(self, label: str, selector: str, start: float, end: float) -> list[str]:
        params = [("match[]", selector), ("start", f"{start:.3f}"), ("end", f"{end:.3f}")]
        return list(self.api(f"label/{label}/values", *params))

    def groups(self) -> list[dict[str, Any]]:
        return list(self.api("rules")["groups"])

    def rules(self) -> list[dict[str, Any]]:
        return [rule for group in self.groups() for rule in group["rules"]]

    def alerts(self) -> list[dict[str, Any]]:
        return list(self.api("alerts")["alerts"])

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


@dataclass
class Alertmanager:
    """/usr/bin/prometheus-alertmanager, clustering off, every alert routed to `webhook`."""

    workdir: Path
    webhook: str
    group_by: Sequence[str] = ("alertname", "service", "prompt_version")
    group_wait: str = "1s"
    group_interval: str = "2s"
    port: int = field(default_factory=free_port)
    server: Server | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def config(self) -> dict[str, Any]:
        return {
            "route": {
                "receiver": "webhook",
                "group_by": list(self.group_by),
                "group_wait": self.group_wait,
                "group_interval": self.group_interval,
                "repeat_interval": "1h",
            },
            "receivers": [
                {"name": "webhook", "webhook_configs": [{"url": self.webhook}]},
            ],
        }

    def start(self, timeout: float = 60.0) -> Alertmanager:
        exe = binary("prometheus-alertmanager", "prometheus-alertmanager")
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "alertmanager.yml"
        config.write_text(yaml.safe_dump(self.config(), sort_keys=False))
        args = [
            exe,
            f"--config.file={config}",
            f"--storage.path={self.workdir / 'data'}",
            f"--web.listen-address={self.address}",
            "--cluster.listen-address=",  # a single instance: no gossip port
            "--log.level=warn",
        ]
        self.server = Server("alertmanager", args, self.workdir / "alertmanager.log").start()
        wait_until(
            "Alertmanager /-/ready",
            lambda: _ready(self.server, self.url + "/-/ready"),
            timeout,
            interval=0.2,
            detail=self.server.output,
        )
        return self

    def alerts(self) -> list[dict[str, Any]]:
        return list(get_json(self.url + "/api/v2/alerts"))

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


class WebhookReceiver:
    """A loopback HTTP server (a thread) keeping every JSON body POSTed to it."""

    def __init__(self) -> None:
        self._payloads: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver._payloads.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/alertmanager"

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def payloads(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._payloads)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- Grafana ------------------------------------------------------------------------------
def _go_duration(seconds: int) -> str:
    """Go's time.Duration.String() for whole seconds: 4s, 1m0s, 1h30m0s."""
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{s}s"
    return f"{m}m{s}s" if m else f"{s}s"


def _grafana_duration(seconds: int) -> str:
    """Grafana's FormatDuration for whole seconds: the largest unit that divides it."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class GrafanaTime:
    """A dashboard time range and its intervals as Grafana's Prometheus data source computes
    them: `$__interval` = range / max data points, not below the data source's scrape
    interval ("min interval"); the query step is that interval; `$__rate_interval` =
    max($__interval + step, 4 * step). Whole seconds (Grafana rounds to "nice" intervals;
    at a 1 s scrape interval and a range of minutes both give the scrape interval)."""

    start: float
    end: float
    scrape_s: int = 1
    max_data_points: int = 1000

    @property
    def range_s(self) -> float:
        return self.end - self.start

    @property
    def interval_s(self) -> int:
        return max(math.ceil(self.range_s / self.max_data_points), self.scrape_s)

    @property
    def step_s(self) -> int:
        return self.interval_s

    @property
    def rate_interval_s(self) -> int:
        return max(self.interval_s + self.step_s, 4 * self.step_s)

    def builtins(self) -> dict[str, str]:
        return {
            "__rate_interval_ms": str(self.rate_interval_s * 1000),
            "__rate_interval": _go_duration(self.rate_interval_s),
            "__interval_ms": str(self.interval_s * 1000),
            "__interval": _grafana_duration(self.interval_s),
            "__range_ms": str(round(self.range_s * 1000)),
            "__range_s": str(round(self.range_s)),
            "__range": f"{round(self.range_s)}s",
        }


def grafana_expr(expr: str, variables: Mapping[str, str], when: GrafanaTime) -> str:
    """`expr` as Grafana sends it to Prometheus: the built-in interval and range variables,
    then the dashboard's template variables (`$name`, `${name}`, `[[name]]`), whose values
    the caller gives as Grafana renders them (a multi-value variable on "All" is its
    allValue, `.*`). An unknown variable fails."""
    values = {**when.builtins(), **variables}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        assert name in values, f"no value for dashboard variable ${name} in {expr!r}"
        return values[name]

    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)", sub, expr)


def panel_targets(board: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) for every query of every panel that is not a row."""
    for panel in board["panels"]:
        if panel["type"] != "row":
            for target in panel.get("targets", []):
                yield panel, target
