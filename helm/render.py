"""Render the ragpulse chart without a `helm` binary: `python helm/render.py [-f values.yaml]
[--name RELEASE] [--namespace NS] [--notes]`, manifests (and optionally NOTES.txt) on stdout.

It uses Helm's own Go engine through `helm-python-sdk` (installed with ragpulse's dev
extras: `pip install -e ".[dev]"`), the same engine `pytest tests/helm` renders with, so
the output is what `helm template` prints. Values files are read with `yaml.safe_load`
and merged left to right, like `helm -f a.yaml -f b.yaml`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

CHART = Path(__file__).resolve().parent / "ragpulse"


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python helm/render.py", description=__doc__)
    parser.add_argument("-f", "--values", action="append", default=[], type=Path)
    parser.add_argument("--name", default="ragpulse", help="release name")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--notes", action="store_true", help="print NOTES.txt too")
    args = parser.parse_args(argv)
    try:
        import helm_python as helm
        import yaml
    except ImportError:
        print("needs helm-python-sdk: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    values: dict[str, Any] = {}
    for path in args.values:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            print(f"{path}: not a mapping of values", file=sys.stderr)
            return 2
        values = _merge(values, loaded)
    with helm.Chart.load(CHART) as chart:
        try:
            out = chart.render(values, name=args.name, namespace=args.namespace, is_install=True)
        except Exception as exc:  # the chart's own `fail` / schema errors, as helm prints them
            print(f"render failed: {exc}", file=sys.stderr)
            return 1
    for path in sorted(out):
        text = out[path]
        if path.endswith("NOTES.txt"):
            if args.notes:
                print(text, file=sys.stderr)
            continue
        if text.strip():
            print(f"---\n# Source: {path}\n{text.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
