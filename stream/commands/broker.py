"""`ragpulse broker`: a local Kafka-protocol broker for trying ragpulse (not production)."""

from __future__ import annotations

import argparse
from typing import Any

from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    b = sub.add_parser(
        "broker",
        help="a local Kafka-protocol broker for trying ragpulse (memory only, not production)",
    )
    b.add_argument("--port", type=int, default=9092, help="listen port (default 9092; 0: free)")
    b.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import serve_broker

    return serve_broker(args.port or None, args.host)
