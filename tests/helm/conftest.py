"""Session fixtures: the ragpulse chart and the example RAG-service chart, loaded once."""

from __future__ import annotations

from collections.abc import Iterator

import helm_python as helm
import pytest

from tests.helm.manifests import CHART, example_chart


@pytest.fixture(scope="session")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


@pytest.fixture(scope="session")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[helm.Chart]:
    with example_chart(tmp_path_factory.mktemp("example")) as loaded:
        yield loaded
