"""``okgin arena shard``: a referee shard on its own machine that joins a running arena.

Why a command of its own rather than ``[[remote_shards]]`` in the arena's config: a shard
listed there is dialled at the arena's start only, so adding one needs a restart and a lost
one comes back only at the next. This command runs an ``okgin referee`` with CURVE and a
fresh random admin key (:class:`competition.tournament.procs.LocalReferee`, killed with this
process even by ``kill -9``), then signs in at the arena's front without an account and sends
``shard_join`` (protocol.md §19.6) with the referee's endpoint, its CURVE public key, its
capacity, its admin key and the operator's join key. The front checks the join key, reaches
the referee as its admin and places tables there.

The join key and the admin key cross to the front inside CURVE (``--front-key``, the front's
``server.key``); without it they would cross in clear, which is allowed only on loopback.
When the front goes away (its heartbeats stop), the shard joins again, waiting 1, 2, 4 ... up
to 30 s between tries; a refusal (a wrong join key, an arena that takes no joins) ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

import zmq
import zmq.asyncio

from competition.tournament.link import AdminLink, CurveClient, RefereeGone, RequestFailed
from competition.tournament.procs import LocalReferee
from okgin.launch import endpoint_line
from okgin.protocol.session import Session
from referee.private import private_dir
from referee.security import generate_keys

from .config import is_loopback
from .keys import read_key_file
from .shards import public_key

__all__ = ["JOINED_PREFIX", "MAX_BACKOFF_S", "build_parser", "main"]

#: What the command prints (standard output) each time the arena has taken it.
JOINED_PREFIX = "okgin arena shard joined "
MAX_BACKOFF_S = 30.0
#: A refusal that trying again cannot change: the command ends.
FINAL = ("auth_failed", "forbidden", "bad_message", "not_an_arena", "version_mismatch")


class FrontLink(AdminLink):
    """The shard's session at the arena's front: a spectator without an account (a shard has
    none), with the AdminLink's requests and heartbeats."""

    def __init__(self, ctx: zmq.asyncio.Context, endpoint: str, name: str, curve: CurveClient | None) -> None:
        super().__init__(ctx, endpoint, name, None, curve=curve)
        self.session = Session(name, "spectator", grace_s=1.0)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena shard", description=(
        "Run a referee shard that joins a running arena by itself and plays the tables it is given "
        "(docs/arena.md, Scaling). The arena must set join_key_file; only the operator's machines may hold that key: "
        "a shard sees the hands of the games placed on it."))
    p.add_argument("--join", required=True, metavar="ENDPOINT", help="the arena front's endpoint, tcp://HOST:PORT")
    p.add_argument("--join-key-file", required=True, metavar="FILE",
                   help="the file holding the arena's join key (the same as the arena's join_key_file)")
    p.add_argument("--front-key", metavar="FILE", help="the front's CURVE public key (its server.key): the join key "
                                                       "then crosses encrypted; required off loopback unless --insecure")
    p.add_argument("--bind", required=True, metavar="ENDPOINT",
                   help="where this shard's referee listens (tcp://HOST:PORT, reachable by the arena and the players)")
    p.add_argument("--curve-keys", metavar="DIR", help="the referee's CURVE key pair (okgin referee --gen-keys); "
                                                       "default: a fresh pair in JOURNAL_DIR/keys")
    p.add_argument("--journal-dir", metavar="DIR", default="okgin-shard",
                   help="the shard's state: journals, log, keys (default ./okgin-shard)")
    p.add_argument("--capacity", type=int, default=64, metavar="N", help="at most N games at once here (default 64)")
    p.add_argument("--heartbeat-ms", type=int, default=5000, metavar="MS",
                   help="the referee's heartbeat: the arena declares it lost after 3 silent beats (default 5000)")
    p.add_argument("--name", default="shard", help="this shard's name at the front (logs)")
    p.add_argument("--insecure", action="store_true", help="join a non-loopback front without --front-key "
                                                           "(the join key and admin key then cross in clear)")
    return p


async def join_once(ctx: zmq.asyncio.Context, args: argparse.Namespace, curve: CurveClient | None,
                    request: dict[str, Any], referee: LocalReferee) -> str | None:
    """One session at the front: join, then wait until the front or the referee is gone.
    Returns None to try again, or a reason to stop."""
    link = FrontLink(ctx, args.join, args.name, curve)
    try:
        # bounded as a whole: a DEALER with no peer (the front is down) holds its first send until one comes
        await asyncio.wait_for(link.connect(timeout=30.0), 30.0)
        await link.request(request, timeout=60.0)
        print(f"{JOINED_PREFIX}{args.join} as {request['endpoint']}", flush=True)
        exited = asyncio.ensure_future(referee.proc.wait())
        gone = asyncio.ensure_future(link.gone_event.wait())
        try:
            await asyncio.wait({exited, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
            gone.cancel()
        if not referee.alive:
            return f"the referee exited with {referee.proc.returncode}"
        print(f"okgin arena shard: lost the arena ({link.gone}): joining again", file=sys.stderr, flush=True)
        return None
    except RequestFailed as e:
        if e.name in FINAL:
            return f"the arena refused: {e.name}: {e.reply.get('message')}"
        print(f"okgin arena shard: the arena said {e.name}: {e.reply.get('message')}", file=sys.stderr, flush=True)
        return None
    except (RefereeGone, TimeoutError) as e:
        print(f"okgin arena shard: cannot reach the arena: {e or 'no answer'}", file=sys.stderr, flush=True)
        return None
    finally:
        await link.close()


async def run(args: argparse.Namespace) -> int:
    if not is_loopback(args.join) and not args.front_key and not args.insecure:
        print(f"okgin arena shard: {args.join} is not a loopback address: give --front-key (the front's server.key) so "
              "that the join key never crosses the network in clear, or --insecure", file=sys.stderr)
        return 2
    try:
        join_key = read_key_file(args.join_key_file)  # owner-only, bounded, as account keys
        curve = CurveClient.load(args.front_key) if args.front_key else None
    except (OSError, ValueError) as e:
        print(f"okgin arena shard: {e}", file=sys.stderr)
        return 2
    if not 1 <= len(join_key) <= 100 or not 1 <= args.capacity <= 1000:
        print("okgin arena shard: the join key must be 1-100 characters, --capacity 1-1000", file=sys.stderr)
        return 2
    state = private_dir(Path(args.journal_dir))
    keys = Path(args.curve_keys) if args.curve_keys else state / "keys"
    if not (keys / "server.key_secret").exists():
        if args.curve_keys:
            print(f"okgin arena shard: no server.key_secret in {keys}", file=sys.stderr)
            return 2
        generate_keys(keys)
    admin_key = secrets.token_hex(16)  # lives in this process, the referee's environment and the front's memory
    try:
        referee = await LocalReferee.start(state, "shard", admin_key=admin_key, bind=args.bind,
                                           args=["--curve-keys", str(keys), "--allow", "any",
                                                 "--heartbeat-ms", str(args.heartbeat_ms)])
    except RuntimeError as e:
        print(f"okgin arena shard: {e}", file=sys.stderr)
        return 1
    print(endpoint_line(referee.endpoint), flush=True)
    request = {"type": "shard_join", "endpoint": referee.endpoint, "server_key": public_key((keys / "server.key").read_text()),
               "capacity": args.capacity, "admin_key": admin_key, "join_key": join_key}
    ctx = zmq.asyncio.Context()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    backoff = 1.0
    why: str | None = None
    try:
        while not stop.is_set():
            attempt = asyncio.ensure_future(join_once(ctx, args, curve, request, referee))
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({attempt, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not attempt.done():
                attempt.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await attempt
                break
            why = attempt.result()
            if why is not None:
                break
            with contextlib.suppress(TimeoutError):  # the backoff, cut short by a stop
                await asyncio.wait_for(stop.wait(), backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
    finally:
        await referee.stop()
        ctx.destroy(linger=0)
    if why is not None:
        print(f"okgin arena shard: {why}", file=sys.stderr, flush=True)
        return 1
    return 0


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    os.umask(0o077)
    return asyncio.run(run(args))
