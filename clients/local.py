"""In-process play: bots against the engine directly, no sockets (fast self-play).

This is the reference loop the network SDK mirrors: the same hooks in the same order,
so a bot behaves the same in-process and through a referee.
"""

from __future__ import annotations

from collections.abc import Sequence

from okgin import Game, IllegalAction, RuleSet

from .bot import Bot


def play_local(bots: Sequence[Bot], rules: RuleSet | None = None, seed: int | str = 0, max_actions: int = 100_000) -> Game:
    """Play one whole game among ``bots`` (seat i is ``bots[i]``) and return it.

    An illegal action from a bot is a bug in that bot: it raises ``IllegalAction``
    naming the seat, rather than being silently corrected.
    """
    rules = rules or RuleSet()
    game = Game(rules, seed)
    if len(bots) != game.num_seats:
        raise ValueError(f"{rules.variant} needs {game.num_seats} bots, got {len(bots)}")
    for seat, bot in enumerate(bots):
        bot.on_game_start(seat, rules, game.num_seats)
    hand_started = -1
    for _ in range(max_actions):
        if game.is_over:
            break
        if game.hand_number != hand_started:
            hand_started = game.hand_number
            for seat, bot in enumerate(bots):
                bot.on_hand_start(game.view(seat))
        seat = game.current_player
        assert seat is not None
        legal = game.legal_actions()
        if game.roles is not None and seat == game.roles[1]:
            sitter = game.roles[2]
            adv = bots[sitter].advise(game.view(sitter), legal)
            if adv is not None:
                game.advise(sitter, adv[0], adv[1])
                bots[seat].on_advice(game.view(seat).advice[-1], game.view(seat))
        action = bots[seat].choose(game.view(seat), legal)
        try:
            result = game.apply(action, seat=seat)
        except IllegalAction as e:
            raise IllegalAction(f"bot {bots[seat].name!r} at seat {seat} played {action}: {e}") from None
        if result is not None:
            for s, bot in enumerate(bots):
                bot.on_hand_end(result, game.view(s))
    else:
        raise RuntimeError(f"game did not end within {max_actions} actions")
    final = game.final_scores()
    for s, bot in enumerate(bots):
        bot.on_game_end(final, game.view(s))
    return game
