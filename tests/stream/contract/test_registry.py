"""One creation behaviour behind every extension point: options checked, then built."""

from __future__ import annotations

import pytest

from stream.contract.registry import Registry


def test_unknown_option_is_named_before_the_factory_runs() -> None:
    built: list[int] = []
    reg: Registry[object] = Registry("widget")

    @reg.register("w")
    class Widget:
        def __init__(self, size: int = 1) -> None:
            built.append(size)

    with pytest.raises(ValueError, match=r"widget 'w': unknown option\(s\) colour; accepted: size"):
        reg.create("w", colour="red")
    assert built == []  # nothing ran
    assert isinstance(reg.create("w", size=3), Widget) and built == [3]
    assert Widget.name == "w"  # type: ignore[attr-defined]


def test_bad_values_and_unknown_names_come_back_as_value_errors() -> None:
    reg: Registry[object] = Registry("widget")

    @reg.register("w")
    class Widget:
        def __init__(self, size: int = 1) -> None:
            if size <= 0:
                raise ValueError("size must be positive")

    with pytest.raises(ValueError, match=r"bad options \{'size': 0\}: size must be positive"):
        reg.create("w", size=0)
    with pytest.raises(ValueError, match="bad options"):
        reg.create("w", size="big")  # TypeError inside the constructor
    with pytest.raises(ValueError, match="unknown widget 'v'; available: w"):
        reg.create("v")
    with pytest.raises(ValueError, match="already registered"):
        reg.register("w")(Widget)
