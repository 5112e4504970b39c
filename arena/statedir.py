"""Where the arena keeps its state, and the ``--state DIR | --db URL`` flags that name it.

Every arena command (the server, ``okgin arena account``, ``okgin arena ratings``) finds its
database the same way: ``--db URL`` if given, else ``OKGIN_ARENA_DB``, else the SQLite file
``arena.db`` in the state directory (``--state DIR``, default ``./okgin-arena``, made 0700: it
holds the key hashes, and the games' seeds and records).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from okgin import env
from referee.private import private_dir

from .store import Store, StoreError, state_db_url

__all__ = ["DEFAULT_STATE", "add_db_flags", "db_url", "open_store"]

DEFAULT_STATE = "okgin-arena"


def add_db_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--state", metavar="DIR", default=None,
                   help=f"the arena's state directory (default ./{DEFAULT_STATE}; the database is DIR/arena.db)")
    g.add_argument("--db", metavar="URL", default=None,
                   help="the database instead: sqlite:///PATH or postgresql://USER@HOST:PORT/DB (a password goes in "
                        "~/.pgpass, never here); default $OKGIN_ARENA_DB")


def db_url(args: argparse.Namespace) -> tuple[str, Path | None]:
    """The database URL the flags name, and the state directory when it is the default SQLite file there."""
    if getattr(args, "db", None):
        return args.db, None
    if getattr(args, "state", None) is None and (url := env.get("OKGIN_ARENA_DB")):
        return url, None
    state = Path(args.state if getattr(args, "state", None) else DEFAULT_STATE)
    return state_db_url(state), state


def open_store(args: argparse.Namespace, create: bool) -> Store:
    """The store the flags name. ``create``: make the state directory (0700) and a new
    database if there is none; otherwise a missing SQLite file is a StoreError (a typo in
    ``--state`` must not look like an empty arena)."""
    url, state = db_url(args)
    if state is not None:
        if create:
            private_dir(state)
        elif not (state / "arena.db").is_file():
            raise StoreError(f"no arena database in {state}/ (start the arena, or add an account, first; or pass --state/--db)")
    return Store.open(url)
