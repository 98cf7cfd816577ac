"""`python -m bench.datasets`: the command line of the dataset adapters, which live in
``tests.support.datasets`` (the frozen-verdict test reads the data sets through them too)."""
