"""The tests of the benchmark code: the product tests' broker fixture, and all of them in
the slow end-to-end tier (`-m e2e`; `make test-fast` leaves them out, `make test` runs them)."""

from __future__ import annotations

from pathlib import Path

import pytest

# the product tests' session broker and in-process retry setting (tests/conftest.py)
from tests.conftest import _no_retry_backoff as _no_retry_backoff
from tests.conftest import broker as broker

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
