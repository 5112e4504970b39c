"""``RuleSet``: the variant and every rule option of docs/rules.md (§8), validated.

Option names are exactly the ones docs/rules.md gives, so a rule found there can be
found here by its name. Defaults are the source documents' rules. ``knock_limit`` left
unset means "the variant's default": the upcard for Oklahoma Gin (§3.1), 10 for Gin in
the Box (§4).

One option is not in the traditional rules: ``max_pile_draws`` ends a hand that would otherwise never
end (docs/rules.md §3.6.2). The traditional rules have no end for a hand in
which both players keep drawing from the discard pile, since that never shrinks the stock.
A second, ``max_hands``, ends a *game* after that many hands (docs/rules.md §3.7.1): off
(0) by default, since the traditional game has no such end, and set by a tournament or a
match, where two bots that never knock would otherwise draw hand after hand for ever.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from .errors import RuleError

__all__ = [
    "BOX_BONUS", "DEFAULT_MAX_PILE_DRAWS", "EVENT_MAX_HANDS", "GAME_BONUS", "HOUSE_RULES",
    "MAX_HANDS_RANGE", "MAX_PILE_DRAWS_RANGE", "PRESETS", "SEATS", "VARIANTS", "Preset", "RuleSet",
    "Variant", "preset",
]

Variant = Literal["oklahoma", "box"]
VARIANTS: tuple[str, ...] = ("oklahoma", "box")
SEATS = {"oklahoma": 2, "box": 3}

# Classic bonuses (docs/rules.md §3.7): fixed by the rules, named here so the scorer says why.
GAME_BONUS = 100
BOX_BONUS = 25

# Not in the traditional rules (docs/rules.md §3.6.2): after this many draws
# from the discard pile in one hand, the next discard ends the hand as a drawn hand.
# OpenSpiel's gin_rummy caps upcard draws at 50 (kMaxNumDrawUpcardActions), but uniformly
# random play reaches 50 in about 1 hand in 120; sensible bots stay near 12. At 100 no
# built-in bot is ever affected and a loop still ends within 261 actions (the notes
# give the measurement).
DEFAULT_MAX_PILE_DRAWS = 100
MAX_PILE_DRAWS_RANGE = (1, 1000)

# Not in the traditional rules (docs/rules.md §3.7.1): the game ends after this many
# hands, the higher score winning (equal top scores: no winner). 0 = no limit, the
# engine's default; ``okgin tournament`` and ``okgin match`` default to
# EVENT_MAX_HANDS (their reasons are in the rules doc).
MAX_HANDS_RANGE = (0, 10000)
EVENT_MAX_HANDS = 100


@dataclass(frozen=True)
class RuleSet:
    """Every rule option of docs/rules.md §8. Immutable; use :meth:`with_options` to vary.

    >>> RuleSet().knock_limit_for_upcard(22)   # Td upcard
    10
    >>> RuleSet(variant="box").knock_limit_for_upcard(0)  # ace upcard, box game: always 10
    10
    >>> RuleSet.standard_gin().undercut_bonus
    25
    """

    variant: str = "oklahoma"
    knock_limit: int | str | None = None
    ace_upcard_gin_only: bool = False
    spade_upcard_doubles: bool = False
    allow_discard_of_taken_card: bool = False
    big_gin: bool = False
    big_gin_bonus: int = 31
    gin_bonus: int = 25
    undercut_bonus: int = 10
    tie_is_undercut: bool = True
    target_score: int = 100
    classic_bonuses: bool = False
    max_pile_draws: int = DEFAULT_MAX_PILE_DRAWS
    max_hands: int = 0

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise RuleError(f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        kl = self.knock_limit
        if kl is not None and kl != "upcard":
            if isinstance(kl, bool) or not isinstance(kl, int) or not 0 <= kl <= 10:
                raise RuleError(f"knock_limit must be 'upcard' or a whole number 0-10, not {kl!r}")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type == "bool" and not isinstance(v, bool):
                raise RuleError(f"{f.name} must be true or false, not {v!r}")
            if f.type == "int" and (isinstance(v, bool) or not isinstance(v, int)):
                raise RuleError(f"{f.name} must be a whole number, not {v!r}")
        for name in ("big_gin_bonus", "gin_bonus", "undercut_bonus"):
            if not 0 <= getattr(self, name) <= 1000:
                raise RuleError(f"{name} must be between 0 and 1000, not {getattr(self, name)}")
        if not 1 <= self.target_score <= 100000:
            raise RuleError(f"target_score must be between 1 and 100000, not {self.target_score}")
        lo, hi = MAX_PILE_DRAWS_RANGE
        if not lo <= self.max_pile_draws <= hi:
            # No "off": the option exists so that every hand ends (a referee, a match
            # runner and a tournament rely on it), so the largest value still ends it.
            raise RuleError(f"max_pile_draws must be between {lo} and {hi}, not {self.max_pile_draws}")
        lo, hi = MAX_HANDS_RANGE
        if not lo <= self.max_hands <= hi:
            raise RuleError(f"max_hands must be between {lo} (no limit) and {hi}, not {self.max_hands}")

    @property
    def num_players(self) -> int:
        return SEATS[self.variant]

    @property
    def effective_knock_limit(self) -> int | str:
        """``'upcard'`` or a fixed number, the variant's default applied."""
        if self.knock_limit is None:
            return "upcard" if self.variant == "oklahoma" else 10
        return self.knock_limit

    def knock_limit_for_upcard(self, upcard: int) -> int:
        """The hand's knock limit given its upcard (docs/rules.md §3.1 "Knock limit", §4).

        0 means only gin may end the hand (``ace_upcard_gin_only`` with an ace upcard,
        or a fixed limit of 0).
        """
        kl = self.effective_knock_limit
        rank = upcard % 13
        if kl == "upcard":
            limit = rank + 1 if rank < 10 else 10
        else:
            limit = int(kl)
        if self.ace_upcard_gin_only and rank == 0:
            limit = 0
        return limit

    def to_dict(self) -> dict[str, Any]:
        """Every option, for records and the wire (``knock_limit`` as resolved).

        ``max_hands`` only when it is set: a game without the limit is the game every
        record, journal and 1.4 client knew, byte for byte (protocol.md 6.7, 1.5)."""
        d = asdict(self)
        d["knock_limit"] = self.effective_knock_limit
        if not self.max_hands:
            del d["max_hands"]
        return d

    def __eq__(self, other: object) -> bool:
        """Equal when they make the same game: ``knock_limit`` unset is the variant's
        default, so ``RuleSet() == RuleSet(knock_limit="upcard")``, and a rule set read
        back from its own ``to_dict()`` (a record, the wire) equals the original."""
        if not isinstance(other, RuleSet):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_dict().items())))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Build from a mapping; unknown names are an error that lists the known ones."""
        if not isinstance(data, dict):
            raise RuleError(f"rules must be a map of option names to values, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RuleError(f"unknown rule option(s) {', '.join(map(str, unknown))}; known: {', '.join(sorted(known))}")
        return cls(**data)

    def with_options(self, **changes: Any) -> RuleSet:
        """A copy with some options changed (validated)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise RuleError(f"unknown rule option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return replace(self, **changes)

    def with_assignments(self, assignments: list[str]) -> RuleSet:
        """Apply ``NAME=VALUE`` strings as given on a command line (``--rule knock_limit=10``)."""
        changes: dict[str, Any] = {}
        types = {f.name: str(f.type) for f in fields(self)}  # annotations are strings here (postponed)
        for a in assignments:
            if "=" not in a:
                raise RuleError(f"--rule takes NAME=VALUE, got {a!r}")
            name, raw = (p.strip() for p in a.split("=", 1))
            if name not in types:
                raise RuleError(f"unknown rule option {name!r}; known: {', '.join(sorted(types))}")
            changes[name] = _parse_value(name, types[name], raw)
        return self.with_options(**changes)

    @classmethod
    def standard_gin(cls) -> RuleSet:
        """Standard gin rummy (most AI competitions): knock at 10, undercut bonus 25."""
        return cls(knock_limit=10, undercut_bonus=25)


def _parse_value(name: str, typ: str, raw: str) -> Any:
    low = raw.lower()
    if typ == "bool":
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise RuleError(f"{name} takes true or false, not {raw!r}")
    if typ == "int":
        try:
            return int(raw)
        except ValueError:
            raise RuleError(f"{name} takes a whole number, not {raw!r}") from None
    if name == "knock_limit":
        if low == "upcard":
            return "upcard"
        if low in ("", "default", "none"):
            return None
        try:
            return int(raw)
        except ValueError:
            raise RuleError(f"knock_limit takes 'upcard' or 0-10, not {raw!r}") from None
    return raw


@dataclass(frozen=True)
class Preset:
    """A named set of rule options (``--preset NAME`` on ``okgin play``, the lobby and
    ``okgin rules``). ``options`` are applied over the variant's defaults, so a preset
    means the same in both variants (a Gin in the Box knock limit stays 10)."""

    name: str
    summary: str
    options: dict[str, Any]

    def apply(self, variant: str = "oklahoma") -> RuleSet:
        opts = dict(self.options)
        if variant == "box":
            opts.pop("knock_limit", None)  # docs/rules.md §4: the box game always knocks at 10
        return RuleSet(variant=variant).with_options(**opts)


#: The common rule sets, defined once: ``okgin play``, ``okgin tui``'s lobby and
#: ``okgin rules --preset`` all read them from here.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("standard", "docs/rules.md as written: Oklahoma knock limit from the upcard, no house rules", {}),
        Preset(
            "classic-oklahoma",
            "the traditional Oklahoma house rules: an ace upcard means gin only, a spade upcard doubles, classic bonuses",
            {"ace_upcard_gin_only": True, "spade_upcard_doubles": True, "classic_bonuses": True},
        ),
        Preset("standard-gin", "standard gin rummy (most AI competitions): knock at 10, undercut bonus 25",
               {"knock_limit": 10, "undercut_bonus": 25}),
    )
}

#: The house rules a player is most likely to want, one line each (``okgin play``'s
#: ``--help``, the lobby's check list, the help screen): name -> (options, sentence).
HOUSE_RULES: dict[str, tuple[dict[str, Any], str]] = {
    "ace_upcard_gin_only": ({"ace_upcard_gin_only": True}, "ace upcard: only gin may end that hand"),
    "spade_upcard_doubles": ({"spade_upcard_doubles": True}, "spade upcard: the hand's points are doubled"),
    "classic_bonuses": ({"classic_bonuses": True}, "classic bonuses: game, box and shutout bonuses beside the plain score"),
    "standard_gin": (
        {"knock_limit": 10, "undercut_bonus": 25},
        "standard gin: knock at 10 whatever the upcard, undercut bonus 25",
    ),
}


def preset(name: str) -> Preset:
    """The preset called ``name``; an unknown name is a RuleError listing the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise RuleError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None
