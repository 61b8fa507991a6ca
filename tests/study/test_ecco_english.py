"""English ECCO names: every code A00-E48 named from its Chinese name by the term table (study/ecco.py)."""

from __future__ import annotations

import re

import pytest

from xiangqi.study.ecco import classify, code_names, code_names_en, english_name, name_en


def test_every_code_has_an_english_name_without_chinese_left():
    en = code_names_en()
    assert en.keys() == code_names().keys() and len(en) == 260
    for code, text in en.items():
        assert text and not re.search(r"[\u3000-\u9fff\uff00-\uffef]", text), (code, text)
        assert "  " not in text and not text.startswith((",", " ")) and ", ," not in text


@pytest.mark.parametrize(("code", "english"), [
    ("A00", "Other Openings"),
    ("A10", "Elephant Opening"),
    ("A40", "Horse Opening"),
    ("A50", "Palcorner Cannon Opening"),
    ("B00", "Central Cannon Opening"),
    ("C00", "Central Cannon vs Screen Horses"),
    ("C30", "Central Cannon, River-Crossing Rook, Both Seventh Pawns vs Screen Horses"),
    ("D00", "Same-Direction Cannons, Delayed Rook vs Other Defences"),
    ("D50", "Central Cannon vs Opposite-Direction Cannons"),
    ("E00", "Pawn Opening"),
    ("E40", "Facing Pawns Opening"),
    ("B31", "Central Cannon vs Reverse Palace Horses"),
    ("C90", "Five-Eight Cannons vs Screen Horses"),
])
def test_pinned_names(code, english):
    assert name_en(code) == english


def test_variations_and_sides():
    # 中炮过河车七路马对屏风马两头蛇：红左横车兑三兵对黑高右炮
    assert name_en("C23") == ("Central Cannon, River-Crossing Rook, Seventh-File Horse vs Screen Horses, "
                              "Two-Headed Snake: Red Left Horizontal Rook, Third Pawn Exchange "
                              "vs Black Raised Right Cannon")
    assert english_name("仙人指路对中炮") == "Pawn Opening vs Central Cannon"
    assert english_name("飞相转屏风马对左中炮") == "Elephant to Screen Horses vs Left Central Cannon"
    fish = "鱼"  # no term for it
    with pytest.raises(ValueError, match=f"no English term for '{fish}'"):
        english_name(f"中炮对{fish}")
    with pytest.raises(KeyError):
        name_en("A09")


def test_classified_opening_in_english():
    found = classify(["h2e2", "h9g7"])
    assert (found.code, name_en(found.code)) == ("B05", "Central Cannon vs Left Horse")
