"""``okgin arena``'s settings: embedded defaults, an ``arena.toml``, then command-line flags.

Every key has a default (the table in docs/arena.md), so ``okgin arena`` alone runs a
loopback arena with a SQLite database in ``./okgin-arena/`` and one shard per core. An
unknown key in the file is an error naming it (a typo must not silently run defaults).

```toml
name = "friday arena"
bind = "tcp://0.0.0.0:7118"     # not loopback: needs [curve] (or --insecure)
state = "/var/lib/okgin-arena"
db = "postgresql://okgin@db.internal:5432/arena"
shards = 4
show_up_ms = 30000
join_key_file = "/etc/okgin-arena/join.secret"   # shards may join while it runs (okgin arena shard --join)

[curve]
keys = "/etc/okgin-arena/keys"  # server.key_secret of the front and its shards

[clocks.standard]
move_ms = 60000
```
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from okgin.protocol import ProtocolError
from okgin.protocol.settings import MAX_ADVICE_WINDOW_MS, Clock
from okgin.rules import RuleError, RuleSet

__all__ = [
    "DEFAULT_BIND", "DEFAULT_CLOCKS", "DEFAULT_WEB", "ArenaConfig", "ConfigError", "RemoteShard", "is_loopback",
    "is_loopback_host", "load_config", "parse_web",
]

DEFAULT_BIND = "tcp://127.0.0.1:7118"
#: Where ``okgin arena`` serves its web pages unless told otherwise (``--web``, ``--no-web``).
DEFAULT_WEB = "127.0.0.1:7119"
#: The clock presets a seek or challenge names (protocol.md §19, welcome.arena.clocks).
DEFAULT_CLOCKS: dict[str, Clock] = {
    "standard": Clock(move_ms=60_000, grace_ms=1000),
    "blitz": Clock(move_ms=10_000, grace_ms=500),
}


class ConfigError(ValueError):
    """A setting refused, with a sentence naming the key."""


@dataclass(frozen=True)
class RemoteShard:
    """A referee shard on another machine, started there by its operator (``okgin referee
    --curve-keys DIR --allow any`` with an admin key): the arena reaches it as an admin with
    the shared secret ``admin_key_file`` holds, over CURVE with the shard's public key
    ``server_key`` (its ``server.key``), and sends players to ``endpoint``."""

    endpoint: str
    admin_key_file: str
    server_key: str


@dataclass(frozen=True)
class ArenaConfig:
    """Everything ``okgin arena`` needs. Times in milliseconds."""

    name: str = "okgin arena"
    bind: str = DEFAULT_BIND
    state: Path = Path("okgin-arena")
    db: str | None = None  # None: sqlite in the state directory
    shards: int = field(default_factory=lambda: os.cpu_count() or 1)
    insecure: bool = False
    curve_keys: str | None = None  # a directory with server.key / server.key_secret (okgin referee --gen-keys)
    clocks: dict[str, Clock] = field(default_factory=lambda: dict(DEFAULT_CLOCKS))
    show_up_ms: int = 30_000
    disconnect_grace_ms: int = 30_000
    cooldown_ms: int = 30_000  # a first no-show's cooldown; doubled for each further one
    max_cooldown_ms: int = 3_600_000
    heartbeat_ms: int = 5000
    liveness: int = 3
    match_every_ms: int = 500  # how often open seeks are paired
    #: Gin in the Box: how long a captain's prompt waits for its sitter's advice when the sitter
    #: is a person or an agent (its hello says advice_wait, protocol.md §5.14); bots never wait
    advice_window_ms: int = 5_000
    widen_every_ms: int = 10_000  # the acceptable rating gap widens by 50 this often (arena.matching.gap)
    #: rule options every arena game is played with, over the variant's defaults (docs/rules.md §8)
    rules: dict[str, Any] = field(default_factory=dict)
    remote_shards: tuple[RemoteShard, ...] = ()
    #: a file holding the shared secret with which shards join the running arena (``okgin arena
    #: shard --join``, protocol 1.7 ``shard_join``); None: the front refuses every shard_join
    join_key_file: str | None = None
    # Hosted bots (arena.hosted, docs/arena.md "Hosted bots"): rated games between them per
    # hour (0: none), at most this many at once, on this clock preset; a submission's size.
    hosted_games_per_hour: int = 60
    hosted_concurrency: int = 2
    hosted_clock: str = "blitz"
    hosted_max_mb: int = 64
    hosted_max_files: int = 10_000
    # A Dask scheduler's address (or "local"): hosted games are played on its workers, as
    # ``okgin tournament --dask``; None plays them on this host. dask_tls: `okgin cluster certs`'s directory.
    dask: str | None = None
    dask_tls: str | None = None
    #: the web face's HOST:PORT (arena/web/), or None for none; ``okgin arena`` serves it on
    #: 127.0.0.1:7119 unless told ``--web``/``--no-web`` (an embedded Arena only when set)
    web: str | None = None
    web_poll_ms: int = 1000  # how often the web's live feed looks for finished games
    #: connections one host may hold at the front and at each local shard (the referee's cap
    #: against one host taking every connection; 0: none). Many bots behind one address (a
    #: competition's bot server, NAT) need more than the referee's default.
    max_connections_per_host: int = 512

    @property
    def variants(self) -> tuple[str, ...]:
        return ("oklahoma", "box")


_INTS = ("shards", "show_up_ms", "disconnect_grace_ms", "cooldown_ms", "max_cooldown_ms", "heartbeat_ms", "liveness",
         "match_every_ms", "widen_every_ms", "advice_window_ms", "hosted_games_per_hour", "hosted_concurrency", "hosted_max_mb",
         "hosted_max_files", "web_poll_ms", "max_connections_per_host")
_STRS = ("name", "bind", "state", "db", "hosted_clock", "dask", "dask_tls", "join_key_file")
_TOP = {*_INTS, *_STRS, "insecure", "curve", "clocks", "rules", "remote_shards"}


def is_loopback(endpoint: str) -> bool:
    """Whether a ZeroMQ endpoint is reachable from this host only (ipc:// or a loopback tcp address)."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # an interface name or "*": every address


def is_loopback_host(host: str) -> bool:
    """Whether a host name or address is this host only (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_web(text: str) -> tuple[str, int]:
    """The web's ``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port); port 0 picks a free one.

    >>> parse_web("127.0.0.1:7119"), parse_web("[::1]:0")
    (('127.0.0.1', 7119), ('::1', 0))
    """
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--web takes HOST:PORT (for example {DEFAULT_WEB}), not {text!r}")
    return host, int(port)


def _int(key: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ConfigError(f"{key} must be a whole number from {lo} to {hi}, got {v!r}")
    return v


def load_config(path: str | os.PathLike[str] | None = None, **overrides: Any) -> ArenaConfig:
    """The settings of ``path`` (a TOML file, or None for the defaults), with the command
    line's ``overrides`` (None values ignored) laid over them, checked."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as e:
            raise ConfigError(f"cannot read {path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path} is not TOML: {e}") from None
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(_TOP))})")
    kw: dict[str, Any] = {}
    for k in _INTS:
        if k in data:
            kw[k] = _int(k, data[k], {"liveness": 1, "widen_every_ms": 1, "web_poll_ms": 50}.get(k, 0),
                         MAX_ADVICE_WINDOW_MS if k == "advice_window_ms" else 10**9)
    for k in _STRS:
        if k in data:
            if not isinstance(data[k], str) or not data[k]:
                raise ConfigError(f"{k} must be a non-empty string")
            kw[k] = Path(data[k]) if k == "state" else data[k]
    if "insecure" in data:
        if not isinstance(data["insecure"], bool):
            raise ConfigError("insecure must be true or false")
        kw["insecure"] = data["insecure"]
    curve = data.get("curve", {})
    if not isinstance(curve, dict) or set(curve) - {"keys"}:
        raise ConfigError("[curve] takes one key: keys (a directory holding server.key_secret)")
    if "keys" in curve:
        kw["curve_keys"] = str(curve["keys"])
    if "clocks" in data:
        clocks = data["clocks"]
        if not isinstance(clocks, dict) or not clocks:
            raise ConfigError("[clocks.NAME] tables: at least one clock preset")
        made: dict[str, Clock] = {}
        for name, c in clocks.items():
            if not isinstance(c, dict) or not 1 <= len(name) <= 40 or not name.isascii():
                raise ConfigError(f"clocks.{name}: a table of move_ms, bank_ms, increment_ms, grace_ms under an ASCII name")
            try:
                made[name] = Clock().merge(c)
            except ProtocolError as e:
                raise ConfigError(f"clocks.{name}: {e.message}") from None
        kw["clocks"] = made
    if "rules" in data:
        rules = data["rules"]
        if not isinstance(rules, dict) or "variant" in rules:
            raise ConfigError("[rules]: rule options (docs/rules.md §8) without 'variant' (a seek names it)")
        for v in ("oklahoma", "box"):
            try:
                RuleSet.from_dict({**rules, "variant": v})
            except (RuleError, TypeError, ValueError) as e:
                raise ConfigError(f"[rules]: {e}") from None
        kw["rules"] = dict(rules)
    if "remote_shards" in data:
        remotes = data["remote_shards"]
        if not isinstance(remotes, list):
            raise ConfigError("[[remote_shards]]: a list of tables of endpoint, admin_key_file, server_key")
        made_r = []
        for i, r in enumerate(remotes):
            if not isinstance(r, dict) or set(r) != {"endpoint", "admin_key_file", "server_key"} or not all(
                    isinstance(v, str) and v for v in r.values()):
                raise ConfigError(f"remote_shards[{i}] needs exactly endpoint, admin_key_file and server_key (strings)")
            if not r["endpoint"].startswith("tcp://"):
                raise ConfigError(f"remote_shards[{i}].endpoint must be tcp://HOST:PORT")
            made_r.append(RemoteShard(r["endpoint"], r["admin_key_file"], r["server_key"]))
        kw["remote_shards"] = tuple(made_r)
    cfg = ArenaConfig(**kw)
    over = {k: v for k, v in overrides.items() if v is not None}
    if "state" in over:
        over["state"] = Path(over["state"])
    cfg = replace(cfg, **over)
    if cfg.shards < 0 or (cfg.shards + len(cfg.remote_shards) < 1 and cfg.join_key_file is None):
        raise ConfigError("shards must be at least 1 (or 0 with [[remote_shards]] or join_key_file)")
    if "standard" not in cfg.clocks:
        raise ConfigError("the clock presets must include 'standard' (a seek naming none asks for it)")
    if cfg.hosted_clock not in cfg.clocks:
        raise ConfigError(f"hosted_clock {cfg.hosted_clock!r} is not a clock preset ({', '.join(sorted(cfg.clocks))})")
    if cfg.hosted_games_per_hour == 1:
        raise ConfigError("hosted_games_per_hour must be 0 (no hosted games) or at least 2: two hosted bots play a deal "
                          "in both seatings, two games")
    if cfg.hosted_concurrency < 1:
        raise ConfigError("hosted_concurrency must be at least 1")
    return cfg
