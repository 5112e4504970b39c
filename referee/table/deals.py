"""A table's deal secrets: each game's seed and salt, their commitment, and their reveal.

A game's seed decides every card, so it is a secret until the game ends (protocol.md
§12.1): ``game_start`` carries only ``seed_hash``, the salted commitment. ``game_end``
reveals the seed and salt, or, at a ``reveal: "deferred"`` table (protocol 1.4), nulls,
and an admin's ``reveal`` hands them out later from :attr:`DealSecrets.history` (a
tournament may deal the same cards to other players at another table). The journal, the
operator's record, always keeps them (:meth:`DealSecrets.journal_fields`).
"""

from __future__ import annotations

from typing import Any

from okgin.rng import new_salt, new_seed, seed_hash

__all__ = ["REVEAL_AT_END", "REVEAL_DEFERRED", "REVEAL_HISTORY", "DealSecrets"]

REVEAL_AT_END, REVEAL_DEFERRED = "game_end", "deferred"
#: How many finished games' seeds and salts a table keeps for ``reveal`` (protocol.md §5.25).
REVEAL_HISTORY = 64


class DealSecrets:
    """The running (or last) game's seed, salt and commitment, and the finished games'."""

    __slots__ = ("base_seed", "history", "reveal", "salt", "seed", "seed_hash")

    def __init__(self, base_seed: int | str | None, reveal: str = REVEAL_AT_END) -> None:
        #: the admin's fixed seed for the table's first game (None: random)
        self.base_seed = base_seed
        #: when game_end reveals the seed and salt: REVEAL_AT_END or REVEAL_DEFERRED
        self.reveal = reveal
        self.seed: int | str | None = None
        self.salt: str | None = None  # the commitment's salt (protocol 1.4; None: an older game)
        self.seed_hash: str | None = None
        #: game number -> (seed, salt, seed_hash) of the last REVEAL_HISTORY finished games; oldest first
        self.history: dict[int, tuple[int | str, str | None, str]] = {}

    def deal(self, game: int) -> int | str:
        """Draw game ``game``'s seed and a fresh salt, and commit to them; returns the seed.

        The seed is the admin's fixed seed for game 1, else 256 fresh random bits. Never
        derived from an earlier seed: game k's seed is revealed at its end, and a rematch
        dealt from it (the old ``"S/2"``) would be known to every player before it
        starts. Fixing the seed is for reproducing one game (tests, transcripts,
        tournaments' duplicate deals, which use one table per game)."""
        seed = self.base_seed if self.base_seed is not None and game == 1 else new_seed()
        self.restore(seed, new_salt())  # the salt is fresh per game: the commitment of protocol.md §5.10
        return seed

    def restore(self, seed: int | str, salt: str | None, hash_: str | None = None) -> None:
        """Crash recovery: a game's seed and salt as saved (``salt`` None: a game started
        before protocol 1.4, unsalted)."""
        self.seed, self.salt = seed, salt
        self.seed_hash = seed_hash(seed, salt) if hash_ is None else hash_

    def remember(self, game: int) -> None:
        """The running game ``game`` ended: keep its secrets for ``reveal``."""
        assert self.seed is not None and self.seed_hash is not None
        self.keep(game, self.seed, self.salt, self.seed_hash)

    def keep(self, game: int, seed: int | str, salt: str | None, hash_: str) -> None:
        """Keep a finished game's secrets (the last REVEAL_HISTORY games)."""
        history = self.history
        history.pop(game, None)
        history[game] = (seed, salt, hash_)
        while len(history) > REVEAL_HISTORY:
            del history[next(iter(history))]

    def restore_history(self, saved: list[Any]) -> None:
        """Crash recovery: the finished games' secrets as saved ([game, seed, salt, hash] rows)."""
        for game, seed, salt, hash_ in saved:
            self.keep(int(game), seed, salt, hash_)

    def saved_history(self) -> list[list[Any]]:
        """The finished games' secrets as :meth:`restore_history` reads them back."""
        return [[g, seed, salt, h] for g, (seed, salt, h) in self.history.items()]

    def end_fields(self) -> dict[str, Any]:
        """``game_end``'s ``seed`` and ``salt``: revealed, or nulls at a deferred table."""
        if self.reveal == REVEAL_DEFERRED:
            return {"seed": None, "salt": None}
        return {"seed": self.seed, "salt": self.salt}

    def journal_fields(self) -> dict[str, Any]:
        """The journal's ``end`` line keeps the seed and salt even when ``game_end`` defers
        their reveal (protocol.md §12), so that the journal can still be checked."""
        deferred = {"reveal": REVEAL_DEFERRED} if self.reveal == REVEAL_DEFERRED else {}
        return {"seed": self.seed, "salt": self.salt, "seed_hash": self.seed_hash, **deferred}
