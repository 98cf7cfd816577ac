"""``python -m bench.datasets NAME --split dev|test|all -o events.jsonl [--labels FILE]``."""

from __future__ import annotations

import argparse
import json
import sys
from itertools import islice
from pathlib import Path

from tests.support.datasets import DATA, SPLITS, adapt, available, validate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.datasets", description=__doc__)
    ap.add_argument("name", choices=available())
    ap.add_argument("--split", choices=SPLITS, default="all")
    ap.add_argument("-o", "--output", type=Path, required=True, help="events JSONL")
    ap.add_argument(
        "--labels", type=Path, help='write {"event_id", "labels"} lines here; events get none'
    )
    ap.add_argument("--limit", type=int, help="first N events only")
    ap.add_argument("--data", type=Path, default=DATA, help="the shared datasets folder")
    args = ap.parse_args(argv)
    n = 0
    labels_fh = args.labels.open("w", encoding="utf-8") if args.labels else None
    try:
        with args.output.open("w", encoding="utf-8") as out:
            for raw in islice(adapt(args.name, args.split, args.data), args.limit):
                validate(raw)
                if labels_fh is not None:
                    row = {"event_id": raw["event_id"], "labels": raw.pop("labels")}
                    labels_fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.write(json.dumps(raw, ensure_ascii=False) + "\n")
                n += 1
    finally:
        if labels_fh is not None:
            labels_fh.close()
    print(f"{args.name} {args.split}: {n} events -> {args.output}", file=sys.stderr)
    if n == 0:
        print("no events in this split (FaithBench is all 'test')", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
