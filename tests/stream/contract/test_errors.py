"""Every error the product defines sits under one root, RagpulseError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from stream.contract import RagpulseError

PACKAGES = ("stream", "detectors", "monitors", "exporters")
#: raised to look like the broker's own refusal, so the producer's handling of a real
#: MESSAGE_SIZE_TOO_LARGE covers it: a Kafka error by design
KAFKA_SHAPED = {"stream.runtime.record_size.InvalidRecordError"}


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if (
                    inspect.isclass(obj)
                    and issubclass(obj, BaseException)
                    and obj.__module__ == info.name
                    and not name.startswith("_")
                ):
                    found[f"{info.name}.{name}"] = obj
    return found


def test_every_public_error_is_a_ragpulse_error() -> None:
    errors = _error_classes()
    assert len(errors) >= 8  # ConfigError, InvalidEvent, JudgeError, PackError, ...
    stray = sorted(n for n, c in errors.items() if not issubclass(c, RagpulseError))
    assert stray == sorted(KAFKA_SHAPED), stray


def test_the_old_bases_still_catch_them() -> None:
    from detectors._policy_packs import PackError
    from monitors.judges.embedded_encoder import EmbeddedJudgeUnavailable
    from stream.runtime.settings import ConfigError

    assert issubclass(PackError, ValueError) and issubclass(PackError, RagpulseError)
    assert issubclass(EmbeddedJudgeUnavailable, ImportError)
    try:
        raise ConfigError("kafka.bootstrap_servers: expected host:port")
    except RagpulseError as exc:
        assert "bootstrap_servers" in str(exc)
