"""``--ascii``: every character the app draws is ASCII (issue 17).

Why one filter at the end: sentences (``describe.py``), widgets, screens, borders and
Textual's own footer all put Unicode on the screen (``·``, ``—``, ``…``, ``⏎``, arrows,
box lines). Rather than chase each string, :func:`ascii_text` maps any text to ASCII and
:class:`AsciiFilter` applies it to every line the app renders while ``--ascii`` is on.
Each character keeps its width on screen (a line filter may not change a line's length),
so ``…`` becomes ``.`` and ``—`` becomes ``-``; a character with no equivalent becomes ``?``
(one per cell it would have taken).
"""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

__all__ = ["AsciiFilter", "ascii_text"]

_SAME = {
    # sentence punctuation
    "·": ".", "•": "*", "…": ".", "—": "-", "–": "-", "‐": "-", "−": "-",
    "‘": "'", "’": "'", "“": '"', "”": '"', "«": "<", "»": ">", "×": "x", "§": "S",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ",
    # keys, arrows, marks
    "⏎": "<", "↵": "<", "←": "<", "→": ">", "↑": "^", "↓": "v", "⇥": ">", "⌫": "<",
    "▶": ">", "◀": "<", "▲": "^", "▼": "v", "►": ">", "◄": "<",
    "✓": "v", "✔": "v", "✗": "x", "✘": "x", "★": "*", "☆": "*", "●": "o", "○": "o",
    # suits (the cards themselves are letters already in ASCII mode)
    "♠": "S", "♥": "H", "♦": "D", "♣": "C", "♤": "S", "♡": "H", "♢": "D", "♧": "C",
    # blocks and shades (scrollbars, bars)
    "█": "#", "▓": "#", "▒": ":", "░": ":", "▌": "|", "▐": "|", "▀": "-", "▄": "_",
    "▁": "_", "▂": "_", "▃": "_", "▅": "=", "▆": "=", "▇": "#", "▏": "|", "▎": "|", "▍": "|",
    "▕": "|", "▔": "-",
}


@lru_cache(4096)
def _char(c: str) -> str:
    if c < "\x80":
        return c
    if c in _SAME:
        return _SAME[c]
    o = ord(c)
    if 0x2500 <= o <= 0x257F:  # box drawing: lines, corners and joints
        if o in (0x2502, 0x2503, 0x2551, 0x2506, 0x2507, 0x250A, 0x250B, 0x254E, 0x254F, 0x2575, 0x2577, 0x2579, 0x257B):
            return "|"
        if o in (0x2500, 0x2501, 0x2550, 0x2504, 0x2505, 0x2508, 0x2509, 0x254C, 0x254D, 0x2574, 0x2576, 0x2578, 0x257A):
            return "-"
        return "+"
    w = cell_len(c)
    return "?" * w if w else ""  # zero-width marks vanish


def ascii_text(text: str) -> str:
    """``text`` with every non-ASCII character replaced, each keeping its width."""
    if text.isascii():
        return text
    return "".join(_char(c) for c in text)


class AsciiFilter(LineFilter):
    """A Textual line filter: every segment's text through :func:`ascii_text`."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [s if s.control or s.text.isascii() else Segment(ascii_text(s.text), s.style, s.control) for s in segments]
