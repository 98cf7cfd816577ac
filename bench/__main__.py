"""The benchmark harness (issue 7): `python -m bench all` writes BENCHMARKS.md + results.

    python -m bench all [--runs 5] [--smoke]
    python -m bench throughput|breakdown|latency|memory|scaling|detectors|economy|summary
        [--runs N] [--smoke]

Every subcommand is a module `bench.perf.<name>` with `main(argv) -> int` that accepts
`--runs N` and `--smoke`, writes its raw numbers under bench/results/ and replaces its
own marked section of BENCHMARKS.md (`bench.perf.mdsection.replace_section`). A module
that is not there is skipped with a message (the exit code stays 0 for `all`).
`--smoke` is a seconds-long run that keeps the harness working (CI); it is not a
measurement and says so in its output.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

SECTIONS = (
    "throughput", "breakdown", "latency", "memory", "scaling", "detectors", "economy", "summary",
)  # fmt: skip


def _module_main(name: str) -> object | None:
    try:
        module = importlib.import_module(f"bench.perf.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"bench.perf.{name}", "bench.perf"):
            return None
        raise
    return getattr(module, "main", None)


def run_section(name: str, runs: int, smoke: bool, extra: list[str]) -> int:
    main = _module_main(name)
    if main is None or not callable(main):
        print(f"bench {name}: skipped (bench/perf/{name}.py with main(argv) is not there)")
        return 0
    argv = ["--runs", str(runs), *(["--smoke"] if smoke else []), *extra]
    started = time.monotonic()
    print(f"bench {name}: {' '.join(argv)}", flush=True)
    code = int(main(argv) or 0)
    print(f"bench {name}: exit {code} in {time.monotonic() - started:.1f}s", flush=True)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    p.add_argument("section", choices=("all", *SECTIONS))
    p.add_argument("--runs", type=int, default=5, help="repetitions per figure (default 5)")
    p.add_argument("--smoke", action="store_true", help="seconds-long run, not a measurement")
    args, extra = p.parse_known_args(argv)  # extra options go to a single section only
    if args.section != "all":
        return run_section(args.section, args.runs, args.smoke, extra)
    failed = [s for s in SECTIONS if run_section(s, args.runs, args.smoke, []) != 0]
    if failed:
        print(f"bench all: failed sections: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
