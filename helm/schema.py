"""Write the settings model's JSON Schema into the chart: `python helm/schema.py [--check]`.

The chart's values.schema.json is hand-written for the chart's own values (image, probes,
sidecar, ...) and generated for `config`, which the chart renders verbatim as config.yaml:
its schema is `ragpulse config --schema`, so a misspelt or out-of-range setting fails at
`helm install` / `helm template`, naming its path, instead of in a crash-looping pod.
`--check` exits 1 when the file is not what the settings model gives (tests/helm runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).resolve().parent / "ragpulse" / "values.schema.json"


#: where a pod is stricter than the process: port 0 (any free port, for tests and the
#: demo) cannot be reached by the Service, the probes or a port-forward
CHART_ONLY: dict[tuple[str, ...], dict[str, Any]] = {
    ("server", "port"): {"minimum": 1},
    ("server", "admin", "port"): {"minimum": 1},
}


def _tighten(schema: dict[str, Any], path: tuple[str, ...], extra: dict[str, Any]) -> None:
    node = schema
    for name in path:
        node = node["properties"][name]
    for option in node.get("anyOf", [node]):  # `int | None`: the integer branch
        if option.get("type") == "integer":
            option.update(extra)


def generated(current: dict[str, Any]) -> dict[str, Any]:
    """`current` with `properties.config` replaced by the settings schema."""
    from stream.runtime.settings_schema import settings_json_schema

    config = settings_json_schema()
    for path, extra in CHART_ONLY.items():
        _tighten(config, path, extra)
    props = dict(current["properties"])
    props["config"] = config
    return {**current, "properties": props}


def render(current: dict[str, Any]) -> str:
    return json.dumps(generated(current), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python helm/schema.py", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(SCHEMA.parents[2]))  # run from anywhere in a checkout
    text = SCHEMA.read_text(encoding="utf-8")
    fresh = render(json.loads(text))
    if args.check:
        if fresh != text:
            print(f"{SCHEMA} is stale: run python helm/schema.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
