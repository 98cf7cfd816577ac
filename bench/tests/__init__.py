"""Tests of the benchmark code (bench/); collected by the normal `pytest` run (testpaths)."""
