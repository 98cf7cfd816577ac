"""Judge metrics, windowed aggregates and drift detectors (sampled turns). Filled by later issues."""

__all__: list[str] = []
