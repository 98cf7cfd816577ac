"""`ragpulse run` with the default engine keeps heavy offline-only libraries out of memory.

On top of the `ragpulse run` imports, scipy.stats adds ~62 MiB of RSS, sklearn.metrics
~14 MiB, faust ~14 MiB and httpx (the OpenAI judge's client, with click, rich and pygments)
~5 MiB; each check runs in a fresh interpreter, since the test session
itself imports them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "sklearn", "matplotlib", "faust", "httpx")  # httpx: the OpenAI judge's
#: the `eval` / `calibrate` code: imported only when those subcommands run
OFFLINE = (
    "stream.commands.eval_run",
    "stream.commands.calibrate_run",
    "stream.commands.qualify_run",
    "stream.commands.weights_run",
    "monitors.evaluation",
)

_RUN = f"""
import json, random, sys
HEAVY = {HEAVY!r} + {OFFLINE!r}
import stream.cli
from exporters import PromFamilies
from stream.runtime.settings import load_settings
from stream.runtime.factory import build_sidecar
from monitors.drift import create_drift_detector
s = load_settings(judge={{"backend": "none"}}, engine=sys.argv[1])
sidecar = build_sidecar(s, PromFamilies.with_label_caps(s.labels.max_values, s.labels.allow))
# the default rate detector, past its reference window and through a detection
det = create_drift_detector({{"type": "proportion"}})
rng = random.Random(3)
detected = False
for i in range(6000):
    det.update(1.0 if rng.random() < (0.02 if i < 3000 else 0.2) else 0.0)
    detected = detected or det.drift_detected
print(json.dumps({{"engine": type(sidecar).__name__, "detected": detected,
                  "loaded": [m for m in HEAVY if m in sys.modules]}}))
"""


def _run(engine: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, engine], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_default_aiokafka_sidecar_imports_no_offline_library() -> None:
    result = _run("aiokafka")
    assert result["engine"] == "AiokafkaSidecar"
    assert result["detected"] is True  # the proportion test ran, without scipy
    assert result["loaded"] == []


def test_faust_engine_still_loads_faust() -> None:
    result = _run("faust")
    assert result["engine"] == "FaustSidecar"
    assert result["loaded"] == ["faust"]
