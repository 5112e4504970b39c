"""The running clocks of one game: a :class:`SeatClock` per seat (protocol.md §7).

Not to be confused with :class:`okgin.protocol.settings.Clock`, the *settings* of a
table's time control (a frozen dataclass, the same at every table of a tournament). A
:class:`SeatClock` is one seat's running time control in one game, after cutechess's
``TimeControl``: what is left in its bank, and what its next move may take.
:class:`GameClocks` holds one per seat and answers the questions a prompt asks (the
move's allowance, its deadline, whether an answer came late, the wire ``ClockState``).

Nothing here reads a clock: the caller passes ``now`` or the milliseconds spent, so the
game flow that uses it stays without I/O (:mod:`referee.table.flow`).
"""

from __future__ import annotations

from typing import Any

from okgin.protocol.settings import Clock

__all__ = ["GameClocks", "SeatClock"]


class SeatClock:
    """One seat's time control in one game: its bank (None: no bank at this table)."""

    __slots__ = ("bank_ms", "settings")

    def __init__(self, settings: Clock, bank_ms: int | None) -> None:
        self.settings = settings
        self.bank_ms = bank_ms

    def allowance_ms(self) -> int | None:
        """What the seat's next move may take: the move limit, its bank, or both (the
        smaller); None when the move is untimed."""
        move_ms = self.settings.move_ms
        bank = self.bank_ms
        if bank is None:
            return move_ms if move_ms > 0 else None
        return min(move_ms, bank) if move_ms > 0 else bank

    def charge(self, spent_ms: int) -> None:
        """A move the seat made in ``spent_ms``: off its bank, then the increment on."""
        if self.bank_ms is not None:
            self.bank_ms = max(0, self.bank_ms - spent_ms) + self.settings.increment_ms

    def charge_timeout(self) -> None:
        """The referee moved for the seat (its time ran out): the bank is spent, the
        increment still comes (protocol.md §8, ``default_move``)."""
        if self.bank_ms is not None:
            self.bank_ms = self.settings.increment_ms

    def bank_after(self, spent_ms: int) -> int | None:
        """The bank as it stands ``spent_ms`` into the seat's running move."""
        return None if self.bank_ms is None else max(0, self.bank_ms - spent_ms)


class GameClocks:
    """Every seat's :class:`SeatClock` for the running game, and the table's settings.

    ``banks`` None: no bank (a table without banks, or before its first game)."""

    __slots__ = ("seats", "settings")

    def __init__(self, settings: Clock, num_seats: int, banks: list[int] | None) -> None:
        self.settings = settings
        self.seats = [SeatClock(settings, None if banks is None else banks[i]) for i in range(num_seats)]

    @classmethod
    def fresh(cls, settings: Clock, num_seats: int) -> GameClocks:
        """A new game's clocks: every bank full (None at a table without banks)."""
        return cls(settings, num_seats, [settings.bank_ms] * num_seats if settings.bank_ms > 0 else None)

    def banks(self) -> list[int] | None:
        """Every seat's bank now (between moves), or None at a table without banks."""
        if self.seats[0].bank_ms is None:
            return None
        return [c.bank_ms for c in self.seats]  # type: ignore[misc]  # all set when the first is

    def banks_now(self, running: int | None, spent_ms: int) -> list[int] | None:
        """Every seat's bank, ``spent_ms`` taken off the bank of the seat whose move is
        running (``running``; None: no move is running)."""
        banks = self.banks()
        if banks is not None and running is not None:
            banks[running] = max(0, banks[running] - spent_ms)
        return banks

    def deadline(self, start: float, allowance_ms: int) -> float:
        """When a move started at ``start`` with ``allowance_ms`` is late, grace included."""
        return start + (allowance_ms + self.settings.grace_ms) / 1000

    def late(self, allowance_ms: int | None, spent_ms: int) -> bool:
        """Whether an answer after ``spent_ms`` came past its allowance and the grace."""
        return allowance_ms is not None and spent_ms > allowance_ms + self.settings.grace_ms

    def state(self, allowance_ms: int | None, spent_ms: int, banks_now: list[int] | None) -> dict[str, Any]:
        """The wire ``ClockState`` of a prompt (protocol.md §6.8)."""
        s = self.settings
        return {
            "remaining_ms": None if allowance_ms is None else max(0, allowance_ms - spent_ms),
            "move_ms": s.move_ms,
            "bank_ms": banks_now,  # the 1.0 name, kept for 1.x clients: a list here, an int in a Clock
            "banks_ms": banks_now,  # 1.4: the same list under a name of its own (protocol.md 6.8)
            "increment_ms": s.increment_ms,
            "grace_ms": s.grace_ms,
        }
