"""The demo world: seeded RAG traffic, an embedded Kafka-protocol broker, ``ragpulse demo``.

Public API (what the CLI, the benchmarks and the tests use):

- :func:`generate` and :func:`write_jsonl` / :func:`write_truth` / :func:`write_dataset`:
  the seeded traffic with its ground truth (:class:`Generated`, :data:`FAILURE_MODES`,
  :data:`MALFORMED_KINDS`), from :mod:`stream.demo.traffic`;
- :class:`EmbeddedBroker` and :func:`free_port`: the Tansu broker on loopback, and
  :func:`serve_broker`, `ragpulse broker` (:mod:`stream.demo.broker`);
- :func:`run_demo`: broker + traffic + the real sidecar (:mod:`stream.demo.run`), imported
  on first use, so ``from stream.demo import free_port`` stays light.

The generator's text is data: YAML phrase banks under ``stream/demo/phrases/``, read by
:mod:`stream.demo.phrases`. The demo sits on top of ``stream.runtime`` and the exporters,
monitors and detectors; nothing below it imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stream.demo.broker import EmbeddedBroker, free_port, serve_broker
from stream.demo.traffic import (
    FAILURE_MODES,
    MALFORMED_KINDS,
    Generated,
    generate,
    write_dataset,
    write_jsonl,
    write_truth,
)

if TYPE_CHECKING:
    from stream.demo.run import run_demo

__all__ = [
    "FAILURE_MODES",
    "MALFORMED_KINDS",
    "EmbeddedBroker",
    "Generated",
    "free_port",
    "generate",
    "run_demo",
    "serve_broker",
    "write_dataset",
    "write_jsonl",
    "write_truth",
]


def __getattr__(name: str) -> Any:
    if name == "run_demo":  # aiokafka, the runtime and the exporters: only when asked for
        from stream.demo.run import run_demo

        return run_demo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
