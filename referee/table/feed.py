"""Who gets which frame of a table's feed (protocol.md §4.3, §11), collected, not sent.

:class:`Feed` turns one feed message (a builder per recipient) into frames for each
seat, the public watchers and the full feed, and appends them to :attr:`Feed.sends`; the
table's IO shell sends them (:meth:`referee.table.table.Table.flush`). It also keeps,
per seat, the events a batched seat has not been given yet (protocol 1.3), and counts
the full-feed releases that fall due (:attr:`Feed.releases`), for the shell to time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..sessions import Session
from ..wireviews import pack_array, with_field
from .fullfeed import FullFeed
from .seating import Seating

__all__ = ["Feed"]


class Feed:
    """One table's outgoing frames (see the module docstring)."""

    __slots__ = ("full", "held", "releases", "seating", "sends")

    def __init__(self, seating: Seating, full: FullFeed | None) -> None:
        self.seating = seating
        self.full = full
        #: frames to send, in order: (session, packed frame)
        self.sends: list[tuple[Session, bytes]] = []
        #: full-feed releases due ``full.delay_ms`` from now, not yet timed by the shell
        self.releases = 0
        #: protocol 1.3: per seat, the packed HeldEvents not yet delivered to a batched seat
        self.held: list[list[bytes]] = [[] for _ in range(seating.num_seats)]

    def send(self, sess: Session, data: bytes) -> None:
        self.sends.append((sess, data))

    def broadcast(
        self,
        build: Callable[[int | None], bytes],
        full_build: Callable[[], dict[str, Any]] | None,
        game: int,
        event: bool = False,
        skip: tuple[int, ...] = (),
        carrier: bool = False,
    ) -> None:
        """One feed message: each seat its own frame, public watchers one shared frame,
        the full feed (if this table has one) a held copy. An ``event`` skips the seats
        of sessions that declined events (protocol 1.1) or batch them (1.3: held by
        :meth:`hold`), and the seats in ``skip`` (already sent theirs,
        :meth:`first_frames`). A ``carrier`` (hand_end, game_end) brings a batched seat
        its held events."""
        out = self.sends.append
        for seat, sess in enumerate(self.seating.seats):  # (this loop and hold's are per move: inlined)
            if sess is None or sess.rid is None:
                continue
            if event:
                if not sess.events or sess.batch or seat in skip:
                    continue
                out((sess, build(seat)))
            elif carrier and sess.batch and sess.events:  # Session.batched
                out((sess, with_field(build(seat), "events", self.take_held(seat))))
            else:
                out((sess, build(seat)))
        if self.seating.watchers:
            watchers = self.seating.public_watchers(event)
            if watchers:
                data = build(None)
                for w in watchers:
                    out((w, data))
        if self.full is not None and full_build is not None and self.full.hold(full_build(), game):
            self.releases += 1

    def first_frames(self, build: Callable[[int | None], bytes], seats: tuple[int, ...]) -> list[tuple[Session, bytes]]:
        """An ``event``'s frames for ``seats`` only, to go out just ahead of the next
        prompt (:meth:`referee.table.flow.GameFlow.after_move`)."""
        out = []
        for seat in seats:
            sess = self.seating.seats[seat]
            if sess is not None and sess.rid is not None and sess.events and not sess.batch:
                out.append((sess, build(seat)))
        return out

    def hold(self, entry: Callable[[int], bytes]) -> None:
        """Protocol 1.3: keep a move's HeldEvent for every batched seat (instead of an
        ``event`` frame); its next prompt, advise_prompt, hand_end or game_end carries it."""
        for seat, sess in enumerate(self.seating.seats):
            if sess is not None and sess.batch and sess.events and sess.rid is not None:  # Session.batched
                self.held[seat].append(entry(seat))

    def take_held(self, seat: int) -> bytes:
        """The packed list of ``seat``'s held events, now being delivered (emptied)."""
        held = self.held[seat]
        data = pack_array(held)
        held.clear()
        return data

    def clear_held(self) -> None:
        for held in self.held:
            held.clear()

    def release_full(self) -> None:
        """An ended hand's delay is over: its messages to the full watchers."""
        if self.full is None:
            return
        batch = self.full.release()
        if not batch:
            return
        out = self.sends.append
        for w in self.seating.full_watchers():
            for data in batch:
                out((w, data))
