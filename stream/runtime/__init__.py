"""The running sidecar: settings, the per-event pipeline, the sampler and the engines.

The API is the submodules (importing this package loads none of them, so `ragpulse run`
pays only for what it uses):

- :mod:`~stream.runtime.settings`: the one settings model (`load_settings`, `Settings`);
- :mod:`~stream.runtime.pipeline`: `Pipeline.process(raw) -> Result`, shared by every source;
- :mod:`~stream.runtime.factory`: `build_sidecar(settings, metrics)`, the configured engine;
- :mod:`~stream.runtime.engine`: `SidecarBase`, what the engines share, composed of
  :mod:`~stream.runtime.router`, :mod:`~stream.runtime.serving`,
  :mod:`~stream.runtime.health`, :mod:`~stream.runtime.fleet` and
  :mod:`~stream.runtime.judge_bridge`;
- :mod:`~stream.runtime.engine_aiokafka` and :mod:`~stream.runtime.engine_faust`: the engines
  (private faust/aiokafka attributes only through :mod:`~stream.runtime.kafka_private`);
- :mod:`~stream.runtime.filesource`: scoring files and stdin (`ragpulse score`).
"""

__all__: list[str] = []  # the submodules above are the API
