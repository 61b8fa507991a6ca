"""Shared test helpers: paths to the project's own test data."""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).parent / "data"


def read_tsv(name: str) -> list[dict[str, str]]:
    """Rows of tests/data/<name> as dicts keyed by the header line."""
    with open(DATA / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))
