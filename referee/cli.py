"""``okgin referee``: run a referee until SIGINT/SIGTERM (protocol.md §2).

Binds first, then prints the real endpoint on the first line of standard output (so
``--bind tcp://127.0.0.1:0`` works for scripts and tests), then one line per one-table
setting. A clean stop abandons running games, closes every journal and tells every
client (``shutdown``).

Admin is closed by default (protocol.md §13): without ``--admin-key`` (or
``$OKGIN_ADMIN_KEY``) a random key is generated at start, printed once on standard
error (standard output's first line stays the endpoint) and written to
``JOURNAL_DIR/.okgin-state/admin.key`` (mode 0600, beside the recovery state, which is
already as private as the referee's memory; never in the journals themselves, which are
meant to be shared), or to ``--admin-key-file``. With ``--recover`` a key file left by
the crashed referee is reused, so that admin sessions can resume. ``--open-admin``
restores the old open admin, for local experiments.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import secrets
import signal
import sys
from pathlib import Path

from okgin import RuleError, RuleSet, env
from okgin.launch import add_rule_flag, endpoint_line
from okgin.protocol import ProtocolError

from .config import Clock, Policies, RefereeConfig
from .recovery import STATE_DIR
from .security import CurveError
from .server import Referee

# A network referee's tables have a move clock unless --untimed (issue 14): without one a
# player who stops answering holds the game, and the opponent's seat, for ever. A minute
# is far above any bot (milliseconds) and above nearly every human move in gin rummy;
# the lag allowance (--grace-ms, 1 s) and the disconnect grace (30 s) are apart from it.
# The embeddable Referee (RefereeConfig) stays untimed: `okgin play` and tests build their own.
DEFAULT_MOVE_MS = 60000


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin referee", description="Run a referee: the server that owns every game (protocol.md).")
    p.add_argument("--bind", default="tcp://127.0.0.1:7117",
                   help="ZeroMQ endpoint to bind (port 0: any free port; default %(default)s)")
    p.add_argument("--also-bind", action="append", default=[], metavar="ENDPOINT",
                   help="bind this endpoint too (repeatable), e.g. ipc:///run/okgin/ref.sock beside --bind; "
                        "standard output's first line still names --bind's endpoint")
    p.add_argument("--journal-dir", default="journals", help="directory for game journals (default %(default)s)")
    p.add_argument("--no-journal", action="store_true", help="write no journals")
    p.add_argument("--recover", action="store_true",
                   help="resume the games a crashed referee left in --journal-dir (docs/operations.md); without it they are "
                        "closed as abandoned")
    p.add_argument("--heartbeat-ms", type=int, default=5000, help="heartbeat interval (default %(default)s)")
    p.add_argument("--liveness", type=int, default=3, help="missed heartbeats before a peer is gone (default %(default)s)")
    p.add_argument("--admin-key", default=env.get("OKGIN_ADMIN_KEY"),
                   help="key required for role admin (default: $OKGIN_ADMIN_KEY, which a shared host should prefer: a command "
                        "line is readable by every local user; none: a random key is generated, printed on stderr"
                        " and written to --admin-key-file)")
    p.add_argument("--admin-key-file", metavar="PATH",
                   help=f"where a generated admin key is written, mode 0600 (default: JOURNAL_DIR/{STATE_DIR}/admin.key; with "
                        "--no-journal: nowhere)")
    p.add_argument("--open-admin", action="store_true",
                   help="no admin key: role admin is open to every client that can connect (local experiments only)")
    p.add_argument("--max-tables", type=int, default=10000)
    p.add_argument("--max-sessions", type=int, default=10000)
    p.add_argument("--max-connections-per-host", type=int, default=512, metavar="N",
                   help="live connections one TCP host may hold; more are refused at the handshake "
                        "(each costs ~28 KB even if silent; 0: no cap; default %(default)s)")
    p.add_argument("--max-connections", type=int, default=10000, metavar="N",
                   help="live connections in all, ipc included; more are refused at the handshake (0: no cap; default "
                        "%(default)s)")
    p.add_argument("--door-dir", metavar="DIR",
                   help="where seat doors (protocol 1.5, create_table with doors) are bound, made mode 0700 "
                        "(default: a fresh temporary directory, removed at exit); a tournament runner must be able to read it")
    p.add_argument("--max-door-connections", type=int, default=8, metavar="N",
                   help="live connections per seat door, apart from --max-connections (0: no cap; default %(default)s)")
    p.add_argument("--rate-limit", type=float, default=2000, metavar="PER_S",
                   help="messages per second one connection may send; the excess is dropped unread (0: no limit; default "
                        "%(default)s)")
    p.add_argument("--rate-burst", type=int, default=4000, help="messages one connection may send at once (default %(default)s)")
    p.add_argument("--rate-bytes", type=float, default=256 * 1024, metavar="BYTES_PER_S",
                   help="bytes of frames per second one connection may send (0: no byte limit; --rate-limit 0 turns both off; "
                        "default %(default)s)")
    p.add_argument("--rate-bytes-burst", type=int, default=1 << 20, metavar="BYTES",
                   help="bytes of frames one connection may send at once (default %(default)s)")
    p.add_argument("--watcher-drop-limit", type=int, default=200,
                   help="undeliverable messages in a row after which a session's watches are dropped (0: never; default "
                        "%(default)s)")
    g = p.add_argument_group(
        "default time control and policies (quick-match and named tables; --table)",
        f"Every table gets a clock unless --untimed: {DEFAULT_MOVE_MS // 1000} s a move (bots answer in milliseconds, "
        "a person rarely needs more), then --grace-ms for the network; a seat out of time loses (--timeout-policy). "
        "Without a clock a silent opponent could hold a game for ever (docs/operations.md). "
        "An admin's create_table may set its own clock.",
    )
    g.add_argument("--move-ms", type=int, default=None,
                   help=f"per-move limit, 0 = none (default {DEFAULT_MOVE_MS}, or 0 with --untimed)")
    g.add_argument("--bank-ms", type=int, default=0, help="per-game bank per seat, 0 = none")
    g.add_argument("--untimed", action="store_true",
                   help="tables get no clock (move and bank 0): only for trusted players; a silent one stalls the game for ever")
    g.add_argument("--increment-ms", type=int, default=0, help="added to the bank after each move")
    g.add_argument("--grace-ms", type=int, default=1000, help="lag allowance (default %(default)s)")
    g.add_argument("--timeout-policy", choices=("forfeit", "default_move"), default="forfeit")
    g.add_argument("--illegal-policy", choices=("reprompt", "forfeit"), default="reprompt")
    g.add_argument("--illegal-limit", type=int, default=3, help="with --illegal-policy forfeit: the Nth illegal move loses")
    g.add_argument("--disconnect-grace-ms", type=int, default=30000,
                   help="a seat whose connection is gone this long loses (default %(default)s: time to reconnect after a network "
                        "blip)")
    t = p.add_argument_group("one table created at start (admin-style)")
    t.add_argument("--table", help="create this table at start")
    t.add_argument("--variant", choices=("oklahoma", "box"), default="oklahoma")
    add_rule_flag(t)
    t.add_argument("--seed", help="seed of game 1 (integer or text; default random)")
    t.add_argument("--reserved", action="store_true", help="seats only by tokens, printed one per line")
    t.add_argument("--player", action="append", default=[], metavar="NAME", help="name of a reserved seat (repeatable)")
    t.add_argument("--full-feed-delay-ms", type=int,
                   help="offer a full-visibility feed for broadcasters: each hand's cards this long after the hand ended (its "
                        "broadcast token is printed)")
    c = p.add_argument_group("CURVE encryption and client keys (referee/security.py, docs/operations.md)")
    c.add_argument("--curve-keys", metavar="DIR", help="encrypt all traffic with the referee's key pair DIR/server.key_secret")
    c.add_argument("--allow", metavar="KEYS",
                   help="with --curve-keys: a directory of allowed client public keys (*.key), or 'any'")
    c.add_argument("--gen-keys", metavar="DIR", help="write a key pair DIR/NAME.key (public) and DIR/NAME.key_secret, then exit")
    c.add_argument("--key-name", default="server", metavar="NAME", help="with --gen-keys: the pair's name (default %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    return p


def _seed(text: str | None) -> int | str | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def admin_key_path(args: argparse.Namespace) -> Path | None:
    """Where a generated admin key goes: --admin-key-file, else the journal directory's state directory."""
    if args.admin_key_file:
        return Path(args.admin_key_file)
    if args.no_journal:
        return None
    return Path(args.journal_dir) / STATE_DIR / "admin.key"


def write_key_file(path: Path, key: str) -> None:
    """Write ``key`` to ``path`` with mode 0600 from the start (never readable by others,
    not even for a moment), replacing any older file atomically."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, (key + "\n").encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def resolve_admin_key(args: argparse.Namespace) -> tuple[str | None, str]:
    """The admin key to start with and the stderr line announcing it ("" for none).

    A given key is used as it is and never written anywhere. Otherwise a key file left
    by a crashed referee is reused with --recover; else a fresh 128-bit key is made."""
    if args.open_admin:
        return None, ("okgin referee: WARNING: --open-admin: role admin is open to every client that can connect"
                      " (it can create and close any table); for local experiments only")
    if args.admin_key:
        return args.admin_key, ""
    path = admin_key_path(args)
    if args.recover and path is not None and path.is_file():
        old = path.read_text().strip()
        if old:
            return old, f"okgin referee: admin key {old} (reused from {path})"
    key = secrets.token_hex(16)
    if path is None:
        return key, f"okgin referee: admin key {key} (generated; give --admin-key-file to keep it in a file)"
    write_key_file(path, key)
    return key, f"okgin referee: admin key {key} (generated; also in {path}, mode 0600)"


async def run(args: argparse.Namespace) -> int:
    if args.gen_keys:
        from .security import generate_keys

        public, secret = generate_keys(args.gen_keys, args.key_name)
        print(f"public key {public}\nsecret key {secret} (keep it private)", flush=True)
        return 0
    if args.curve_keys and not args.allow:
        print("okgin referee: --curve-keys needs --allow (a directory of client public keys, or 'any')", file=sys.stderr)
        return 2
    if args.untimed and (args.move_ms or args.bank_ms):
        print("okgin referee: --untimed means no clock; drop --move-ms/--bank-ms (or drop --untimed)", file=sys.stderr)
        return 2
    move_ms = 0 if args.untimed else (DEFAULT_MOVE_MS if args.move_ms is None else args.move_ms)
    try:
        clock = Clock().merge(
            {"move_ms": move_ms, "bank_ms": args.bank_ms, "increment_ms": args.increment_ms, "grace_ms": args.grace_ms}
        )
        policies = Policies(args.timeout_policy, args.illegal_policy, args.illegal_limit, args.disconnect_grace_ms)
        rules = RuleSet(variant=args.variant).with_assignments(args.rule)
    except (ProtocolError, RuleError) as e:
        print(f"okgin referee: {e}", file=sys.stderr)
        return 2
    if args.open_admin and args.admin_key:
        print(
            "okgin referee: --open-admin and an admin key (--admin-key or $OKGIN_ADMIN_KEY) contradict each other",
            file=sys.stderr,
        )
        return 2
    try:
        admin_key, key_line = resolve_admin_key(args)
    except OSError as e:
        print(f"okgin referee: cannot write the admin key file: {e}", file=sys.stderr)
        return 1
    cfg = RefereeConfig(
        bind=args.bind,
        extra_binds=tuple(args.also_bind),
        heartbeat_ms=args.heartbeat_ms,
        liveness=args.liveness,
        journal_dir=None if args.no_journal else args.journal_dir,
        admin_key=admin_key,
        open_admin=args.open_admin,
        clock=clock,
        policies=policies,
        max_tables=args.max_tables,
        max_sessions=args.max_sessions,
        max_connections_per_host=max(0, args.max_connections_per_host),
        max_connections=max(0, args.max_connections),
        door_dir=args.door_dir,
        max_door_connections=max(0, args.max_door_connections),
        recovery_state=not args.no_journal,
        recover=args.recover,
        rate_limit_per_s=max(0.0, args.rate_limit),
        rate_limit_burst=max(1, args.rate_burst),
        # --rate-limit 0 means no limit of any kind (load tests, fuzzing), as it did on 1.3
        rate_limit_bytes_per_s=max(0.0, args.rate_bytes) if args.rate_limit > 0 else 0.0,
        rate_limit_bytes_burst=max(1, args.rate_bytes_burst),
        watcher_drop_limit=max(0, args.watcher_drop_limit),
        curve_keys=args.curve_keys,
        curve_allow=args.allow,
    )
    ref = Referee(cfg)
    try:
        endpoint = await ref.start()
    except CurveError as e:
        print(f"okgin referee: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        print(f"okgin referee: cannot bind {args.bind}: {e}", file=sys.stderr)
        return 1
    # Signal handlers before the endpoint line: a script that waits for that line and then
    # sends SIGTERM must get the clean shutdown, never the default (killed) disposition.
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []

    def on_signal(signame: str) -> None:
        stopping.append(loop.create_task(ref.stop(f"the referee received {signame}")))

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig.name)
    if ref.recovery_summary:  # on stderr, before the endpoint line that scripts wait for
        print(f"okgin referee: {ref.recovery_summary}", file=sys.stderr, flush=True)
    if key_line:  # stderr too: standard output's first line is the endpoint
        print(key_line, file=sys.stderr, flush=True)
    print(endpoint_line(endpoint), flush=True)
    if args.table and args.table in ref.tables:
        print(f"table {args.table} (recovered; its seat tokens are those printed at the first start)", flush=True)
    elif args.table:
        try:
            t = ref.create_table(
                args.table, args.variant, rules, seed=_seed(args.seed), reserved=args.reserved,
                players=args.player or None, full_feed_delay_ms=args.full_feed_delay_ms,
            )
        except ProtocolError as e:
            print(f"okgin referee: {e.message}", file=sys.stderr)
            await ref.stop()
            return 2
        print(f"table {t.name}", flush=True)
        if t.broadcast_token is not None:
            print(f"broadcast token {t.broadcast_token}", flush=True)
        for i, tok in enumerate(t.reserved_tokens or []):
            print(f"seat {i} token {tok}", flush=True)
    tune_gc()
    await ref.serve_forever()
    return 0


# Collections of the oldest generation happen at most once per this many of the middle one
# (CPython's default is 10); see tune_gc.
GC_GEN2_EVERY = 100


def tune_gc() -> None:
    """Keep the cyclic garbage collector off the referee's latency path.

    Why: a serving referee creates next to no cyclic garbage (every message's dicts,
    lists and frames are freed by reference counting; measured: 19 unreachable objects
    after 20,000 decisions, all from tearing the bench table down), yet CPython's
    default thresholds run a full collection every few thousand decisions at load, and
    a full collection walks every tracked object of every live table: 70-190 ms
    stalls were measured at 200 tables, during which all 400 clients wait. So, once
    started: everything allocated so far (modules, the engine's tables, restored games)
    is frozen out of the collector's sight, and the oldest generation is collected ten
    times less often (young generations unchanged: their collections are short).
    Cycles are still collected, later. Process-wide, hence here and not in the
    embeddable :class:`Referee`: a program hosting one keeps its own GC policy.
    """
    gc.collect()
    gc.freeze()
    g0, g1, _ = gc.get_threshold()
    gc.set_threshold(g0, g1, GC_GEN2_EVERY)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(run(args))
