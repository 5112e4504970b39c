"""Laying off (docs/rules.md §3.4) and the knocker's default arrangement.

The defender may add its unmelded cards to the knocker's melds: the fourth card of a set
of three, or cards of the run's suit at either end of a run, in a chain (a card laid off
may let the next one go on: with a knocker's 5-6-7 of hearts, 4h then 3h). The referee
chooses for the defender the layoffs *and* its own melds that leave it the least
deadwood (docs/rules.md §3.4 [resolved]): cards that could be laid off may be worth more
inside the defender's own melds, so every choice of chain prefixes is tried with the
defender's best arrangement of what remains. There are few such choices: a chain is
only as long as the defender's consecutive cards beyond a run's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from .cards import Card, card_str, rank_of, suit_of
from .melds import Arrangement, Meld, deadwood_mask, is_run, is_set, min_arrangements_mask

__all__ = ["Defence", "best_defence", "knocker_default_arrangement", "layoff_chains"]


@dataclass(frozen=True)
class Defence:
    """The defender's best layout: its own melds and deadwood, and what it laid off where."""

    arrangement: Arrangement
    layoffs: tuple[tuple[Card, int], ...]
    """``(card, index of the knocker's meld it went onto)``, in the order laid."""

    @property
    def deadwood(self) -> int:
        return self.arrangement.deadwood

    def to_wire(self) -> dict:
        d = self.arrangement.to_wire()
        d["layoffs"] = [{"card": card_str(c), "meld": i} for c, i in self.layoffs]
        return d


def layoff_chains(knocker_melds: tuple[Meld, ...], defender: int) -> list[tuple[int, list[Card]]]:
    """For each meld end that accepts cards: (meld index, the defender's chain of cards there).

    A set of three accepts its missing fourth card; a run accepts, at each end, the
    defender's consecutive cards of its suit going outward. Sets of four accept nothing.
    """
    chains: list[tuple[int, list[Card]]] = []
    for i, meld in enumerate(knocker_melds):
        if is_set(meld) and len(meld) == 3:
            suits = {suit_of(c) for c in meld}
            missing = next(s for s in range(4) if s not in suits) * 13 + rank_of(meld[0])
            if defender >> missing & 1:
                chains.append((i, [missing]))
        elif is_run(meld):
            s = suit_of(meld[0])
            lo = min(rank_of(c) for c in meld)
            hi = max(rank_of(c) for c in meld)
            down = []
            r = lo - 1
            while r >= 0 and defender >> (s * 13 + r) & 1:
                down.append(s * 13 + r)
                r -= 1
            up = []
            r = hi + 1
            while r <= 12 and defender >> (s * 13 + r) & 1:
                up.append(s * 13 + r)
                r += 1
            if down:
                chains.append((i, down))
            if up:
                chains.append((i, up))
    return chains


def best_defence(defender: int, knocker_melds: tuple[Meld, ...], layoffs_allowed: bool = True) -> Defence:
    """The defender's least deadwood with its own melds and (unless gin) layoffs.

    Among equal results the one laying off fewest cards is kept, so the layout shows no
    pointless layoffs.
    """
    chains = layoff_chains(knocker_melds, defender) if layoffs_allowed else []
    best_dw = deadwood_mask(defender)
    best_laid: tuple[tuple[Card, int], ...] = ()
    best_rest = defender
    if chains:
        for lengths in product(*(range(len(ch) + 1) for _, ch in chains)):
            if not any(lengths):
                continue
            laid: list[tuple[Card, int]] = []
            mask = 0
            clash = False
            for (idx, ch), k in zip(chains, lengths, strict=True):
                for c in ch[:k]:
                    if mask >> c & 1:
                        clash = True
                        break
                    mask |= 1 << c
                    laid.append((c, idx))
                if clash:
                    break
            if clash:
                continue
            rest = defender & ~mask
            dw = deadwood_mask(rest)
            if dw < best_dw or (dw == best_dw and len(laid) < len(best_laid)):
                best_dw, best_laid, best_rest = dw, tuple(laid), rest
    arrangement = min_arrangements_mask(best_rest)[0]
    return Defence(arrangement, best_laid)


def knocker_default_arrangement(knocker: int, defender: int) -> tuple[Arrangement, Defence]:
    """The arrangement the referee lays out for a knocker that declared none.

    docs/rules.md §3.4 [resolved]: least deadwood, and among those the one that leaves the
    defender the fewest layoff points, i.e. the highest deadwood after its best
    defence. Returns the arrangement and that defence.
    """
    options = min_arrangements_mask(knocker)
    gin = options[0].deadwood == 0
    best: tuple[Arrangement, Defence] | None = None
    for arr in options:
        d = best_defence(defender, arr.melds, layoffs_allowed=not gin)
        if best is None or d.deadwood > best[1].deadwood:
            best = (arr, d)
        if gin:
            break
    assert best is not None
    return best
