"""The Python examples in README.md and in the package docstring run as written."""

from __future__ import annotations

import doctest
from pathlib import Path

import xiangqi

ROOT = Path(__file__).parent.parent


def test_readme_examples() -> None:
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8
    assert result.failed == 0


def test_package_docstring_examples() -> None:
    result = doctest.testmod(xiangqi, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4
    assert result.failed == 0
