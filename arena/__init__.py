"""The arena (issue 26): a standing, rated place where people and bots play at any time.

A front (``okgin arena``) takes accounts' connections, pairs seeks and challenges, and seats
each game at a table of one of its referee shards; the store (:mod:`arena.store`) keeps the
accounts, their API keys (as scrypt hashes, :mod:`arena.keys`), the games and the ratings
(:mod:`arena.ratings`). Layering: ``arena`` may import ``okgin``, ``referee`` and
``competition``; nothing imports ``arena`` but ``okgin/cli.py`` (by module name) and tests.
Operators read docs/arena.md.
"""

__all__: list[str] = []
