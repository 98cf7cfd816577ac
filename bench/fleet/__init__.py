"""Fleet ownership mechanisms (faust table vs plain aiokafka group).

`python -m bench.fleet.mechanism`; the results are in docs/architecture.md.
"""
