"""The referee's settings: time controls, policies, limits (protocol.md §7, §8, §13).

Why frozen dataclasses with ``merge``: a table's clock and policies are a request's
partial map laid over the referee's defaults, and every value a client sends must be
checked before any table exists (bad input changes nothing, protocol.md §3).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from okgin.protocol import MAX_MESSAGE_BYTES, ProtocolError

MAX_MS = 7 * 24 * 3600 * 1000  # a week: any larger time setting is a mistake


def _ms(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_MS:
        raise ProtocolError("bad_message", f"{name} must be a whole number of milliseconds from 0 to {MAX_MS}, got {v!r}")
    return v


@dataclass(frozen=True)
class Clock:
    """A table's time control (protocol.md §7). ``move_ms``/``bank_ms`` 0 = off."""

    move_ms: int = 0
    bank_ms: int = 0
    increment_ms: int = 0
    grace_ms: int = 1000

    @property
    def limited(self) -> bool:
        return self.move_ms > 0 or self.bank_ms > 0

    def to_wire(self) -> dict[str, int]:
        return asdict(self)

    def merge(self, partial: dict[str, Any] | None) -> Clock:
        """These settings with a client's partial map laid over them (validated)."""
        if not partial:
            return self
        known = {f.name for f in fields(self)}
        bad = sorted(set(partial) - known)
        if bad:
            raise ProtocolError("bad_message", f"unknown clock setting(s) {', '.join(map(str, bad))}; known: {', '.join(sorted(known))}")
        return replace(self, **{k: _ms(f"clock.{k}", v) for k, v in partial.items()})


TIMEOUT_POLICIES = ("forfeit", "default_move")
ILLEGAL_POLICIES = ("reprompt", "forfeit")


@dataclass(frozen=True)
class Policies:
    """What happens on a timeout, an illegal move, a lost connection (protocol.md §8)."""

    timeout: str = "forfeit"
    illegal: str = "reprompt"
    illegal_limit: int = 3
    disconnect_grace_ms: int = 30000

    def __post_init__(self) -> None:
        if self.timeout not in TIMEOUT_POLICIES:
            raise ProtocolError("bad_message", f"policies.timeout must be 'forfeit' or 'default_move', got {self.timeout!r}")
        if self.illegal not in ILLEGAL_POLICIES:
            raise ProtocolError("bad_message", f"policies.illegal must be 'reprompt' or 'forfeit', got {self.illegal!r}")
        if isinstance(self.illegal_limit, bool) or not isinstance(self.illegal_limit, int) or not 1 <= self.illegal_limit <= 1000:
            raise ProtocolError("bad_message", f"policies.illegal_limit must be a whole number from 1 to 1000, got {self.illegal_limit!r}")
        _ms("policies.disconnect_grace_ms", self.disconnect_grace_ms)

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    def merge(self, partial: dict[str, Any] | None) -> Policies:
        if not partial:
            return self
        known = {f.name for f in fields(self)}
        bad = sorted(set(partial) - known)
        if bad:
            raise ProtocolError("bad_message", f"unknown policy setting(s) {', '.join(map(str, bad))}; known: {', '.join(sorted(known))}")
        return replace(self, **partial)


@dataclass(frozen=True)
class RefereeConfig:
    """Everything a referee needs to start. ``journal_dir`` None: no journals (tests, embedding)."""

    bind: str = "tcp://127.0.0.1:7117"
    # More endpoints the same ROUTER binds (a ROUTER may bind several): e.g. an ipc://
    # socket beside the TCP one, for sandboxed tournament bots that have no network.
    extra_binds: tuple[str, ...] = ()
    heartbeat_ms: int = 5000
    liveness: int = 3
    journal_dir: str | None = "journals"
    admin_key: str | None = None
    # Without an admin key, role admin is refused (auth_failed) unless this is set: an
    # open admin lets any client that can connect create and close tables (protocol.md
    # §13; `okgin referee --open-admin`, for local experiments only).
    open_admin: bool = False
    clock: Clock = field(default_factory=Clock)
    policies: Policies = field(default_factory=Policies)
    max_message_bytes: int = MAX_MESSAGE_BYTES
    # ZMQ_MAXMSGSIZE: libzmq refuses a bigger frame before Python sees it, by closing that
    # connection (no answer; the peer's socket reconnects as a new connection). Equal to
    # max_message_bytes, so an oversize frame is never read, let alone decoded.
    hard_max_bytes: int = MAX_MESSAGE_BYTES
    hwm: int = 1000
    # Each connection's receive queue (ZMQ_RCVHWM): small, so a client that pipelines
    # floods waits in its own send queue (or is dropped by its own HWM), not in the referee's memory.
    rcv_hwm: int = 100
    max_tables: int = 10000
    max_sessions: int = 10000
    max_seats_per_session: int = 64
    max_watches_per_session: int = 64
    # One client must not use up the global caps: tables a session may have made (by
    # joining new names) and still open, and sessions one connection may have opened
    # (hello, bye, hello ...) that are still held.
    max_tables_per_session: int = 16
    max_sessions_per_connection: int = 8
    # Gin in the Box: advice a sitter may give per captain's prompt and per hand (each one
    # is in every later view of the captain's hand, so each one costs every later message).
    max_advice_per_prompt: int = 2
    max_advice_per_hand: int = 40
    # A session holding nothing is forgotten this long after its connection went silent.
    idle_session_ms: int = 0
    # Crash recovery (referee.recovery): keep the state a restart needs in the journal
    # directory, and restore it at start (recover) instead of closing what was left.
    recovery_state: bool = False
    recover: bool = False
    # Per-connection rate limit (referee.ratelimit): messages per second and burst; 0 = off.
    rate_limit_per_s: float = 0
    rate_limit_burst: int = 0
    # ... and bytes per second and burst; 0 = off. 256 KiB/s is 2000 messages/s (the CLI's
    # --rate-limit) of 128 bytes, above nearly every message but create_table and long
    # texts, so honest traffic meets the message limit first; frames of the largest size
    # get 64/s, which bench/decode_cost.py puts at ~0.1% of a core to decode.
    rate_limit_bytes_per_s: float = 256 * 1024
    rate_limit_bytes_burst: int = 1 << 20
    # A session with this many undeliverable messages in a row loses its watches (referee.lagging); 0 = never.
    watcher_drop_limit: int = 200
    # CURVE (referee.security): directory of the referee's key pair, and the allowed
    # client keys (a directory of public key files, or "any"); None = plain TCP.
    curve_keys: str | None = None
    curve_allow: str | None = None
