"""`python -m bench.perf.verdicts [--write] [--stage first|deflection|all]`: recompute (and
with ``--write`` re-freeze) the detector verdicts of tests/detectors/data/verdicts.json.gz
(the default detectors) or deflection_verdicts.json.gz (the opt-in learned stage alone).
The code is test support: ``tests.support.verdicts``."""

from __future__ import annotations

import sys

from tests.support.verdicts import main

if __name__ == "__main__":
    sys.exit(main())
