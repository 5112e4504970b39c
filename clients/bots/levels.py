"""Graded opponents for people (``okgin play --bot LEVEL``), from beginner to ``strong``.

A weaker level is never a strong bot that blunders on purpose (a person notices a
thrown gin or a card given away for nothing, and it is no fun to beat). Each level is
a coherent way of playing that real players at that stage use, with the skills of the
level above simply absent:

- **beginner**: the EAAI challenge's baseline (:mod:`.eaai_simple`): picks up a card
  only to complete a meld, throws the card that leaves the least deadwood (any one of
  equals), knocks the moment it may;
- **casual**: okgin's ``simple``: the same, but among equal discards it throws the
  highest card (the first thing a new player learns);
- **club**: judges hands by what the next draw can bring (live pairs and connectors,
  which cards are still unseen) and draws by that, but does not read the opponent
  (no inference from its picks and discards, no care for what it may meld) and knocks
  as soon as it may;
- **expert**: ``strong-v1``, the strong bot of before issue 30: reads the opponent's
  picks, refusals and discards, keeps discards safe, and times its knocks by Monte
  Carlo over the opponent's possible hands;
- **master**: today's ``strong``: the expert, steering its draws and discards towards
  gin (a hand that can go gin counts 25 points better than its deadwood says).

:data:`clients.bots.LEVELS` lists them weakest first with their measured strength (Elo
against ``simple``, from bench/strength.md), which ``okgin play --help`` prints; it lives
in the registry so that the help imports no bot.
"""

from __future__ import annotations

from dataclasses import replace

from .eaai_simple import EaaiSimpleBot
from .simple import SimpleBot
from .strong import V1, StrongBot


class BeginnerBot(EaaiSimpleBot):
    """Level 1: the EAAI baseline."""

    name = "beginner"


class CasualBot(SimpleBot):
    """Level 2: okgin's simple player."""

    name = "casual"


class ClubBot(StrongBot):
    """Level 3: look-ahead draws and discards; no reading of the opponent; knocks at once."""

    name = "club"
    defaults = replace(V1, inference=False, danger_weight=0.0, mc_knock=False)


class ExpertBot(StrongBot):
    """Level 4: ``strong-v1``."""

    name = "expert"
    defaults = V1


class MasterBot(StrongBot):
    """Level 5: today's ``strong``."""

    name = "master"

