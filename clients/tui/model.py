"""What the TUI knows about its table: one immutable :class:`TableState`.

Why one immutable value: everything on screen is a pure function of this state (plus the
display options), so the same screens render a live game, a spectator feed, a replayed
journal or a state injected by a snapshot test, and a test can build any situation
without a socket. The network worker builds a new state from each protocol message and
hands it to the app; nothing else mutates it.

The state holds only what the protocol sends to this client: the seat's own
:class:`okgin.View` (``View.from_wire``), the legal actions of the last prompt, clocks,
the players' names, the results of the hands so far and the final result. It never
holds anything the referee did not send (no back door into the engine).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from okgin import Action, HandResult, RuleSet, View

#: Connection states shown in the status bar / banner.
CONNECTING, CONNECTED, LOST, OFFLINE = "connecting", "connected", "lost", "offline"
#: The connection ended for good (another terminal took the seat, the referee is gone):
#: the banner says why, and nothing more can be sent from this window.
ENDED = "ended"


@dataclass(frozen=True)
class ClockReading:
    """One seat's clock as the referee last reported it (the referee's clock is the authority).

    Not a time control: that is :class:`okgin.protocol.settings.Clock` (the table's
    ``move_ms``/``bank_ms`` settings, the schema's ``Clock``). This is a reading of one
    seat's running clock, hence the name.

    ``remaining_ms`` is the seat's bank; ``move_ms`` the limit for the current move (None
    when the table has no time control). ``received`` is the app's monotonic time when
    the value arrived, so the display can count down between messages.
    """

    remaining_ms: int | None
    move_ms: int | None = None
    received: float = 0.0
    running: bool = False


@dataclass(frozen=True)
class TableState:
    """Everything the screens draw. Build with :func:`dataclasses.replace`."""

    view: View | None = None
    legal: tuple[Action, ...] = ()  # legal actions of the open prompt (empty: not our turn)
    seq: int | None = None  # the open prompt's turn number, echoed in the reply
    advice_legal: tuple[Action, ...] = ()  # the sitter: the captain's legal actions right now
    names: tuple[str, ...] = ()
    rules: RuleSet | None = None
    table: str | None = None
    results: tuple[HandResult, ...] = ()  # every finished hand of this game, in order
    final: dict[str, Any] | None = None  # game over: scores, winner, termination, seed...
    clocks: tuple[ClockReading | None, ...] = ()
    spectator: bool = False
    replay: tuple[int, int] | None = None  # (step, total) when replaying a journal
    connection: str = OFFLINE
    endpoint: str | None = None
    error: str | None = None  # the referee's sentence for our last refused request
    notice: str | None = None  # a one-line status message (waiting for players, ...)
    extra: dict[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- derived
    @property
    def seat(self) -> int | None:
        return None if self.view is None else self.view.seat

    @property
    def phase(self) -> str | None:
        return None if self.view is None else self.view.phase

    @property
    def role(self) -> str | None:
        """This client's role: dealer/nondealer, box/captain/sitter, or None (spectator)."""
        v = self.view
        if v is None or v.seat is None:
            return None
        return v.roles[v.seat] if v.seat < len(v.roles) else None

    @property
    def is_box(self) -> bool:
        return self.view is not None and self.view.variant == "box"

    @property
    def my_turn(self) -> bool:
        """True when the referee prompted us and is waiting for our move."""
        return bool(self.legal) and self.view is not None and self.view.to_act == self.view.seat

    @property
    def is_sitter(self) -> bool:
        return self.role == "sitter"

    @property
    def can_advise(self) -> bool:
        """The sitter, while its captain is to act."""
        v = self.view
        return self.is_sitter and v is not None and v.to_act is not None and v.to_act == v.hand_of and v.phase != "game_over"

    @property
    def game_over(self) -> bool:
        return self.final is not None or (self.view is not None and self.view.phase == "game_over")

    def legal_kinds(self) -> set[str]:
        return {a.kind for a in self.legal}

    def is_legal(self, action: Action) -> bool:
        return action.without_melds() in self.legal

    def name(self, seat: int | None) -> str:
        """A seat's display name: "You" for our own seat, else the referee's name."""
        if seat is None:
            return "nobody"
        if self.view is not None and seat == self.view.seat and not self.spectator:
            return "You"
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return f"Seat {seat}"

    def plain_name(self, seat: int | None) -> str:
        """A seat's name without "You" (score sheets list everyone by name)."""
        if seat is None:
            return "nobody"
        if seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return f"Seat {seat}"

    def opponents(self) -> list[int]:
        """Seats other than ours, in seat order (the sitter also sees its captain listed)."""
        v = self.view
        if v is None:
            return []
        return [s for s in range(v.num_seats) if s != v.seat]

    def playing_seats(self) -> tuple[int, int] | None:
        """The two seats playing this hand: (dealer, non-dealer)."""
        v = self.view
        return None if v is None else (v.dealer, v.nondealer)

    def with_result(self, result: HandResult) -> TableState:
        """Add a finished hand's result, once (a resent result after a reconnect is ignored)."""
        if any(r.hand_number == result.hand_number for r in self.results):
            return self
        return replace(self, results=(*self.results, result))
