"""Judge metrics, windowed aggregates and drift detectors (sampled turns): later milestones."""

__all__: list[str] = []
