"""Normalising the free-form ``Date`` tags of game records to ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``.

Real files write dates in dozens of styles (the CCPD master games alone: ``1998.3.31``,
``1962年11月21日``, ``19521103``, ``1978-09-19``, ``2010-09-16 09:00``, ``15-6-2009``,
``10/31/1960``, ``83-7-24``, ``1959年7月``, ``1999年8月20日-25日``, ``19990925上午`` …).
:func:`normalise_date` reads them by these rules, in order:

1. Eight digits ``YYYYMMDD`` at the start (``19521103``, ``20090620-13：00``).
2. A four-digit year first, then up to two numbers (month, day) separated by any of
   ``. - / 年 月 日 。 、 · space``; anything after the day is ignored (times, ``上午``, a day range).
3. A four-digit year last (``15-6-2009``, ``10/31/1960``): with ``/`` the order is month/day
   (US style), with other separators day-month, unless a number above 12 shows the order.
4. Three short numbers ``A·B·C`` (one or two digits each) with ``/``: the year last, month first
   (US style, ``11/23/97``), day first when the first number is above 12 (``20/11/97``).
5. Three short numbers with any other separator (:func:`_short_date`): the year is first
   (``83-7-24``, ``97-11-19``, ``02.6.22``), as in nearly all of the corpus, except when the first
   number cannot be a two-digit year written as such but the last one can:
   - the last number has one digit (``01-2-4``): it cannot be a year, so the year is first;
   - the first number has one digit (``1-20-83``) or is 13–31 (a day, not a month) while the last has
     two digits (``26.5.01``, ``26.05.01``, from a 2001 event in Penang): the year is last, the day
     first (D.M.YY) unless the middle number is above 12 (M-D-YY, ``1-20-83`` → 1983-01-20).
   Two-digit years: 50–99 → 1950–1999, 00–49 → 2000–2049 (the corpus spans 1950–2013), so
   ``26.5.01`` is 2001-05-26, not 2026-05-01.

Month and day are checked against the calendar: a bad day keeps ``YYYY-MM``, a bad month keeps
``YYYY``. Anything else (no year: ``7.13``, ``11月11日``; a three-digit year) gives ``None``;
the raw text is always kept beside the normalised one.
"""

from __future__ import annotations

import datetime
import re

__all__ = ["normalise_date"]

_SEP = r"[.\-/年月日。、·．／－\s]"
_EIGHT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?!\d)")
_YEAR_FIRST = re.compile(rf"^(\d{{4}})(?:{_SEP}+(\d{{1,2}})(?!\d)(?:{_SEP}+(\d{{1,2}})(?!\d))?)?")
_YEAR_LAST = re.compile(rf"^(\d{{1,2}})({_SEP})(\d{{1,2}}){_SEP}(\d{{4}})(?!\d)")
_SHORT_LAST = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2})(?!\d)")
_SHORT_THREE = re.compile(rf"^(\d{{1,2}}){_SEP}+(\d{{1,2}}){_SEP}+(\d{{1,2}})(?!\d)")


def _full_year(yy: int) -> int:
    return 1900 + yy if yy >= 50 else 2000 + yy


def _compose(year: int, month: int | None, day: int | None) -> str | None:
    if not 1000 <= year <= 2999:
        return None
    if month is None or not 1 <= month <= 12:
        return f"{year:04d}"
    if day is not None:
        try:
            datetime.date(year, month, day)
        except ValueError:
            day = None
    return f"{year:04d}-{month:02d}" if day is None else f"{year:04d}-{month:02d}-{day:02d}"


def normalise_date(raw: str | None) -> str | None:
    """``raw`` (a ``Date`` tag) as ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``, or None when it names no year.

    >>> normalise_date("1998.3.31"), normalise_date("1959年7月"), normalise_date("10/31/1960")
    ('1998-03-31', '1959-07', '1960-10-31')
    """
    if not raw:
        return None
    s = raw.strip().translate(_FULLWIDTH)
    if not s or s.startswith("?"):
        return None
    m = _EIGHT.match(s)
    if m:
        return _compose(int(m[1]), int(m[2]), int(m[3]))
    m = _YEAR_LAST.match(s)
    if m:
        a, sep, b, year = int(m[1]), m[2], int(m[3]), int(m[4])
        if a > 12 or (b <= 12 and sep != "/"):
            a, b = b, a  # day first: D-M-YYYY
        return _compose(year, a, b)
    m = _YEAR_FIRST.match(s)
    if m:
        return _compose(int(m[1]), int(m[2]) if m[2] else None, int(m[3]) if m[3] else None)
    m = _SHORT_LAST.match(s)
    if m:
        a, b = int(m[1]), int(m[2])
        if a > 12:
            a, b = b, a
        return _compose(_full_year(int(m[3])), a, b)
    m = _SHORT_THREE.match(s)
    if m:
        return _short_date(m[1], m[2], m[3])
    return None


def _short_date(a: str, b: str, c: str) -> str | None:
    """Rule 5 of the module: three short numbers as written (``"26", "5", "01"``), no ``/``."""
    first, middle, last = int(a), int(b), int(c)
    year_last = len(c) == 2 and (len(a) == 1 or 13 <= first <= 31)
    if not year_last:
        return _compose(_full_year(first), middle, last) if len(a) == 2 else None
    if middle > 12:
        first, middle = middle, first  # M-D-YY
    return _compose(_full_year(last), middle, first)


_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
