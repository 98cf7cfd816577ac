"""`python -m bench.quality.injection_canaries --base-url URL --model M [--api-key-env VAR]`:
the injection canary suite against a real judge. The suite (its canaries,
tests/support/injection_canaries.jsonl, and the runner) is test support, shared with
tests/security/test_prompt_injection.py: ``tests.support.injection_canaries``."""

from __future__ import annotations

import sys

from tests.support.injection_canaries import main

if __name__ == "__main__":
    sys.exit(main())
