"""Performance benchmarks (issue 7): see BENCHMARKS.md for the commands and results."""
