"""The referee's settings: time controls, policies, limits (protocol.md §7, §8, §13).

The time control and policies (:class:`Clock`, :class:`Policies`) are defined once, in
:mod:`okgin.protocol.settings`, for the referee and the tournament alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from okgin.protocol import MAX_MESSAGE_BYTES

# The time control and policies are the protocol's types, shared with the tournament.
from okgin.protocol.settings import MAX_MS, Clock, Policies

__all__ = ["MAX_MS", "Clock", "Policies", "RefereeConfig"]


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
    # Live connections (referee.connguard), refused at the ZAP handshake past these: each
    # costs ~28 KB of libzmq's memory even if it never speaks, and a ROUTER cannot close
    # a peer. Per TCP host (ipc peers have none) and in all; 0 = no cap.
    max_connections_per_host: int = 512
    max_connections: int = 10000
    # Seat doors (referee.doors, protocol 1.5): live connections per door (one bot, which
    # may reconnect: a few), counted apart from max_connections; 0 = no cap. Doors are
    # bound in door_dir (made 0700), or in a fresh 0700 temporary directory when None.
    max_door_connections: int = 8
    door_dir: str | None = None
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
