"""The built-in bots and the registry that finds any bot by name or file.

A bot is named one of three ways wherever the project takes a bot (``okgin match``,
``okgin bot``, tournaments, the TUI's opponent picker):

- a built-in name from :data:`BUILTIN_BOTS` (``random``, ``simple``, ``eaai-simple``,
  ``strong``, and ``strong-v1``, the ``strong`` of before issue 30, kept as the yardstick
  its successors are tested against; and the levels of :mod:`clients.bots.levels`,
  ``beginner`` to ``master``, for ``okgin play``);
- ``package.module:Class`` for an importable class;
- ``path/to/file.py:Class`` for a class in a file that is not on the import path.

Built-ins are listed as ``module:Class`` strings and imported only when asked for, so
that a slow or missing bot (``strong`` lives in its own package and may not be
installed) never costs the others anything, and its absence gives a sentence that says
what is missing instead of an import traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from ..bot import Bot

#: name -> "module:Class", imported lazily by :func:`bot_class`.
BUILTIN_BOTS: dict[str, str] = {
    "random": "clients.bots.random_bot:RandomBot",
    "simple": "clients.bots.simple:SimpleBot",
    "eaai-simple": "clients.bots.eaai_simple:EaaiSimpleBot",
    "strong": "clients.bots.strong:StrongBot",
    "strong-v1": "clients.bots.strong:StrongV1Bot",
    # graded opponents for people, weakest first (clients/bots/levels.py, okgin play --bot)
    "beginner": "clients.bots.levels:BeginnerBot",
    "casual": "clients.bots.levels:CasualBot",
    "club": "clients.bots.levels:ClubBot",
    "expert": "clients.bots.levels:ExpertBot",
    "master": "clients.bots.levels:MasterBot",
}

#: The levels of ``okgin play --bot``, weakest first (:mod:`clients.bots.levels`): name,
#: how it plays, and its Elo against ``simple`` with the 95% interval, as measured in
#: bench/strength.md ("Levels").
LEVELS: tuple[tuple[str, str, str], ...] = (
    ("beginner", "the EAAI baseline: melds only, knocks at once", "-30 [-48, -12]"),
    ("casual", "okgin's simple player", "0"),
    ("club", "looks ahead, does not read you, knocks at once", "+47 [+20, +74]"),
    ("expert", "reads your discards, times its knocks (strong-v1)", "+89 [+63, +116]"),
    ("master", "today's strong: the expert, playing for gin", "+99 [+72, +128]"),
)


class BotNotFound(LookupError):
    """A bot spec names nothing loadable; the message says what and why."""


def bot_class(spec: str) -> type[Bot]:
    """Resolve a built-in name, ``module:Class`` or ``path/to/file.py:Class`` to a class."""
    target = BUILTIN_BOTS.get(spec, spec)
    if ":" not in target:
        raise BotNotFound(
            f"unknown bot {spec!r}: use a built-in name ({', '.join(BUILTIN_BOTS)}), "
            "package.module:Class or path/to/file.py:Class"
        )
    where, _, cls_name = target.rpartition(":")
    if not where or not cls_name.isidentifier():
        raise BotNotFound(f"bad bot spec {spec!r}: expected path/to/file.py:Class or package.module:Class")
    if where.endswith(".py") or "/" in where or "\\" in where:
        module = _module_from_file(Path(where), spec)
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as e:
            # Only a missing *target* module means "not installed"; an import error
            # inside the bot's own code is the bot's bug and must surface as such.
            if e.name and where.startswith(e.name):
                hint = " (the strong bot is not installed in this tree yet)" if spec.startswith("strong") else ""
                raise BotNotFound(f"bot {spec!r}: module {where} is missing{hint}") from None
            raise
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise BotNotFound(f"bot {spec!r}: {where} has no attribute {cls_name!r}")
    if not (isinstance(cls, type) and callable(getattr(cls, "choose", None))):
        raise BotNotFound(f"bot {spec!r}: {cls_name} is not a bot class (it needs a choose(view, legal) method)")
    return cls


def _module_from_file(path: Path, spec: str):
    if not path.is_file():
        raise BotNotFound(f"bot {spec!r}: no such file {path}")
    # One module name per absolute path, so loading the same file twice reuses it and
    # two different files with the same stem never collide.
    name = "okgin_user_bot_" + str(abs(hash(str(path.resolve()))))
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise BotNotFound(f"bot {spec!r}: cannot load {path} as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def get_bot(name: str, seed: int | str | None = None) -> Bot:
    """A fresh bot instance for ``name`` (any spec :func:`bot_class` takes), seeded.

    A user class whose constructor takes no seed is built without one.
    """
    cls = bot_class(name)
    try:
        bot = cls(seed=seed)
    except TypeError:
        bot = cls()
    if getattr(bot, "name", Bot.name) == Bot.name:
        bot.name = name if name in BUILTIN_BOTS else cls.__name__
    return bot


__all__ = ["BUILTIN_BOTS", "LEVELS", "BotNotFound", "bot_class", "get_bot"]
