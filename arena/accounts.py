"""``okgin arena account``: add accounts and manage their keys, bans and cooldowns.

A key is printed once, when it is made (``add``, ``rotate``), or written to a new 0600 file
with ``--key-file``; the database keeps only its scrypt hash (:mod:`arena.keys`), so a lost
key is replaced with ``rotate``, never recovered. ``revoke`` stops a key at once, ``ban``
refuses an account (with a reason it is told) whatever its key.
"""

from __future__ import annotations

import argparse
import sys
import time

from . import keys
from .statedir import add_db_flags, open_store
from .store import Account, StoreError

__all__ = ["build_parser", "describe", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okgin arena account", description="Manage the arena's accounts and their API keys.")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def cmd(name: str, help_: str, takes_name: bool = True) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help_, description=help_)
        if takes_name:
            c.add_argument("name", metavar="NAME")
        add_db_flags(c)
        return c

    add = cmd("add", "add an account and print its API key, once")
    add.add_argument("--bot", action="store_true", help="a bot account (leaderboards show it as one); default human")
    add.add_argument("--admin", action="store_true", help="may ban and unban, and connect as role admin")
    add.add_argument("--key-file", metavar="FILE", help="write the key to this new file (0600) instead of printing it")
    cmd("list", "list the accounts", takes_name=False)
    cmd("revoke", "stop the account's key at once (rotate gives it a new one)")
    rot = cmd("rotate", "give the account a new key (printed once); the old one stops working at once")
    rot.add_argument("--key-file", metavar="FILE", help="write the key to this new file (0600) instead of printing it")
    ban = cmd("ban", "refuse the account (its sessions are told the reason)")
    ban.add_argument("--reason", required=True, help="why (shown to the account)")
    ban.add_argument("--by", default="operator", help="who bans (kept in the account's log; default operator)")
    unban = cmd("unban", "lift a ban")
    unban.add_argument("--by", default="operator", help="who lifts it (kept in the account's log)")
    return p


def describe(a: Account, now_ms: int) -> str:
    """An account's state in a few words: active, revoked, banned (reason), cooling down."""
    parts = []
    if a.revoked:
        parts.append("key revoked")
    if a.banned is not None:
        parts.append(f"banned: {a.banned}")
    if a.cooldown_until_ms > now_ms:
        parts.append(f"cooldown {(a.cooldown_until_ms - now_ms + 999) // 1000} s")
    return ", ".join(parts) or "active"


def _give_key(key: str, key_file: str | None, name: str) -> None:
    if key_file:
        keys.write_key_file(key_file, key)
        print(f"the key of {name} is in {key_file} (0600); it is shown nowhere else", file=sys.stderr)
    else:
        print(key)
        print(f"this is {name}'s API key: it is shown once and stored only as a hash; keep it in a 0600 file",
              file=sys.stderr)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        with open_store(args, create=args.action == "add") as store:
            if args.action == "add":
                if args.key_file:
                    from pathlib import Path

                    if Path(args.key_file).exists():
                        raise StoreError(f"{args.key_file} exists: a key file is never overwritten")
                key = store.add_account(args.name, "bot" if args.bot else "human", admin=args.admin)
                _give_key(key, args.key_file, args.name)
            elif args.action == "list":
                now = time.time_ns() // 1_000_000
                rows = [(a.name, a.kind + (" admin" if a.admin else ""),
                         time.strftime("%Y-%m-%d", time.gmtime(a.created_ms / 1000)), describe(a, now))
                        for a in store.accounts()]
                head = ("account", "kind", "created", "state")
                widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(3)]
                for r in [head, *rows]:
                    print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[3])
            elif args.action == "revoke":
                store.revoke(args.name)
                print(f"{args.name}: key revoked (okgin arena account rotate {args.name} gives a new one)")
            elif args.action == "rotate":
                if args.key_file:
                    from pathlib import Path

                    if Path(args.key_file).exists():
                        raise StoreError(f"{args.key_file} exists: a key file is never overwritten")
                key = store.rotate(args.name)
                _give_key(key, args.key_file, args.name)
            elif args.action == "ban":
                store.ban(args.name, args.reason, args.by)
                print(f"{args.name}: banned ({args.reason})")
            elif args.action == "unban":
                store.unban(args.name, args.by)
                print(f"{args.name}: ban lifted")
    except (StoreError, OSError) as e:
        print(f"okgin arena account {args.action}: {e}", file=sys.stderr)
        return 1
    return 0
