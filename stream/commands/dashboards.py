"""`ragpulse dashboards export`: the Grafana dashboard JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stream.commands.args import write_output
from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    g = sub.add_parser("dashboards", help="the Grafana dashboard")
    g_sub = g.add_subparsers(dest="action", required=True)
    ge = g_sub.add_parser("export", help="write the dashboard JSON")
    ge.add_argument("--output", "-o", default="-", help="file, or - for stdout")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.dashboard import render_dashboard

    write_output(json.dumps(render_dashboard(settings.alerts), indent=2) + "\n", args.output)
    return 0
