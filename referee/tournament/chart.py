"""The ratings chart: each participant's Elo with its 95% interval, as a PNG image.

Written with the standard library only (``zlib`` for the PNG's compression, our own
5x7 font in :mod:`.font`): an organiser gets the picture without installing a plotting
stack, and the same report gives byte-identical images, which tests can compare.

Layout: one row per participant, best first; a dot at the rating, a whisker for the
95% interval, a vertical line at the mean (or the anchor); the rating and interval
printed at the right; an axis with round tick values below.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from .font import DESCENDERS, glyph
from .font import HEIGHT as FONT_H
from .font import WIDTH as FONT_W
from .report import Report, Standing

Color = tuple[int, int, int]
WHITE: Color = (255, 255, 255)
BLACK: Color = (20, 20, 20)
GREY: Color = (200, 200, 200)
DARK_GREY: Color = (110, 110, 110)
BLUE: Color = (31, 92, 170)
ROW_SHADE: Color = (243, 246, 250)


class Canvas:
    """An RGB raster with the few primitives a chart needs."""

    def __init__(self, width: int, height: int, bg: Color = WHITE) -> None:
        self.w, self.h = width, height
        self.px = bytearray(bytes(bg) * (width * height))

    def set(self, x: int, y: int, c: Color) -> None:
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0: int, y0: int, x1: int, y1: int, c: Color) -> None:
        """Fill [x0, x1) x [y0, y1), clipped."""
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        if x1 <= x0:
            return
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            i = 3 * (y * self.w + x0)
            self.px[i:i + len(row)] = row

    def hline(self, x0: int, x1: int, y: int, c: Color, thick: int = 1) -> None:
        self.rect(min(x0, x1), y - thick // 2, max(x0, x1) + 1, y - thick // 2 + thick, c)

    def vline(self, x: int, y0: int, y1: int, c: Color, thick: int = 1) -> None:
        self.rect(x - thick // 2, min(y0, y1), x - thick // 2 + thick, max(y0, y1) + 1, c)

    def text(self, x: int, y: int, s: str, c: Color = BLACK, scale: int = 2, align: str = "left") -> int:
        """Draw ``s`` with its top-left at (x, y) (or right/centre aligned); returns its width."""
        w = text_width(s, scale)
        if align == "right":
            x -= w
        elif align == "center":
            x -= w // 2
        for k, ch in enumerate(s):
            rows = glyph(ch)
            gx = x + k * (FONT_W + 1) * scale
            gy = y + (2 * scale if ch in DESCENDERS else 0)
            for ry, bits in enumerate(rows):
                for rx in range(FONT_W):
                    if bits & (1 << (FONT_W - 1 - rx)):
                        self.rect(gx + rx * scale, gy + ry * scale, gx + (rx + 1) * scale, gy + (ry + 1) * scale, c)
        return w

    def to_png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.px[3 * y * self.w: 3 * (y + 1) * self.w]) for y in range(self.h))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def text_width(s: str, scale: int = 2) -> int:
    return max(0, len(s) * (FONT_W + 1) * scale - scale)


def nice_step(span: float, target_ticks: int = 6) -> float:
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about ``target_ticks`` ticks."""
    if span <= 0 or not math.isfinite(span):
        return 100.0
    raw = span / target_ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def ratings_png(report: Report, width: int = 900) -> bytes:
    """The chart for ``report`` as PNG bytes."""
    rows: Sequence[Standing] = [s for s in report.standings if s.elo is not None]
    scale = 2
    line_h = FONT_H * scale
    row_h = 34
    top = 64
    bottom = 60
    height = top + max(1, len(rows)) * row_h + bottom
    cv = Canvas(width, height)
    title = f"{report.name}: Elo with 95% intervals ({report.games_played} games)"
    cv.text(width // 2, 18, title, BLACK, scale, align="center")

    names_w = max([text_width(s.name, scale) for s in rows] + [text_width("name", scale)])
    labels = [f"{round(s.elo):+d} ±{s.err95:.0f}" if s.err95 is not None and math.isfinite(s.err95) else f"{round(s.elo):+d}"
              for s in rows if s.elo is not None]
    label_w = max([text_width(x, scale) for x in labels] + [text_width("+0", scale)])
    x_left = 20 + names_w + 16
    x_right = width - 20 - label_w - 16
    if not rows:
        cv.text(width // 2, top + 8, "no rated games yet", DARK_GREY, scale, align="center")
        return cv.to_png()

    lo = min((s.elo or 0.0) - (s.err95 if s.err95 is not None and math.isfinite(s.err95) else 0.0) for s in rows)
    hi = max((s.elo or 0.0) + (s.err95 if s.err95 is not None and math.isfinite(s.err95) else 0.0) for s in rows)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1:
        lo, hi = lo - 50, hi + 50
    step = nice_step(hi - lo)
    lo_t = math.floor(lo / step) * step
    hi_t = math.ceil(hi / step) * step

    def xpos(v: float) -> int:
        return round(x_left + (v - lo_t) / (hi_t - lo_t) * (x_right - x_left))

    plot_top, plot_bottom = top - 6, top + len(rows) * row_h + 6
    # Grid and ticks.
    t = lo_t
    while t <= hi_t + step / 2:
        x = xpos(t)
        cv.vline(x, plot_top, plot_bottom, GREY)
        cv.vline(x, plot_bottom, plot_bottom + 5, DARK_GREY)
        cv.text(x, plot_bottom + 10, f"{t:+.0f}" if t else "0", DARK_GREY, scale, align="center")
        t += step
    cv.vline(xpos(0.0), plot_top, plot_bottom, DARK_GREY, thick=2)
    cv.hline(x_left, x_right, plot_bottom, DARK_GREY)
    cv.text(width // 2, plot_bottom + 30, "Elo", DARK_GREY, scale, align="center")

    for k, (s, label) in enumerate(zip(rows, labels, strict=True)):
        y0 = top + k * row_h
        yc = y0 + row_h // 2
        if k % 2 == 0:
            cv.rect(0, y0, width, y0 + row_h, ROW_SHADE)
            cv.vline(xpos(0.0), y0, y0 + row_h, DARK_GREY, thick=2)
        cv.text(x_left - 16, yc - line_h // 2, s.name, BLACK, scale, align="right")
        assert s.elo is not None
        xc = xpos(s.elo)
        if s.err95 is not None and math.isfinite(s.err95):
            xa, xb = xpos(s.elo - s.err95), xpos(s.elo + s.err95)
            cv.hline(xa, xb, yc, BLUE, thick=3)
            cv.vline(xa, yc - 7, yc + 7, BLUE, thick=3)
            cv.vline(xb, yc - 7, yc + 7, BLUE, thick=3)
        cv.rect(xc - 6, yc - 6, xc + 7, yc + 7, BLUE)
        cv.text(x_right + 16, yc - line_h // 2, label, BLACK, scale)
    return cv.to_png()


def write_chart(report: Report, path: str | Path) -> Path:
    path = Path(path)
    path.write_bytes(ratings_png(report))
    return path
