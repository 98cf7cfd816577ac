"""The `ragpulse` command line: run, score, demo, config, traffic."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from exporters import Metrics
from exporters.otel import setup_otel
from exporters.prometheus import ragpulse_version
from stream.commands.adams_args import (
    add_qualify_parser,
    add_weights_parser,
    cmd_qualify,
    cmd_weights,
)
from stream.commands.args import rate
from stream.commands.eval import add_calibrate_parser, add_eval_parser, cmd_calibrate, cmd_eval
from stream.runtime.settings import ConfigError, Settings, load_settings, settings_reference

__all__ = ["main"]

log = logging.getLogger("ragpulse")


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


def _cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    from stream.runtime.factory import build_sidecar

    setup_otel()
    metrics = Metrics.with_label_caps(settings.labels.max_values, settings.labels.allow)
    sidecar = build_sidecar(settings, metrics)
    return asyncio.run(sidecar.run())


def _cmd_score(settings: Settings, args: argparse.Namespace) -> int:
    from stream.runtime.filesource import open_input, open_output, score_stream
    from stream.runtime.judging_build import build_judging, sampler_for
    from stream.runtime.pipeline import Pipeline

    settings.judge.type = args.judge  # offline scoring judges only when asked to
    if args.sample_rate is not None:
        settings.sampling.rate = args.sample_rate
    if not args.budget:  # a file has no wall-clock rate: a per-minute budget would only starve it
        settings.sampling.budget = settings.sampling.budget.model_copy(
            update={"calls_per_minute": None, "usd_per_hour": None}
        )
    judging = build_judging(settings)
    sampler = sampler_for(settings, judging)
    pipeline = Pipeline(settings, sampler=sampler)
    try:
        with open_input(args.input) as src, open_output(args.output) as dst:
            summary = score_stream(pipeline, src, dst, judging)
    except OSError as exc:
        print(f"ragpulse score: cannot open {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    finally:
        if judging is not None:
            judging.close(5)
    print(summary.render(), file=sys.stderr)
    return 0


def _cmd_demo(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import run_demo

    if args.port is not None:
        settings = settings.model_copy(
            update={"server": settings.server.model_copy(update={"port": args.port})}
        )
    return asyncio.run(run_demo(settings, args.duration, args.rate, args.degrade_after, args.seed))


def _cmd_config(settings: Settings, args: argparse.Namespace) -> int:
    if args.reference:
        print("| setting | environment variable | default | meaning |")
        print("|---|---|---|---|")
        print("\n".join(settings_reference()))
        return 0
    if args.schema:
        from stream.runtime.settings_schema import settings_json_schema

        print(json.dumps(settings_json_schema(), indent=2))
        return 0
    from stream.runtime.preflight import preflight

    preflight(settings)  # what `run` would refuse, `config --print` refuses too
    data = settings.masked()
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0


def _write(text: str, output: str) -> None:
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
        print(f"ragpulse: wrote {output}", file=sys.stderr)


def _cmd_rules(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.rules import render_prometheus_rule, render_rule_groups, to_yaml

    if args.format == "prometheusrule":
        doc = render_prometheus_rule(
            settings.alerts, name=args.name, namespace=args.namespace, slos=settings.slos
        )
    else:
        doc = render_rule_groups(settings.alerts, settings.slos)
    _write(to_yaml(doc), args.output)
    return 0


def _cmd_dashboards(settings: Settings, args: argparse.Namespace) -> int:
    from exporters.dashboard import render_dashboard

    _write(json.dumps(render_dashboard(settings.alerts), indent=2) + "\n", args.output)
    return 0


def _cmd_traffic(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import generate, write_jsonl, write_truth

    items = list(generate(args.count, seed=args.seed, phase=args.phase))
    write_jsonl(args.output, items)
    if args.truth:
        write_truth(args.truth, items)
    print(f"ragpulse traffic: wrote {len(items)} messages to {args.output}", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ragpulse", description=__doc__)
    p.add_argument("--version", action="version", version=f"ragpulse {ragpulse_version()}")
    p.add_argument("--config", "-c", help="YAML settings file (env RAGPULSE_* overrides it)")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("run", help="consume the input topic and serve /metrics (the sidecar)")

    s = sub.add_parser("score", help="score a JSONL file of events (offline twin of the stream)")
    s.add_argument("--input", "-i", required=True, help="events JSONL, or - for stdin")
    s.add_argument("--output", "-o", default="-", help="scorecards JSONL, or - for stdout")
    s.add_argument(
        "--judge",
        default="none",
        help="judge sampled events with: embedded, openai (judge.options) or none (default)",
    )
    s.add_argument(
        "--sample-rate", type=rate, help="share of conversations judged (default: sampling.rate)"
    )
    s.add_argument(
        "--budget",
        action="store_true",
        help="apply sampling.budget's calls/minute and $/hour caps (off by default offline)",
    )

    d = sub.add_parser("demo", help="embedded broker + bundled traffic + the real sidecar")
    d.add_argument("--duration", type=float, default=None, help="stop cleanly after N seconds")
    d.add_argument("--rate", type=float, default=25.0, help="events per second (default 25)")
    d.add_argument("--degrade-after", type=float, default=90.0, help="seconds of baseline traffic")
    d.add_argument("--port", type=int, default=None, help="metrics port (default server.port)")
    d.add_argument("--seed", type=int, default=7)

    b = sub.add_parser(
        "broker",
        help="a local Kafka-protocol broker for trying ragpulse (memory only, not production)",
    )
    b.add_argument("--port", type=int, default=9092, help="listen port (default 9092; 0: free)")
    b.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")

    c = sub.add_parser("config", help="show the effective configuration, secrets masked")
    what = c.add_mutually_exclusive_group(required=True)
    what.add_argument("--print", action="store_true", help="print the effective configuration")
    what.add_argument("--reference", action="store_true", help="every setting as a table")
    what.add_argument(
        "--schema", action="store_true", help="the settings as JSON Schema (the chart's config)"
    )
    c.add_argument("--format", choices=["yaml", "json"], default="yaml")

    r = sub.add_parser("rules", help="Prometheus alert rules generated from the alerts settings")
    r_sub = r.add_subparsers(dest="action", required=True)
    re_ = r_sub.add_parser("export", help="write the rules")
    re_.add_argument("--format", choices=["rule-file", "prometheusrule"], default="rule-file")
    re_.add_argument("--output", "-o", default="-", help="file, or - for stdout")
    re_.add_argument("--name", default="ragpulse", help="PrometheusRule metadata.name")
    re_.add_argument("--namespace", default=None, help="PrometheusRule metadata.namespace")

    g = sub.add_parser("dashboards", help="the Grafana dashboard")
    g_sub = g.add_subparsers(dest="action", required=True)
    ge = g_sub.add_parser("export", help="write the dashboard JSON")
    ge.add_argument("--output", "-o", default="-", help="file, or - for stdout")

    t = sub.add_parser("traffic", help="write the bundled traffic sample as JSONL")
    t.add_argument("--count", "-n", type=int, default=1000)
    t.add_argument("--output", "-o", required=True)
    t.add_argument("--truth", help="write the ground-truth failure modes here (JSONL)")
    t.add_argument("--phase", choices=["baseline", "degraded"], default="baseline")
    t.add_argument("--seed", type=int, default=7)
    add_eval_parser(sub)
    add_calibrate_parser(sub)
    add_qualify_parser(sub)
    add_weights_parser(sub)
    return p


def _cmd_broker(settings: Settings, args: argparse.Namespace) -> int:
    from stream.demo import serve_broker

    return serve_broker(args.port or None, args.host)


_COMMANDS = {
    "run": _cmd_run,
    "broker": _cmd_broker,
    "score": _cmd_score,
    "demo": _cmd_demo,
    "config": _cmd_config,
    "traffic": _cmd_traffic,
    "rules": _cmd_rules,
    "dashboards": _cmd_dashboards,
    "eval": cmd_eval,
    "calibrate": cmd_calibrate,
    "qualify": cmd_qualify,
    "weights": cmd_weights,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(args.config)
        _setup_logging(settings.log_level)
        return _COMMANDS[args.command](settings, args)
    except ConfigError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
