"""The `ragpulse` command line: parses the arguments and dispatches to one module per
command in `stream.commands` (each has `add_parser(sub)` and `run(settings, args)`)."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

from exporters.prometheus import ragpulse_version
from stream.commands import (
    broker,
    calibrate,
    config,
    dashboards,
    demo,
    eval,
    qualify,
    rules,
    run,
    score,
    traffic,
    weights,
)
from stream.runtime.settings import ConfigError, load_settings

__all__ = ["COMMANDS", "main"]

log = logging.getLogger("ragpulse")

DESCRIPTION = "ragpulse: a streaming quality monitor for RAG services (run, score, demo, ...)"

#: subcommand name -> its module, in `ragpulse --help` order
COMMANDS: dict[str, ModuleType] = {
    "run": run,
    "score": score,
    "demo": demo,
    "broker": broker,
    "config": config,
    "rules": rules,
    "dashboards": dashboards,
    "traffic": traffic,
    "eval": eval,
    "calibrate": calibrate,
    "qualify": qualify,
    "weights": weights,
}


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    if level != "DEBUG":  # faust/aiokafka are chatty at INFO; keep our own lines readable
        for noisy in ("faust", "mode", "aiokafka", "kafka"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    # at every level: httpx logs each judge request with its full URL at INFO (query
    # string included: an APIM subscription key), httpcore its connection chatter at DEBUG
    for chatty in ("httpx", "httpcore"):
        logging.getLogger(chatty).setLevel(logging.WARNING)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragpulse", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"ragpulse {ragpulse_version()}")
    p.add_argument("--config", "-c", help="YAML settings file (env RAGPULSE_* overrides it)")
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return p


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    # a deprecated setting reads `ragpulse: warning: ...`, not a source line of ours
    print(f"ragpulse: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        settings = load_settings(args.config)
        _setup_logging(settings.log_level)
        code: int = COMMANDS[args.command].run(settings, args)
        return code
    except ConfigError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
