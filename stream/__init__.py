"""ragpulse's stream side, in layers (docs/architecture.md):

- ``stream.contract``: the event contract every package shares (leaf; imports nothing of ours);
- ``stream.runtime``: settings, the pipeline, the sampler, the engines and their parts;
- ``stream.commands`` and ``stream.cli``: the command line on top;
- ``stream.demo``: the demo world (traffic generator, embedded broker, ``ragpulse demo``).

This package imports nothing, so importing the contract pulls in nothing else.
"""
