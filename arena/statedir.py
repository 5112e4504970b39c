"""Where the arena keeps its state, and the ``--config``/``--state``/``--db`` flags that name it.

Every arena command (the server, ``okgin arena account``, ``okgin arena ratings``) must find
the same database, or an account added by one would be unknown to the other. So the account
and ratings commands resolve it exactly as ``okgin arena`` does (:func:`db_url`): the arena's
settings (:func:`arena.config.load_config`: ``--config arena.toml`` with ``--state`` and
``--db`` laid over it), then ``db`` if set, else the SQLite file ``arena.db`` in the state
directory (default ``./okgin-arena``, made 0700: it holds the key hashes and the games' seeds).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.private import private_dir

from .config import ConfigError, load_config
from .store import Store, StoreError, state_db_url

__all__ = ["DEFAULT_STATE", "add_db_flags", "db_url", "open_store"]

DEFAULT_STATE = "okgin-arena"


def add_db_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", default=None,
                   help="the arena's settings (arena.toml): its database is this command's (its state and db)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--state", metavar="DIR", default=None,
                   help=f"the arena's state directory (default ./{DEFAULT_STATE}; the database is DIR/arena.db)")
    g.add_argument("--db", metavar="URL", default=None,
                   help="the database instead: sqlite:///PATH or postgresql://USER@HOST:PORT/DB (a password goes in "
                        "~/.pgpass, never here)")


def db_url(args: argparse.Namespace) -> tuple[str, Path | None]:
    """The database URL the flags name, as ``okgin arena`` resolves it, and the state directory
    when the database is the default SQLite file there. ConfigError for a bad ``--config``."""
    cfg = load_config(getattr(args, "config", None), state=getattr(args, "state", None), db=getattr(args, "db", None))
    if cfg.db:
        return cfg.db, None
    return state_db_url(cfg.state), Path(cfg.state)


def open_store(args: argparse.Namespace, create: bool) -> Store:
    """The store the flags name. ``create``: make the state directory (0700) and a new
    database if there is none; otherwise a missing SQLite file is a StoreError (a typo in
    ``--state`` must not look like an empty arena)."""
    try:
        url, state = db_url(args)
    except ConfigError as e:
        raise StoreError(str(e)) from e
    if state is not None:
        if create:
            private_dir(state)
        elif not (state / "arena.db").is_file():
            raise StoreError(f"no arena database in {state}/ (start the arena, or add an account, first; or pass "
                             "--config/--state/--db)")
    return Store.open(url)
