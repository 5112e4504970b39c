"""Making the referee's ROUTER sockets: their options, CURVE, and their connection guards.

Kept apart from :mod:`referee.transport`, which reads and writes the sockets once they
exist: what a socket is set up with is decided once, at bind time, and read by whoever
audits the referee's limits (the high-water marks, ``ZMQ_MAXMSGSIZE``, the caps), while
the transport's reading and sending is the hot path.

Every socket is a ROUTER with ``ROUTER_MANDATORY`` (a send to a peer that is gone fails at
once instead of vanishing), bounded queues both ways, libzmq's own size limit, and no
linger (the transport chooses a linger when it closes one).
"""

from __future__ import annotations

from collections.abc import Callable

import zmq

from .config import RefereeConfig
from .connguard import ConnectionGuard
from .security import CurveError, start_curve

__all__ = ["bind_door", "bind_main", "router"]


def router(ctx: zmq.Context, config: RefereeConfig) -> zmq.Socket:
    """A ROUTER with the referee's options, not yet bound."""
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
    sock.setsockopt(zmq.SNDHWM, config.hwm)
    sock.setsockopt(zmq.RCVHWM, config.rcv_hwm)
    sock.setsockopt(zmq.MAXMSGSIZE, config.hard_max_bytes)
    sock.setsockopt(zmq.LINGER, 0)
    return sock


def bind_main(ctx: zmq.Context, config: RefereeConfig) -> tuple[zmq.Socket, str, ConnectionGuard | None]:
    """The referee's main socket, bound (port 0 works): (socket, its real endpoint, its guard).

    The guard (the ZAP handler: CURVE's allow-list, :mod:`referee.security`, and the
    connection caps) starts before the bind, so no connection is ever accepted unchecked.
    On failure nothing is left open (the context is the caller's)."""
    cfg = config
    sock = router(ctx, cfg)
    guard = None
    try:
        if "[" in cfg.bind or "::" in cfg.bind:
            sock.setsockopt(zmq.IPV6, 1)
        location = start_curve(sock, cfg.curve_keys, cfg.curve_allow or "") if cfg.curve_keys is not None else None
        if location is not None or cfg.max_connections_per_host or cfg.max_connections:
            guard = ConnectionGuard(ctx, sock, per_host=cfg.max_connections_per_host,
                                    total=cfg.max_connections, curve_location=location)
        sock.bind(cfg.bind)
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)  # the real one (port 0), before any extra bind
        for ep in cfg.extra_binds:
            sock.bind(ep)
    except (zmq.ZMQError, CurveError):
        if guard is not None:
            guard.stop()
        sock.close(0)
        raise
    return sock, endpoint, guard


def bind_door(ctx: zmq.Context, config: RefereeConfig, endpoint: str,
              on_accept: Callable[[], None] | None = None) -> tuple[zmq.Socket, ConnectionGuard | None]:
    """A seat door's ROUTER (:mod:`referee.doors`), bound, with a connection cap of its own.

    Its own guard, not the main socket's: the door's connections count toward the door's
    cap only, so a flood through it never uses up the referee's total. ``on_accept`` is
    called (in the guard's thread) for every connection the door accepts."""
    sock = router(ctx, config)
    guard = None
    try:
        cap = config.max_door_connections
        if cap:
            guard = ConnectionGuard(ctx, sock, per_host=0, total=cap, on_accept=on_accept)
        sock.bind(endpoint)
    except zmq.ZMQError:
        if guard is not None:
            guard.stop()
        sock.close(0)
        raise
    return sock, guard
