"""The `eval` and `calibrate` subcommands (docs/evaluation.md).

`stream.commands.eval` holds their parsers and entry points, `stream.commands.args` the
small argument types every parser shares. The code that does the work
(`stream.commands.evaluate`, `stream.commands.calibrate`, and `monitors.evaluation` with
scipy and scikit-learn behind it) is imported inside the entry points, so `ragpulse run`
never loads it. Importing this package loads nothing.
"""

__all__: list[str] = []  # the submodules are the API
