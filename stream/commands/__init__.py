"""The offline subcommands `eval`, `calibrate`, `qualify` and `weights fit`
(docs/evaluation.md).

`stream.commands.eval` and `stream.commands.adams_args` hold their parsers and entry
points, `stream.commands.args` the small argument types every parser shares. The code
that does the work (`stream.commands.evaluate`, `calibrate`, `qualify`, `weights`, and
`monitors.evaluation` with
scipy and scikit-learn behind it) is imported inside the entry points, so `ragpulse run`
never loads it. Importing this package loads nothing.
"""

__all__: list[str] = []  # the submodules are the API
