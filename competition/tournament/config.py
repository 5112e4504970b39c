"""The tournament file: TOML in, a validated :class:`TournamentConfig` out.

Why TOML (``tomllib``, in the standard library since 3.11): an organiser writes it by
hand, comments are allowed, and there is exactly one way to spell a list of bots
(``[[participant]]`` tables). Every mistake is reported as a :class:`ConfigError` whose
message names the offending key by its TOML path (``participant[2].command``), so a
typo never turns into a silently different tournament.

The parts that decide *which games are played* (format, participants, games per
pairing, duplicate deals, seed, rules, clock, policies, SPRT bounds) form the
config's :meth:`~TournamentConfig.fingerprint`: ``--resume`` refuses a results file made
with a different one, because resuming it would mix two tournaments. The parts that only
decide *how* they are played (concurrency, referees, database path) may change between
a run and its resume.

See ``docs/tournaments.md`` for the reference and a complete example.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from okgin import RuleError, RuleSet
from okgin.endpoint import EndpointError, parse_endpoint
from okgin.protocol.settings import ILLEGAL_POLICIES, TIMEOUT_POLICIES, Clock, Policies
from okgin.rules import EVENT_MAX_HANDS
from okgin.schedule import commitment, parse_secret, secret_from_seed

from .cgroups import default_cpu_s
from .sandbox import LIMIT_KEYS, NETWORKS, Limits
from .sprt import Sprt

FORMATS = ("round_robin", "gauntlet", "box", "sprt")
PLACEHOLDERS = ("endpoint", "table", "name", "game", "config_dir")
# Why no {token}: it would put the seat token on the bot's command line, which every local
# user can read (/proc/PID/cmdline, ps) and so play or resign the seat. The token is in
# the bot's environment (OKGIN_TOKEN), readable by its own uid and root only.
TOKEN_PLACEHOLDER_HELP = (
    "{token} would put the seat token on the bot's command line, where any local user can read it "
    "(ps, /proc/PID/cmdline) and take the seat; read it from the environment variable $OKGIN_TOKEN instead "
    "(okgin bot and the example bots in C, JavaScript, Rust and Java do when --token is not given)")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")


class ConfigError(ValueError):
    """The tournament file is wrong; the message says where and how to fix it."""


@dataclass(frozen=True)
class Participant:
    """One entrant. Exactly one of ``bot``, ``command`` or ``remote`` says how it plays.

    - ``bot``: a built-in bot name or ``file.py:Class``, run as ``okgin bot BOT --connect
      ENDPOINT ...`` for every game (the runner never imports bots: referee/ must not
      import clients/).
    - ``command``: any program in any language, launched for every game with the
      placeholders ``{endpoint}``, ``{table}``, ``{name}``, ``{game}`` and
      ``{config_dir}`` filled in (also given as ``OKGIN_ENDPOINT``, ``OKGIN_TABLE`` in its
      environment). Its seat token is only in its environment (``OKGIN_TOKEN``): a
      ``{token}`` placeholder is refused (:data:`TOKEN_PLACEHOLDER_HELP`).
    - ``remote``: a bot run by someone else that connects over the network with the
      ``token`` the organiser hands out (given here, or generated and kept in the
      results file so a resumed run issues the same one).
    """

    name: str
    kind: str  # "bot" | "command" | "remote"
    bot: str | None = None
    args: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    token: str | None = None
    # The sandbox (see .sandbox): its program directories, shown read-only (empty: the
    # command's own), limits overriding [limits], and "tcp" for a bot that cannot use ipc://.
    dirs: tuple[str, ...] = ()
    limits: tuple[tuple[str, int], ...] = ()
    network: str = "none"
    # Dask resources a worker must offer to run it (``resources = {GPU = 1}``), for a run
    # with ``--dask`` (competition.cluster): its games go only to such workers.
    resources: tuple[tuple[str, float], ...] = ()

    def describe(self) -> str:
        if self.kind == "bot":
            return f"built-in bot {self.bot}"
        if self.kind == "command":
            return "command " + shlex.join(self.command)
        return "remote bot"


# The table's clock and policies are the protocol's own types (okgin.protocol.settings),
# the ones the referee checks a create_table against. The clock's grace_ms absorbs
# network and harness latency, so that load on the organiser's machine is not charged to
# a bot as a timeout. Tournaments forfeit by default, and their disconnect grace is
# shorter than the referee's (30 s): a bot process that dies is noticed by the runner at
# once anyway (it resigns the seat for it), and a bot whose host vanished should not
# hold a table for long.
TOURNAMENT_POLICIES = Policies(timeout="forfeit", illegal="forfeit", illegal_limit=1, disconnect_grace_ms=10_000)


@dataclass(frozen=True)
class SprtSettings:
    """The config's ``[sprt]`` table: a sequential probability ratio test of ``candidate``
    against ``baseline``, which :meth:`test` turns into the test itself
    (:class:`.sprt.Sprt`, the one SPRT).

    H0: the candidate is ``elo0`` Elo stronger; H1: ``elo1`` stronger. ``alpha`` is the
    chance of accepting H1 when H0 holds, ``beta`` the chance of accepting H0 when H1
    holds. The run stops as soon as the test decides, or after ``max_games``.
    """

    candidate: str
    baseline: str
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 2000
    model: str = "logistic"  # "normalized": elo0/elo1 are normalized Elo (competition.tournament.sprt)

    def test(self) -> Sprt:
        """The test these settings describe."""
        return Sprt(self.elo0, self.elo1, self.alpha, self.beta, self.model)


@dataclass(frozen=True)
class Ratings:
    """How the table is rated (see :mod:`.ratings`)."""

    prior_draws: float = 1.0  # virtual draws per pair that met: keeps 100% scores finite
    anchor: str | None = None  # a participant held at ``anchor_rating``; else the mean is 0
    anchor_rating: float = 0.0


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    format: str
    participants: tuple[Participant, ...]
    rules: RuleSet
    # None: a random event secret (secret deals). Otherwise a *fixed* secret, which makes
    # the event reproducible but not secret: ``seed`` (any text, hashed) or ``secret``
    # (64 hex digits, used as it is). See :mod:`okgin.schedule`.
    seed: str | None = None
    secret: str | None = None
    games_per_pairing: int = 2
    duplicate: bool = True
    # Duplicate deals for pairings with a remote participant too: False (the default)
    # gives each of their games a deal of its own, since a remote bot can remember one
    # seating's cards at the other (docs/tournaments.md, What each participant can learn).
    remote_duplicate: bool = False
    champion: str | None = None
    time_control: Clock = field(default_factory=Clock)
    policies: Policies = TOURNAMENT_POLICIES
    sprt: SprtSettings | None = None
    ratings: Ratings = field(default_factory=Ratings)
    # How, not what: may change between a run and its resume.
    concurrency: int = 2
    referees: int = 1
    referee_endpoints: tuple[str, ...] = ()
    database: str = ""
    output_dir: str = ""
    stall_timeout: float = 120.0
    # A remote participant not connected to the gateway for this long (from the start,
    # or from its bye) forfeits its games (termination no_show); the others play on.
    no_show_s: float = 300.0
    # Bot logs (.botlog): per bot and game, and the event's total.
    bot_log_kb: int = 1024
    bot_logs_total_mb: int = 256
    gateway: str = ""
    # CURVE on the gateway (referee.security's files): its key pair directory and the
    # remote bots' public keys (a directory of *.key, or "any"); "" reads the
    # OKGIN_GATEWAY_CURVE_KEYS / OKGIN_GATEWAY_ALLOW environment instead (.gateway).
    gateway_curve_keys: str = ""
    gateway_allow: str = ""
    admin_key: str = ""
    config_dir: str = "."
    config_file: str = ""
    # Local participants run in a bubblewrap sandbox (.sandbox); False runs them unconfined
    # and the report marks the event "unsandboxed".
    sandbox: bool = True
    limits: Limits = field(default_factory=Limits)
    # [cluster]: where a Dask run plays (competition.cluster); how, not what, like referees.
    cluster_scheduler: str = ""
    cluster_tls: str = ""
    cluster_timeout: float = 10.0

    @property
    def seats(self) -> int:
        return self.rules.num_players

    @property
    def seatings_per_deal(self) -> int:
        """Games that share one deal: every seating of the pairing (2, or 6 for a triple)."""
        return math.factorial(self.seats) if self.duplicate else 1

    @property
    def independent_names(self) -> frozenset[str]:
        """The participants whose pairings get a deal per game, not duplicate deals: the
        remote ones, unless ``remote_duplicate`` (and nobody without duplicate deals,
        where every game has its own deal anyway)."""
        return independent_names(self.duplicate, self.remote_duplicate,
                                 [p.name for p in self.participants if p.kind == "remote"])

    def unit_games(self, pairing: Sequence[str]) -> int:
        """Games of ``pairing`` that share one deal: the unit of its paired statistics."""
        return 1 if self.independent_names & set(pairing) else self.seatings_per_deal

    @property
    def fixed_secret(self) -> bytes | None:
        """The organiser's fixed secret, or None for a random one (the default)."""
        if self.secret is not None:
            return parse_secret(self.secret)
        if self.seed is not None:
            return secret_from_seed(self.seed)
        return None

    def participant(self, name: str) -> Participant:
        for p in self.participants:
            if p.name == name:
                return p
        raise KeyError(name)

    def fingerprint_data(self) -> dict[str, Any]:
        """Everything that decides which games are played and how they are judged.

        Not the sandbox's limits (``[limits]``, a participant's ``limits``): adding them
        would change the fingerprint of every existing results file, so none could be
        resumed after an upgrade. A resumed event may so run under other limits; the
        report names what enforced them (cgroups or per-process rlimits)."""
        return {
            "format": self.format,
            "participants": [
                {"name": p.name, "kind": p.kind, "bot": p.bot, "args": list(p.args), "command": list(p.command)}
                for p in self.participants
            ],
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            # The commitment of a fixed secret (never the secret: this goes into reports).
            "secret": None if self.fixed_secret is None else commitment(self.fixed_secret),
            "games_per_pairing": self.games_per_pairing,
            "duplicate": self.duplicate,
            "remote_duplicate": self.remote_duplicate,
            "champion": self.champion,
            "time_control": asdict(self.time_control),
            "policies": asdict(self.policies),
            "sprt": None if self.sprt is None else asdict(self.sprt),
        }

    def fingerprint(self) -> str:
        text = json.dumps(self.fingerprint_data(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def resolve_path(self, p: str) -> Path:
        path = Path(p).expanduser()
        return path if path.is_absolute() else Path(self.config_dir) / path

    @property
    def database_path(self) -> Path:
        return self.resolve_path(self.database or f"{self.name}.sqlite")

    @property
    def output_path(self) -> Path:
        return self.resolve_path(self.output_dir) if self.output_dir else self.database_path.parent


# ----------------------------------------------------------------------------- parsing
class _Section:
    """A TOML table being read: typed getters that name the key path in every error,
    and a final check that no unknown key was left (a typo must not pass silently)."""

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(f"{path} must be a table, not {_kind(data)}")
        self.data = data
        self.path = path
        self.used: set[str] = set()

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def get(self, key: str, default: Any = None) -> Any:
        self.used.add(key)
        return self.data.get(key, default)

    def has(self, key: str) -> bool:
        return key in self.data

    def string(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        v = self.get(key)
        if v is None:
            if required:
                raise ConfigError(f"{self.where(key)} is required")
            return default
        if not isinstance(v, str) or not v:
            raise ConfigError(f"{self.where(key)} must be a non-empty string, not {_kind(v)} {v!r}")
        return v

    def number(self, key: str, default: float, lo: float, hi: float) -> float:
        v = self.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ConfigError(f"{self.where(key)} must be a number, not {_kind(v)} {v!r}")
        if not lo <= v <= hi:
            raise ConfigError(f"{self.where(key)} must be between {lo:g} and {hi:g}, not {v:g}")
        return float(v)

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        v = self.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{self.where(key)} must be a whole number, not {_kind(v)} {v!r}")
        if not lo <= v <= hi:
            raise ConfigError(f"{self.where(key)} must be between {lo} and {hi}, not {v}")
        return v

    def boolean(self, key: str, default: bool) -> bool:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise ConfigError(f"{self.where(key)} must be true or false, not {_kind(v)} {v!r}")
        return v

    def choice(self, key: str, default: str, options: tuple[str, ...]) -> str:
        v = self.string(key, default)
        assert v is not None
        if v not in options:
            raise ConfigError(f"{self.where(key)} must be one of {', '.join(options)}, not {v!r}")
        return v

    def string_list(self, key: str) -> tuple[str, ...] | None:
        v = self.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise ConfigError(f"{self.where(key)} must be a list of strings, not {_kind(v)} {v!r}")
        return tuple(v)

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            where = f" in [{self.path}]" if self.path else " at the top level"
            raise ConfigError(f"unknown key(s) {', '.join(unknown)}{where}; see docs/tournaments.md for the known ones")


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(v), type(v).__name__
    )


def _seed_text(v: Any, where: str) -> str:
    if isinstance(v, bool) or not isinstance(v, int | str) or v == "":
        raise ConfigError(f"{where} must be a string or a whole number, not {_kind(v)} {v!r}")
    return str(v)


def _participant(i: int, data: Any) -> Participant:
    s = _Section(data, f"participant[{i}]")
    name = s.string("name", required=True)
    assert name is not None
    if not NAME_RE.match(name):
        raise ConfigError(
            f"{s.where('name')} {name!r}: use 1-40 letters, digits and _ . + - (starting with a letter or digit), "
            "so it is safe in tables, CSV and file names"
        )
    kinds = [k for k in ("bot", "command", "remote") if s.has(k)]
    if len(kinds) != 1:
        raise ConfigError(
            f"participant[{i}] ({name}) needs exactly one of bot = \"NAME\", command = [...] or remote = true; "
            + (f"it has {' and '.join(kinds)}" if kinds else "it has none")
        )
    kind = kinds[0]
    env_data = s.get("env", {})
    if not isinstance(env_data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env_data.items()):
        raise ConfigError(f"{s.where('env')} must be a table of string values")
    cwd = s.string("cwd")
    args = s.string_list("args") or ()
    raw_dir = s.get("dir")
    if raw_dir is None:
        dirs: tuple[str, ...] = ()
    elif isinstance(raw_dir, str) and raw_dir:
        dirs = (raw_dir,)
    elif isinstance(raw_dir, list) and raw_dir and all(isinstance(x, str) and x for x in raw_dir):
        dirs = tuple(raw_dir)
    else:
        raise ConfigError(f"{s.where('dir')} must be a directory or a list of directories, not {_kind(raw_dir)} {raw_dir!r}")
    limits = _limits(s.get("limits"), s.where("limits")) if s.has("limits") else ()
    # "host", its old name, now means "tcp": the bot no longer shares the host's network (.sandbox).
    network = s.choice("network", "none", (*NETWORKS, "host")).replace("host", "tcp")
    resources = _resources(s.get("resources"), s.where("resources")) if s.has("resources") else ()
    token = s.string("token")
    if kind == "bot":
        bot = s.string("bot", required=True)
        p = Participant(name, "bot", bot=bot, args=args, cwd=cwd, env=tuple(sorted(env_data.items())), dirs=dirs,
                        limits=limits, network=network, resources=resources)
    elif kind == "command":
        raw = s.get("command")
        if isinstance(raw, str):
            try:
                cmd = tuple(shlex.split(raw))
            except ValueError as e:
                raise ConfigError(f"{s.where('command')}: cannot split {raw!r} into words: {e}") from None
        elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            cmd = tuple(raw)
        else:
            raise ConfigError(f"{s.where('command')} must be a string or a list of strings, not {_kind(raw)}")
        if not cmd or not cmd[0]:
            raise ConfigError(f"{s.where('command')} is empty")
        for word in cmd:
            for ph in re.findall(r"\{([^{}]*)\}", word):
                if ph == "token":
                    raise ConfigError(f"{s.where('command')}: {TOKEN_PLACEHOLDER_HELP}")
                if ph not in PLACEHOLDERS:
                    raise ConfigError(
                        f"{s.where('command')}: unknown placeholder {{{ph}}}; known: "
                        + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                    )
        if args:
            raise ConfigError(f"{s.where('args')} is for built-in bots; put a command's arguments in the command itself")
        p = Participant(name, "command", command=cmd, cwd=cwd, env=tuple(sorted(env_data.items())), dirs=dirs,
                        limits=limits, network=network, resources=resources)
    else:
        if s.get("remote") is not True:
            raise ConfigError(f"{s.where('remote')} must be true (a remote bot connects by itself)")
        if cwd or env_data or args or dirs or limits or s.has("network") or resources:
            raise ConfigError(f"participant[{i}] ({name}) is remote: cwd, env, args, dir, limits, network and resources "
                              "do not apply (it runs outside the sandbox, elsewhere)")
        p = Participant(name, "remote", token=token)
    if token and kind != "remote":
        raise ConfigError(f"{s.where('token')}: only remote bots are handed a token in advance (the runner issues the others)")
    s.done()
    return p


def _resources(data: Any, where: str) -> tuple[tuple[str, float], ...]:
    """A participant's Dask resources (``{GPU = 1, licence = 1}``): names a ``dask worker
    --resources`` can offer, each a positive amount a game of it uses on its worker."""
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{where} must be a table of resource amounts, like {{GPU = 1}}, not {_kind(data)} {data!r}")
    out = []
    for k, v in sorted(data.items()):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", k):
            raise ConfigError(f"{where}: {k!r} is not a resource name a Dask worker can offer (letters, digits, _ . -)")
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
            raise ConfigError(f"{where}.{k} must be a positive number, not {_kind(v)} {v!r}")
        out.append((k, float(v)))
    return tuple(out)


def _limits(data: Any, where: str) -> tuple[tuple[str, int], ...]:
    """A limits table ([limits] or a participant's limits = {...}): whole numbers >= 1."""
    s = _Section(data if data is not None else {}, where)
    # Lowest: what a sandbox needs to start at all (bubblewrap, the namespace's init and the
    # bot are 3 processes; the interpreter's memory); "cpus": whole CPUs (a cgroup's quota).
    los = {"memory_mb": 16, "cpu_s": 1, "processes": 4, "file_mb": 1, "cpus": 1}
    his = {"memory_mb": 1 << 20, "cpu_s": 10 * 86400, "processes": 1 << 16, "file_mb": 1 << 20, "cpus": 1024}
    out = tuple((k, s.integer(k, 0, los[k], his[k])) for k in LIMIT_KEYS if s.has(k))
    s.done()
    return out


def parse_config(data: dict[str, Any], config_dir: str | Path = ".", default_name: str = "tournament") -> TournamentConfig:
    """Validate a parsed TOML document (a dict) into a :class:`TournamentConfig`."""
    top = _Section(data, "")
    if "time_control" in data:
        raise ConfigError("the time control is the [clock] table (move_ms, bank_ms, increment_ms, grace_ms), as in protocol.md")
    if "participants" in data and "participant" not in data:
        raise ConfigError("write each entrant as a [[participant]] table (singular), not [[participants]]")
    t = _Section(top.get("tournament", {}), "tournament")
    name = t.string("name", default_name)
    assert name is not None
    if not NAME_RE.match(name):
        raise ConfigError(f"tournament.name {name!r}: use 1-40 letters, digits and _ . + - (it names the output files)")
    fmt = t.choice("format", "round_robin", FORMATS)

    # Rules: any RuleSet option by its docs/rules.md name (§8); the format decides the variant.
    rules_data = top.get("rules", {})
    if not isinstance(rules_data, dict):
        raise ConfigError("[rules] must be a table of rule options (see `okgin rules`)")
    rules_data = dict(rules_data)
    want_variant = "box" if fmt == "box" else "oklahoma"
    if rules_data.setdefault("variant", want_variant) != want_variant:
        raise ConfigError(
            f"rules.variant = {rules_data['variant']!r} does not fit format = {fmt!r}: "
            + ('the box format plays Gin in the Box (variant "box")' if fmt == "box" else 'use format = "box" for 3-player games')
        )
    # An event's games end (docs/rules.md §3.7.1): the game limit unless the file says otherwise.
    rules_data.setdefault("max_hands", EVENT_MAX_HANDS)
    try:
        rules = RuleSet.from_dict(rules_data)
    except (RuleError, TypeError) as e:
        raise ConfigError(f"[rules]: {e}") from None

    raw_parts = top.get("participant")
    if not isinstance(raw_parts, list) or not raw_parts:
        raise ConfigError("no participants: add one [[participant]] table per entrant (name plus bot, command or remote)")
    participants = tuple(_participant(i, p) for i, p in enumerate(raw_parts))
    names = [p.name for p in participants]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ConfigError(f"participant names must be unique; repeated: {', '.join(dups)}")
    tokens = [p.token for p in participants if p.token]
    if len(tokens) != len(set(tokens)):
        raise ConfigError("two remote participants were given the same token")

    raw_seed = t.get("seed")
    seed = None if raw_seed is None else _seed_text(raw_seed, "tournament.seed")
    secret = t.string("secret")
    if secret is not None:
        if not re.fullmatch(r"[0-9a-f]{64}", secret):
            raise ConfigError("tournament.secret must be 64 lowercase hex digits (32 bytes), e.g. from "
                              "`python -c 'import secrets; print(secrets.token_hex(32))'`")
        if seed is not None:
            raise ConfigError("give tournament.seed or tournament.secret (both fix the deals), not both")
    duplicate = t.boolean("duplicate", True)
    remote_duplicate = t.boolean("remote_duplicate", False)
    seatings = math.factorial(rules.num_players) if duplicate else 1
    games = t.integer("games_per_pairing", seatings, 1, 1_000_000)
    if games % seatings:
        raise ConfigError(
            f"tournament.games_per_pairing = {games} is not a multiple of {seatings}: with duplicate deals every deal is "
            f"played in all {seatings} seatings" + (" of the triple" if seatings == 6 else " (seats swapped)")
            + "; set duplicate = false to allow any number"
        )
    champion = t.string("champion")
    if fmt == "gauntlet":
        if champion is None:
            raise ConfigError("format = \"gauntlet\" needs tournament.champion = NAME (the one who plays everyone)")
        if champion not in names:
            raise ConfigError(f"tournament.champion {champion!r} is not a participant ({', '.join(names)})")
        if len(names) < 2:
            raise ConfigError("a gauntlet needs the champion and at least one opponent")
    elif champion is not None:
        raise ConfigError(f"tournament.champion only applies to format = \"gauntlet\" (this is {fmt})")
    if fmt == "round_robin" and len(names) < 2:
        raise ConfigError("a round robin needs at least two participants")
    if fmt == "box" and len(names) < 3:
        raise ConfigError("a box tournament needs at least three participants (every triple plays)")

    sprt: SprtSettings | None = None
    if fmt == "sprt":
        ss = _Section(top.get("sprt", {}), "sprt")
        cand = ss.string("candidate", required=True)
        base = ss.string("baseline", required=True)
        assert cand is not None and base is not None
        for key, who in (("candidate", cand), ("baseline", base)):
            if who not in names:
                raise ConfigError(f"sprt.{key} {who!r} is not a participant ({', '.join(names)})")
        if cand == base:
            raise ConfigError("sprt.candidate and sprt.baseline must be two different participants")
        if len(names) != 2:
            raise ConfigError(f"an SPRT plays exactly two participants (candidate and baseline); this file has {len(names)}")
        elo0 = ss.number("elo0", 0.0, -1000, 1000)
        elo1 = ss.number("elo1", 20.0, -1000, 1000)
        if elo1 <= elo0:
            raise ConfigError(f"sprt.elo1 ({elo1:g}) must be greater than sprt.elo0 ({elo0:g})")
        alpha = ss.number("alpha", 0.05, 1e-6, 0.5)
        beta = ss.number("beta", 0.05, 1e-6, 0.5)
        max_games = ss.integer("max_games", 2000, seatings, 10_000_000)
        model = ss.choice("model", "logistic", ("logistic", "normalized"))
        ss.done()
        sprt = SprtSettings(cand, base, elo0, elo1, alpha, beta, max_games, model)
    elif "sprt" in data:
        raise ConfigError(f"an [sprt] table needs format = \"sprt\" (this is {fmt})")

    tc_s = _Section(top.get("clock", {}), "clock")
    tc = Clock(
        move_ms=tc_s.integer("move_ms", 0, 0, 86_400_000),
        bank_ms=tc_s.integer("bank_ms", 0, 0, 7 * 86_400_000),
        increment_ms=tc_s.integer("increment_ms", 0, 0, 3_600_000),
        grace_ms=tc_s.integer("grace_ms", 1000, 0, 60_000),
    )
    tc_s.done()
    if tc.increment_ms and not tc.bank_ms:
        raise ConfigError("clock.increment_ms is added to a bank: set clock.bank_ms too")

    pol_s = _Section(top.get("policies", {}), "policies")
    pol = Policies(
        timeout=pol_s.choice("timeout", TOURNAMENT_POLICIES.timeout, TIMEOUT_POLICIES),
        illegal=pol_s.choice("illegal", TOURNAMENT_POLICIES.illegal, ILLEGAL_POLICIES),
        illegal_limit=pol_s.integer("illegal_limit", TOURNAMENT_POLICIES.illegal_limit, 1, 1000),
        disconnect_grace_ms=pol_s.integer("disconnect_grace_ms", TOURNAMENT_POLICIES.disconnect_grace_ms, 0, 3_600_000),
    )
    pol_s.done()

    r_s = _Section(top.get("ratings", {}), "ratings")
    ratings = Ratings(
        prior_draws=r_s.number("prior_draws", 1.0, 0, 100),
        anchor=r_s.string("anchor"),
        anchor_rating=r_s.number("anchor_rating", 0.0, -10000, 10000),
    )
    r_s.done()
    if ratings.anchor is not None and ratings.anchor not in names:
        raise ConfigError(f"ratings.anchor {ratings.anchor!r} is not a participant ({', '.join(names)})")

    concurrency = t.integer("concurrency", 2, 1, 256)
    referees = t.integer("referees", 1, 1, 64)
    endpoints = t.string_list("referee_endpoints") or ()
    try:
        endpoints = tuple(parse_endpoint(ep) for ep in endpoints)  # HOST:PORT welcome (okgin.endpoint)
    except EndpointError as e:
        raise ConfigError(f"tournament.referee_endpoints: {e}") from None
    if endpoints and t.has("referees"):
        raise ConfigError(
            "give tournament.referees (start local referees) or tournament.referee_endpoints (use running ones), not both"
        )
    gateway = t.string("gateway", "") or ""
    if gateway and not re.match(r"^tcp://\S+:\d+$", gateway):
        raise ConfigError(f"tournament.gateway: {gateway!r} is not a TCP endpoint like tcp://127.0.0.1:7200")
    if any(p.kind == "remote" for p in participants) and not gateway:
        # Remote bots must know where to connect before the run starts: the runner's
        # gateway, which seats them game after game on whichever referee plays it.
        raise ConfigError(
            "remote participants connect to the runner's gateway: set tournament.gateway = \"tcp://HOST:PORT\" "
            "and give each remote bot that address and its token"
        )
    gateway_curve_keys = t.string("gateway_curve_keys", "") or ""
    gateway_allow = t.string("gateway_allow", "") or ""
    if bool(gateway_curve_keys) != bool(gateway_allow):
        raise ConfigError("tournament.gateway_curve_keys and tournament.gateway_allow go together: the gateway's key pair "
                          "directory and the remote bots' public keys (a directory of *.key, or \"any\")")
    if gateway_curve_keys and not gateway:
        raise ConfigError("tournament.gateway_curve_keys: there is no tournament.gateway to encrypt")
    admin_key = t.string("admin_key", "") or ""
    database = t.string("database", "") or ""
    output_dir = t.string("output_dir", "") or ""
    stall = t.number("stall_timeout", 120.0, 1, 86400)
    no_show = t.number("no_show_s", 300.0, 1, 7 * 86400)
    bot_log_kb = t.integer("bot_log_kb", 1024, 0, 1024 * 1024)
    bot_logs_total_mb = t.integer("bot_logs_total_mb", 256, 0, 1024 * 1024)
    sandbox = t.boolean("sandbox", True)
    # The default CPU-seconds per game grow with the clock (cgroups.default_cpu_s).
    limits = Limits(cpu_s=default_cpu_s(tc)).merged(_limits(top.get("limits"), "limits"))
    c_s = _Section(top.get("cluster", {}), "cluster")
    cluster_scheduler = c_s.string("scheduler", "") or ""
    cluster_tls = c_s.string("tls", "") or ""
    cluster_timeout = c_s.number("timeout", 10.0, 0.1, 3600)
    c_s.done()
    t.done()
    top.done()
    return TournamentConfig(
        name=name,
        format=fmt,
        participants=participants,
        rules=rules,
        seed=seed,
        secret=secret,
        games_per_pairing=games,
        duplicate=duplicate,
        remote_duplicate=remote_duplicate,
        champion=champion,
        time_control=tc,
        policies=pol,
        sprt=sprt,
        ratings=ratings,
        concurrency=concurrency,
        referees=referees,
        referee_endpoints=endpoints,
        database=database,
        output_dir=output_dir,
        stall_timeout=stall,
        no_show_s=no_show,
        bot_log_kb=bot_log_kb,
        bot_logs_total_mb=bot_logs_total_mb,
        gateway=gateway,
        gateway_curve_keys=gateway_curve_keys,
        gateway_allow=gateway_allow,
        admin_key=admin_key,
        config_dir=str(Path(config_dir)),
        sandbox=sandbox,
        limits=limits,
        cluster_scheduler=cluster_scheduler,
        cluster_tls=cluster_tls,
        cluster_timeout=cluster_timeout,
    )


def independent_names(duplicate: bool, remote_duplicate: bool, remote: Iterable[str]) -> frozenset[str]:
    """:attr:`TournamentConfig.independent_names` from its parts (a report reads them
    from the stored config, which holds each participant's kind)."""
    return frozenset(remote) if duplicate and not remote_duplicate else frozenset()


def load_config(path: str | Path) -> TournamentConfig:
    """Read and validate a tournament file; errors name the file and the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    stem = re.sub(r"[^A-Za-z0-9_.+-]", "-", path.stem)[:40] or "tournament"
    try:
        return replace(parse_config(data, path.resolve().parent, default_name=stem), config_file=str(path.resolve()))
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
