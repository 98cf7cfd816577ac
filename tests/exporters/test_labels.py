from exporters.labels import LabelCap


def test_top_n_then_other() -> None:
    cap = LabelCap(max_values=2)
    assert [cap(v) for v in ["a", "b", "c", "a", None, ""]] == [
        "a",
        "b",
        "other",
        "a",
        "unknown",
        "unknown",
    ]


def test_allow_list() -> None:
    cap = LabelCap(max_values=100, allow=["gpt-x"])
    assert cap("gpt-x") == "gpt-x"
    assert cap("other-model") == "other"


def test_long_values_never_become_labels() -> None:
    assert LabelCap()("x" * 65) == "other"
