"""What the tests know of the full-visibility feed (protocol.md §11), written once."""

from __future__ import annotations

from typing import Any


def fill_hand_ends(full: dict[int, dict[str, Any]], moves: dict[int, dict[str, Any]]) -> None:
    """Protocol 1.4: a full-feed ``hand_end`` followed by another hand carries the public
    view (the full one would show the next deal, that hand's secret until it ends). The
    state at such an ``n`` is the next message's full view with its move undone: only a
    draw from the stock changes a hidden card's place (takes and passes are public)."""
    for n, v in list(full.items()):
        if "stock" in v:
            continue
        nxt = full[n + 1]
        stock, hands = list(nxt["stock"]), [list(h) for h in nxt["all_hands"]]
        mv = moves.get(n + 1)
        if mv is not None and mv["kind"] == "draw_stock":
            hands[mv["seat"]].remove(mv["card"])
            stock.append(mv["card"])
        full[n] = {**nxt, "stock": stock, "all_hands": hands}
