"""Drift detector benchmark: `python -m bench.drift [--seeds 50] [--json PATH]`."""
