"""Finding A (second half): no product module runs Python's backtracking `re`.

Python's `re` backtracks: a pattern such as ``\\s*(.*?)\\s*```$`` costs quadratic time on
a hostile text (9 s for a 30,000-character judge reply, holding the GIL). Text from the
outside (events, judge replies, config) goes through RE2 (`detectors.regex`) or plain
string operations. This test scans the source of every module of the product packages
(AST: `import re`, `import re as x`, `from re import …`, `importlib.import_module("re")`,
`__import__("re")`) and keeps `monitors.evaluation.rewrites`, which lost its regex,
giving the same rewrites as before.
"""

from __future__ import annotations

import ast
import re  # the reference implementation of the old rewrites, below; tests may use it
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from monitors.evaluation.rewrites import SYNONYMS, paraphrase

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("stream", "monitors", "detectors", "exporters")


def _imports_re(tree: ast.AST) -> list[int]:
    """Line numbers where `tree` imports Python's `re` (or a submodule of it)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name == "re" or a.name.startswith("re.") for a in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module == "re" or (node.module or "").startswith("re.")):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0] if node.args else None
            if (
                name in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and first.value in ("re", "sre_compile", "sre_parse")
            ):
                lines.append(node.lineno)
    return lines


def _product_modules() -> list[Path]:
    return sorted(p for pkg in PRODUCT for p in (REPO / pkg).rglob("*.py"))


def test_the_scan_sees_every_form_of_import() -> None:
    sources = [
        "import re",
        "import re as regex",
        "import os, re",
        "from re import compile",
        "from re import DOTALL as D",
        "import importlib\nimportlib.import_module('re')",
        "from importlib import import_module\nimport_module('re')",
        "__import__('re')",
        "def f():\n    import re\n    return re",
    ]
    for source in sources:
        assert _imports_re(ast.parse(source)), source
    for source in ("import re2", "from detectors import regex", "import regex", "x = 're'"):
        assert not _imports_re(ast.parse(source)), source


def test_no_product_module_imports_python_re() -> None:
    modules = _product_modules()
    assert len(modules) > 100  # the scan found the packages
    found = {
        str(path.relative_to(REPO)): lines
        for path in modules
        if (lines := _imports_re(ast.parse(path.read_text(encoding="utf-8"), str(path))))
    }
    assert found == {}, f"Python re imported (use RE2 / string operations): {found}"


# --- the rewrites, before (Python re) and after (string operations) ---------------------

_OLD_WORD = re.compile(
    r"\b(" + "|".join(map(re.escape, sorted(SYNONYMS, key=len, reverse=True))) + r")\b",
    re.IGNORECASE,
)


def _old_synonyms(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        new = SYNONYMS[word.lower()]
        return new[0].upper() + new[1:] if word[0].isupper() else new

    return _OLD_WORD.sub(swap, text)


_PIECES = [*SYNONYMS, *(k.upper() for k in SYNONYMS), *(k.title() for k in SYNONYMS)]
_PIECES += [" ", "  ", ".", ",", "'", "_", "-", "x", "é", "1", "\n", "ß", "Σ"]
_PIECES += ["\u212a", "\u017f", "\u0130"]  # Kelvin sign, long s, dotted capital I


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_synonyms_rewrite_is_the_same_as_with_python_re(text: str) -> None:
    try:
        expected = _old_synonyms(text)
    except KeyError:  # Python re folded a letter str.lower() does not (long s): it crashed
        return
    assert paraphrase(text, "synonyms") == expected


def test_synonyms_rewrite_examples() -> None:
    text = "However, many people use it. It is quick; the whole method helps because it's easy."
    assert (
        paraphrase(text, "synonyms")
        == _old_synonyms(text)
        == (
            "Nevertheless, numerous individuals employ it. It's fast; the entire approach assists "
            "since it's simple."
        )
    )
    assert paraphrase("Use_it reuse user USE", "synonyms") == "Use_it reuse user Employ"
    odd = "u\u017fe \u0130t is"  # long s, dotted capital I: Python re folded them, then crashed
    assert paraphrase(odd, "synonyms") == odd
    assert paraphrase("ma\u212ae", "synonyms") == "create"  # Kelvin sign: lower() is k
