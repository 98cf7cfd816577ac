"""One module per `ragpulse` subcommand; `stream.cli` only parses and dispatches.

Every command module has `add_parser(sub)` (its argparse subparser) and
`run(settings, args) -> int` (its exit code): `run`, `score`, `demo`, `broker`, `config`,
`rules`, `dashboards`, `traffic`, and the offline evaluation commands `eval`, `calibrate`,
`qualify` and `weights` (docs/evaluation.md). `stream.commands.args` holds the argument
types and report helpers they share. The modules are light: the code that does the work
(the runtime, the demo, `eval_run`, `calibrate_run`, `qualify_run`, `weights_run`, and
`monitors.evaluation` with scipy and scikit-learn behind it) is imported inside `run`, so
`ragpulse run` never loads the offline code (`tests/stream/runtime/test_import_floor.py`).
Importing this package loads nothing.
"""

__all__: list[str] = []  # the submodules are the API
