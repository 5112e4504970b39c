"""The terminal UI: ``okgin play``, ``tui``, ``watch``, ``serve`` and ``replay``.

An immutable :class:`~clients.tui.model.TableState` changed only by a pure reducer
(``reducer.py``), drawn by Textual widgets. ``house.py`` is the one client module that starts an
embedded referee (``okgin play``); every other part joins a referee over the network, as any
client does. This file makes the directory a regular package, so the import contracts in
pyproject.toml (``[tool.importlinter]``) see its modules.
"""
