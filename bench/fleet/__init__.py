"""Fleet ownership mechanisms (faust table vs plain aiokafka group): `python -m bench.fleet.mechanism`."""
