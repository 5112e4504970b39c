"""okgin: Oklahoma Gin and Gin in the Box. The pure engine: no sockets, no threads.

The public API, by docs/rules.md section:

- §1 cards: :func:`parse_card`, :func:`card_str`, :func:`value` (a card is an int 0-51)
- §2 melds: :func:`deadwood`, :func:`best_melds`, :func:`is_meld`
- §3-4 the game: :class:`RuleSet`, :class:`Game`, :class:`Action`, :class:`IllegalAction`
- §5 information: :meth:`Game.view` returns a :class:`View`; :meth:`Game.resample`
  redeals what one seat cannot see (:mod:`okgin.infostate`), :meth:`Game.copy` for search
- §6 reproducibility: :meth:`Game.to_record`, :meth:`Game.from_record`
- tests and analysis: :func:`game_from_position` starts a game from chosen hands
"""

from .actions import DRAW_DISCARD, DRAW_STOCK, PASS, TAKE, Action
from .cards import Card, card_str, cards_of, mask_of, parse_card, parse_cards, pretty, value
from .enums import Phase, Termination
from .errors import IllegalAction, RuleError
from .game import Game
from .layoffs import Defence, best_defence
from .melds import Arrangement, best_melds, deadwood, deadwood_mask, is_meld, is_run, is_set
from .position import game_from_position
from .record import RecordMismatch, canonical_json
from .rules import RuleSet
from .scoring import HandResult
from .views import Advice, Event, View

__version__ = "0.1.0"

__all__ = [
    "DRAW_DISCARD",
    "DRAW_STOCK",
    "PASS",
    "TAKE",
    "Action",
    "Advice",
    "Arrangement",
    "Card",
    "Defence",
    "Event",
    "Game",
    "HandResult",
    "IllegalAction",
    "Phase",
    "RecordMismatch",
    "RuleError",
    "RuleSet",
    "Termination",
    "View",
    "best_defence",
    "best_melds",
    "canonical_json",
    "card_str",
    "cards_of",
    "deadwood",
    "deadwood_mask",
    "game_from_position",
    "is_meld",
    "is_run",
    "is_set",
    "mask_of",
    "parse_card",
    "parse_cards",
    "pretty",
    "value",
]
