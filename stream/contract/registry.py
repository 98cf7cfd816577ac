"""One name → factory registry, shared by every extension point.

Detectors, drift detectors, judge metrics and judges are each registered by name with a
class decorator (``@register_detector("pii")``), so config and Helm values can name them
by string. This is the one implementation behind those decorators: duplicate names are
refused, unknown names and bad options fail with a message that lists what is available.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Registry"]

P = TypeVar("P")  # what a factory builds
T = TypeVar("T")


class Registry(Generic[P]):
    """Factories of one kind (``kind`` names it in error messages), keyed by name."""

    def __init__(self, kind: str, *, set_name: bool = True) -> None:
        self.kind = kind
        self._set_name = set_name
        self._factories: dict[str, Callable[..., P]] = {}

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        """Class decorator: register ``cls`` under ``name`` (and set ``cls.name``)."""

        def wrap(cls: type[T]) -> type[T]:
            if name in self._factories:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            if self._set_name:
                cls.name = name  # type: ignore[attr-defined]
            self._factories[name] = cls  # type: ignore[assignment]
            return cls

        return wrap

    def available(self) -> list[str]:
        return sorted(self._factories)

    def factory(self, name: Any) -> Callable[..., P]:
        factory = self._factories.get(name) if isinstance(name, str) else None
        if factory is None:
            raise ValueError(
                f"unknown {self.kind} {name!r}; available: {', '.join(self.available())}"
            )
        return factory

    def create(self, name: str, **options: Any) -> P:
        """Build ``name`` with ``options``, the one way every extension point builds.

        Options are checked against the factory's signature first, so an unknown one is
        named (with the accepted ones) before anything runs; a ValueError or TypeError the
        factory raises on a bad value comes back as a ValueError naming the options given.
        """
        factory = self.factory(name)
        sig = inspect.signature(factory).parameters.values()
        names = {p.name for p in sig if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        unknown = sorted(set(options) - names)
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in sig):
            raise ValueError(
                f"{self.kind} {name!r}: unknown option(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(sorted(names)) or 'none'}"
            )
        try:
            return factory(**options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{self.kind} {name!r}: bad options {dict(options)}: {exc}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._factories
