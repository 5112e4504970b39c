"""Every environment variable okgin reads or sets, in one place: its name, its meaning, its default.

Why one place: a variable read in one module and documented in another drifts (a new
one is added and never documented; a default changes in one reader of two). Every module
of ``okgin/``, ``referee/`` and ``clients/`` reads the environment through :func:`get` or
:func:`flag`, which accept only the names listed in :data:`VARIABLES`.
``tests/test_env.py`` checks that no module reads ``os.environ`` itself, that every
``OKGIN_*`` name in the code is listed here, and that docs/operations.md's table
(*Environment variables*) is the one :func:`markdown_table` prints
(``python -m okgin.env``).

Passing the whole environment on to a child process (``{**os.environ, ...}``) is not a
read and stays where the child is started.

>>> get("OKGIN_ADMIN_KEY", {"OKGIN_ADMIN_KEY": ""}) is None  # empty is unset
True
>>> flag("OKGIN_ASCII", {"OKGIN_ASCII": "0"}), flag("OKGIN_ASCII", {"OKGIN_ASCII": "yes"})
(False, True)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["GROUPS", "VARIABLES", "Variable", "flag", "get", "main", "markdown_table"]

#: The groups of :data:`VARIABLES`, in the order the documentation lists them.
GROUPS = {
    "read": "Read by okgin's commands",
    "bot": "Given to a bot by a tournament or the conformance kit (a bot reads them)",
    "system": "Standard variables okgin reads",
    "test": "Read by the test suite only",
}


@dataclass(frozen=True)
class Variable:
    """One environment variable: what it means, and what happens when it is unset."""

    name: str
    group: str  # a key of GROUPS
    meaning: str
    default: str  # when unset (or empty): in words, for the documentation


VARIABLES: tuple[Variable, ...] = (
    Variable("OKGIN_ADMIN_KEY", "read",
             "the admin key: `okgin referee` requires it for role admin; `okgin tournament` and the TUI's admin "
             "connections send it. Launchers give it to the referees they start this way, never on a command line",
             "`okgin referee` generates one (JOURNAL_DIR/.okgin-state/admin.key); clients send none"),
    Variable("OKGIN_TOKEN", "read",
             "a reserved seat's token, or a tournament gateway token, for `okgin bot` (`--token`)",
             "none: the bot joins a queue or a table without a reserved seat"),
    Variable("OKGIN_ARENA_KEY", "read",
             "an arena account's API key for `okgin bot --arena` and `okgin tui --arena` (instead of `--key-file`); "
             "never put a key on a command line", "none: `--key-file` is required"),
    Variable("OKGIN_SEAT_TOKEN", "read", "a reserved seat's token for `okgin mcp` (`--token`)", "none"),
    Variable("OKGIN_BROADCAST_TOKEN", "read", "a table's broadcast token for `okgin watch --full`", "none"),
    Variable("OKGIN_CURVE_SERVER_KEY", "read",
             "path of a CURVE referee's public key (`server.key`): the SDK, `okgin bot` and the tournament's admin "
             "link then encrypt", "plain TCP"),
    Variable("OKGIN_CURVE_CLIENT_KEY", "read",
             "with OKGIN_CURVE_SERVER_KEY: path of this client's `*.key_secret`", "a fresh key pair per connection"),
    Variable("OKGIN_GATEWAY_CURVE_KEYS", "read",
             "the tournament gateway's CURVE key directory, when the config has no `tournament.gateway_curve_keys`",
             "plain TCP"),
    Variable("OKGIN_GATEWAY_ALLOW", "read",
             "the tournament gateway's allowed client keys, when the config has no `tournament.gateway_allow`",
             "none"),
    Variable("OKGIN_ASCII", "read", "`1`: the TUI draws suits as S H D C and plain lines (`--ascii`)",
             "`0`, unless the terminal's encoding cannot show the suit symbols"),
    Variable("OKGIN_FOUR_COLOUR", "read", "`1`: the TUI gives each suit its own colour (`--four-colour`)", "`0`"),
    Variable("OKGIN_ENDPOINT", "bot", "the endpoint the bot connects to (its seat door in a sandbox)", "set for every bot"),
    Variable("OKGIN_TABLE", "bot", "the table of the bot's seat", "set for every bot"),
    Variable("OKGIN_NAME", "bot", "the participant's name", "set for every bot"),
    Variable("OKGIN_SEAT", "bot", "the bot's seat number (the conformance kit only)", "set by the kit"),
    Variable("OKGIN_ARENA", "bot",
             "the example bots in C, JavaScript, Rust and Java: an arena's endpoint; they log in with OKGIN_ACCOUNT and "
             "the key in OKGIN_KEY_FILE, seek, and play each `game_ready` at its shard (protocol.md §19)",
             "unset: the bot plays at OKGIN_ENDPOINT with OKGIN_TOKEN"),
    Variable("OKGIN_MCP_SERVER", "bot",
             "`okgin eval --mcp-agent`: the MCP seat's command as a JSON list of words, for the agent (an MCP host) to "
             "start over stdio with its environment (which holds the seat's token in OKGIN_SEAT_TOKEN)",
             "set for an MCP agent"),
    Variable("OKGIN_ACCOUNT", "bot", "with OKGIN_ARENA: the arena account the example bot plays as", "none"),
    Variable("OKGIN_KEY_FILE", "bot", "with OKGIN_ARENA: the file (mode 0600) holding that account's API key", "none"),
    Variable("NO_COLOR", "system", "any value: `okgin tournament` prints plain progress lines, no colour",
             "colour on a terminal"),
    Variable("TERM", "system", "`dumb`: `okgin tournament` prints plain progress lines", "colour on a terminal"),
    Variable("XDG_STATE_HOME", "system", "where the TUI keeps saved sessions (`okgin/sessions.json`, 0600) and your statistics "
             "(`okgin/stats.json`, 0600)", "`~/.local/state`"),
    Variable("LC_ALL", "system", "the first of LC_ALL, LC_CTYPE, LANG that is set decides whether the TUI draws suit symbols",
             "UTF-8 assumed"),
    Variable("LC_CTYPE", "system", "see LC_ALL", "see LC_ALL"),
    Variable("LANG", "system", "see LC_ALL", "see LC_ALL"),
    Variable("PATH", "system", "where the tournament's preflight looks for a participant's program", "`os.defpath`"),
    Variable("OKGIN_REQUIRE_PG", "test",
             "`1`: the PostgreSQL tests of tests/arena/ fail instead of skipping when PostgreSQL or psycopg is missing "
             "(`.ci/run` sets it)", "they skip, saying what is missing"),
    Variable("OKGIN_SLOW", "test", "`1`: run the long tests too (`@pytest.mark.slow`: fuzzing, load, strength)", "skipped"),
    Variable("OKGIN_TIMEOUT_SCALE", "test", "multiplies every test's timeout (a hang guard; a loaded machine needs more)",
             "`3`"),
    Variable("OKGIN_FUZZ_SEED", "test", "the seed of the slow socket fuzz run", "`9`"),
    Variable("OKGIN_SCHEMA_EXAMPLES", "test", "scales the example counts of the schema property tests", "`1`"),
    Variable("OKGIN_TEST_ARTIFACTS", "test", "where the browser test leaves its screenshots for CI",
             "the test's temporary directory"),
)

_BY_NAME = {v.name: v for v in VARIABLES}


def _known(name: str) -> str:
    if name not in _BY_NAME:
        raise KeyError(f"{name} is not an environment variable okgin knows; add it to okgin.env.VARIABLES")
    return name


def get(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's value, or None when it is unset or empty (an empty ``OKGIN_TOKEN=``
    means no token, not an empty one). ``name`` must be in :data:`VARIABLES`."""
    value = (os.environ if environ is None else environ).get(_known(name))
    return value or None


def flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """A switch: on unless unset, empty or ``0``."""
    return (get(name, environ) or "0") != "0"


def markdown_table() -> str:
    """The documentation's table (docs/operations.md, *Environment variables*)."""
    out: list[str] = []
    for group, title in GROUPS.items():
        out += [f"**{title}.**", "", "| variable | meaning | unset |", "|---|---|---|"]
        out += [f"| `{v.name}` | {v.meaning} | {v.default} |" for v in VARIABLES if v.group == group]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m okgin.env``: print the table for docs/operations.md."""
    sys.stdout.write(markdown_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
