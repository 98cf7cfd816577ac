"""Test support shared by the product tests (tests/) and the benchmarks (bench/): the
sidecar subprocess wrapper, the llama.cpp server, the fleet harness, the dataset adapters,
the frozen-verdict corpora and the injection canaries. Imports product code only, never
``bench``."""
