"""In-process play: bots against the engine directly, no sockets (fast self-play).

This is the reference loop the network SDK mirrors: the same hooks in the same order,
so a bot behaves the same in-process and through a referee. The order, for each bot:

1. ``on_game_start(seat, rules, num_seats)`` once;
2. for each hand: ``on_hand_start(view)``;
3. for each decision of the hand (Gin in the Box: before each captain decision the
   sitter's ``advise(view, captain_legal)``; if it advises, the captain's
   ``on_advice(advice, view)``), then the actor's ``choose(view, legal)``;
4. ``on_hand_end(result, view)`` when the hand is scored or drawn;
5. ``on_game_end(final, view)`` once.

Why the hooks are skipped for bots that do not override them: building a
:class:`okgin.View` is the dearest thing in this loop after the bots themselves, and a
hook a bot does not define cannot observe whether it was called. Skipping it changes
nothing a bot can see and makes self-play noticeably faster.
"""

from __future__ import annotations

from collections.abc import Sequence

from okgin import Action, Game, IllegalAction, RuleSet

from .bot import Bot


def overrides(bot: object, hook: str) -> bool:
    """Does ``bot`` define ``hook`` itself (not the do-nothing default of :class:`Bot`)?"""
    default = getattr(Bot, hook, None)
    mine = getattr(type(bot), hook, None)
    return mine is not None and mine is not default


def play_local(
    bots: Sequence[Bot],
    rules: RuleSet | None = None,
    seed: int | str = 0,
    illegal: str = "raise",
) -> Game:
    """Play one whole game among ``bots`` (seat i is ``bots[i]``) and return it.

    An illegal action from a bot is a bug in that bot. With ``illegal="raise"`` (the
    default, for development) it raises ``IllegalAction`` naming the seat. With
    ``illegal="forfeit"`` it is treated as a referee with the policy "illegal: forfeit,
    illegal_limit: 1" treats it: the seat loses the game (termination ``illegal``), and
    illegal advice is refused and ignored. Matches use that, so one buggy bot costs
    its own games, not the whole run, exactly as it would through a referee.

    There is no cap on the number of actions: every hand ends by the rules (a knock,
    the stock down to 2, or the rule ``max_pile_draws``, which ends the hand two bots
    could otherwise loop for ever by passing cards through the discard pile). A game
    still ends only when someone reaches ``target_score``: bots that never knock draw
    every hand and play on, as they would at a referee.
    """
    if illegal not in ("raise", "forfeit"):
        raise ValueError(f"illegal must be 'raise' or 'forfeit', not {illegal!r}")
    rules = rules or RuleSet()
    game = Game(rules, seed)
    if len(bots) != game.num_seats:
        raise ValueError(f"{rules.variant} needs {game.num_seats} bots, got {len(bots)}")
    want_start = [overrides(b, "on_hand_start") for b in bots]
    want_end = [overrides(b, "on_hand_end") for b in bots]
    want_advice = [overrides(b, "on_advice") for b in bots]
    gives_advice = [overrides(b, "advise") for b in bots]
    for s, bot in enumerate(bots):
        bot.on_game_start(s, rules, game.num_seats)
    hand_started = -1
    while not game.is_over:
        if game.hand_number != hand_started:
            hand_started = game.hand_number
            for s, bot in enumerate(bots):
                if want_start[s]:
                    bot.on_hand_start(game.view(s))
        seat = game.current_player
        assert seat is not None
        legal = game.legal_actions()
        roles = game.roles
        if roles is not None and seat == roles[1] and gives_advice[roles[2]]:
            sitter = roles[2]
            adv = bots[sitter].advise(game.view(sitter), legal)
            if adv is not None:
                try:
                    game.advise(sitter, adv[0], adv[1])
                except IllegalAction as e:
                    if illegal == "raise":
                        raise IllegalAction(f"bot {bots[sitter].name!r} at seat {sitter} advised {adv[0]}: {e}") from None
                    adv = None
                if adv is not None and want_advice[seat]:
                    v = game.view(seat)
                    bots[seat].on_advice(v.advice[-1], v)
        action = bots[seat].choose(game.view(seat), legal)
        try:
            if not isinstance(action, Action):
                raise IllegalAction(f"choose() returned {action!r}, not an okgin.Action")
            result = game.apply(action, seat=seat)
        except IllegalAction as e:
            if illegal == "raise":
                raise IllegalAction(f"bot {bots[seat].name!r} at seat {seat} played {action}: {e}") from None
            game.resign(seat, "illegal")
            break
        if result is not None:
            for s, bot in enumerate(bots):
                if want_end[s]:
                    bot.on_hand_end(result, game.view(s))
    final = game.final_scores()
    for s, bot in enumerate(bots):
        bot.on_game_end(final, game.view(s))
    return game
