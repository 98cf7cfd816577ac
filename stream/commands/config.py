"""`ragpulse config`: the effective configuration (secrets masked), its reference table and
its JSON Schema."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stream.runtime.settings import Settings, settings_reference

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    c = sub.add_parser("config", help="show the effective configuration, secrets masked")
    what = c.add_mutually_exclusive_group(required=True)
    what.add_argument("--print", action="store_true", help="print the effective configuration")
    what.add_argument("--reference", action="store_true", help="every setting as a table")
    what.add_argument(
        "--schema", action="store_true", help="the settings as JSON Schema (the chart's config)"
    )
    c.add_argument("--format", choices=["yaml", "json"], default="yaml")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.reference:
        print("| setting | environment variable | default | meaning |")
        print("|---|---|---|---|")
        print("\n".join(settings_reference()))
        return 0
    if args.schema:
        from stream.runtime.settings_schema import settings_json_schema

        print(json.dumps(settings_json_schema(), indent=2))
        return 0
    import yaml

    from stream.runtime.preflight import preflight

    preflight(settings)  # what `run` would refuse, `config --print` refuses too
    data = settings.masked()
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0
