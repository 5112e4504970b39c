"""Launching okgin's own processes: the one place that knows their command lines.

Every tool that starts a referee or a bot as a process (``okgin match --via-referee``,
tournaments, the conformance kit, the benchmarks) builds its command line here, and reads
the referee's endpoint here; every command that takes rule options declares ``--rule``
here. Before, each tool had its own copy, and the copies drifted: three ways of reading
the endpoint line (a prefix, a regex for ``tcp://`` or ``ipc://``, a regex for
``tcp://`` only), three bot command lines, seven ``--rule`` declarations.

What is here is pure: lists of strings, the parse of one line, an argparse declaration.
Starting the process stays with the caller, because callers differ in ways that matter
(a blocking CLI; an asyncio runner whose children die with it, under umask 077, with
their output drained into a log), and ``okgin`` itself starts no process, thread or
event loop (ARCHITECTURE.md). A referee *embedded* in a process (``okgin play``) needs
none of this: ``await referee.server.Referee(config).start()`` returns the endpoint.

>>> referee_argv("/tmp/j")[3:]
['referee', '--bind', 'tcp://127.0.0.1:0', '--journal-dir', '/tmp/j']
>>> endpoint_from_line(endpoint_line("tcp://127.0.0.1:5555") + "\\n")
'tcp://127.0.0.1:5555'
>>> endpoint_from_line(b"Traceback (most recent call last):") is None
True
>>> bot_argv("simple", "tcp://127.0.0.1:5555", name="b", quiet=True)[3:]
['bot', 'simple', '--connect', 'tcp://127.0.0.1:5555', '--name', 'b', '--quiet']
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = [
    "ARENA_PREFIX", "ENDPOINT_PREFIX", "LOOPBACK_ANY_PORT", "ArgumentContainer", "add_rule_flag", "bot_argv",
    "endpoint_from_line", "endpoint_line", "okgin_argv", "referee_argv",
]

#: What ``okgin referee`` prints as the first line of its standard output, before the
#: endpoint it really bound (protocol.md §2): the line a launcher waits for.
ENDPOINT_PREFIX = "okgin referee listening on "

#: What ``okgin arena`` prints first, before its front's endpoint (protocol.md §19).
ARENA_PREFIX = "okgin arena listening on "

#: Loopback, any free port: the referee binds first and then prints the port it got.
LOOPBACK_ANY_PORT = "tcp://127.0.0.1:0"


def okgin_argv(*args: str) -> list[str]:
    """The ``okgin`` command of this installation (the same interpreter, the same tree)."""
    return [sys.executable, "-m", "okgin", *args]


def referee_argv(journal_dir: str | os.PathLike[str], *extra: str, bind: str = LOOPBACK_ANY_PORT,
                 command: Sequence[str] | None = None) -> list[str]:
    """``okgin referee`` bound to ``bind`` (loopback, a free port), journalling into
    ``journal_dir``, with ``extra`` arguments after. ``command`` replaces ``okgin referee``
    (the conformance kit's ``referee_command``). An admin key belongs in the child's
    environment (``OKGIN_ADMIN_KEY``), not here: a command line is public on the host."""
    base = list(command) if command is not None else okgin_argv("referee")
    return [*base, "--bind", bind, "--journal-dir", os.fspath(journal_dir), *extra]


def endpoint_line(endpoint: str, prefix: str = ENDPOINT_PREFIX) -> str:
    """The line ``okgin referee`` (or, with :data:`ARENA_PREFIX`, ``okgin arena``) prints
    once it is bound (without its newline)."""
    return prefix + endpoint


def endpoint_from_line(line: str | bytes, prefix: str = ENDPOINT_PREFIX) -> str | None:
    """The endpoint in a referee's first line of output, or None when the line is not
    the endpoint line (the referee failed to start and said why, or printed nothing).
    ``prefix``: :data:`ARENA_PREFIX` to read ``okgin arena``'s."""
    text = line.decode(errors="replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text.startswith(prefix):
        return None
    endpoint = text[len(prefix):].strip()
    return endpoint if endpoint and not any(c.isspace() for c in endpoint) else None


def bot_argv(bot: str, endpoint: str, *extra: str, name: str | None = None, token: str | None = None,
             seed: str | None = None, plan: str | os.PathLike[str] | None = None, quiet: bool = False,
             no_thread: bool = False) -> list[str]:
    """``okgin bot BOT --connect ENDPOINT`` with the options given, then ``extra``.

    ``token`` puts a seat token on the command line, which any local user can read: no
    launcher of okgin's does. Tournaments and the conformance kit pass the token in
    ``OKGIN_TOKEN``, and ``okgin match`` in a plan file."""
    argv = okgin_argv("bot", bot, "--connect", endpoint)
    if plan is not None:
        argv += ["--plan", os.fspath(plan)]
    if token is not None:
        argv += ["--token", token]
    if name is not None:
        argv += ["--name", name]
    if seed is not None:
        argv += ["--seed", seed]
    if quiet:
        argv.append("--quiet")
    if no_thread:
        argv.append("--no-thread")
    return [*argv, *extra]


def mcp_argv(endpoint: str, *, name: str, stats: str | os.PathLike[str] | None = None) -> list[str]:
    """``okgin mcp --connect ENDPOINT --name NAME`` (the seat's token goes in
    ``OKGIN_SEAT_TOKEN``), with ``--stats FILE`` for ``okgin eval``'s counts."""
    argv = okgin_argv("mcp", "--connect", endpoint, "--name", name)
    if stats is not None:
        argv += ["--stats", os.fspath(stats)]
    return argv


class ArgumentContainer(Protocol):
    """An argparse parser or argument group: anything with ``add_argument``."""

    def add_argument(self, *args: Any, **kwargs: Any) -> Any: ...


def add_rule_flag(parser: ArgumentContainer,
                  help: str = "a rule option (repeatable); see 'okgin rules'") -> None:
    """Declare ``--rule NAME=VALUE`` (repeatable, into ``args.rule``, a list of strings),
    which :meth:`okgin.rules.RuleSet.with_assignments` reads: every option of
    :class:`okgin.rules.RuleSet` by its name in docs/rules.md §8, so a new option needs
    no new flag anywhere. ``help`` says what the rule does for this command."""
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help=help)
