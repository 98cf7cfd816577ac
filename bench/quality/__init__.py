"""Quality benchmarks: detectors and judges measured on labelled public data."""
