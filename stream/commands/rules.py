"""`ragpulse rules export`: the Prometheus alert rules generated from the `alerts` settings."""

from __future__ import annotations

import argparse
from typing import Any

from stream.commands.args import write_output
from stream.runtime.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    r = sub.add_parser("rules", help="Prometheus alert rules generated from the alerts settings")
    r_sub = r.add_subparsers(dest="action", required=True)
    re_ = r_sub.add_parser("export", help="write the rules")
    re_.add_argument("--format", choices=["rule-file", "prometheusrule"], default="rule-file")
    re_.add_argument("--output", "-o", default="-", help="file, or - for stdout")
    re_.add_argument("--name", default="ragpulse", help="PrometheusRule metadata.name")
    re_.add_argument("--namespace", default=None, help="PrometheusRule metadata.namespace")


def run(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.rules import render_prometheus_rule, render_rule_groups, to_yaml

    if args.format == "prometheusrule":
        doc = render_prometheus_rule(
            settings.alerts, name=args.name, namespace=args.namespace, slos=settings.slos
        )
    else:
        doc = render_rule_groups(settings.alerts, settings.slos)
    write_output(to_yaml(doc), args.output)
    return 0
