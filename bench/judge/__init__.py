"""Judge-path benchmarks: gate floors of the embedded judge, judge-path saturation."""
