"""A Gymnasium single-agent environment: one seat learns, the others are played by policies.

A policy is any object with ``choose(view, legal) -> Action`` (okgin's bots, and every
bot written for ``clients.bot.Bot``), or a plain function ``(view, legal) -> Action``.
Its optional hooks are called as :func:`clients.local.play_local` calls them
(``on_game_start``, ``on_hand_start``, ``on_advice``, ``on_hand_end``, ``on_game_end``),
and as the Box sitter its ``advise(view, captain_legal)`` is asked before each of the
learner's captain decisions. This module imports nothing of ``clients`` (``okgin`` is
the pure engine); ``clients.envs.make_env("simple")`` names a built-in bot instead.

- Observation: :func:`okgin.envs.encoding.encode_view` of the learner's View (a float32
  vector); the legal actions are ``info["action_mask"]`` and :meth:`action_masks` (the
  convention of sb3-contrib's MaskablePPO).
- Actions: the 110 action numbers of :mod:`okgin.envs.encoding`. As the Box sitter (the
  learner's role changes with the hands) an action is advice to the captain, or 109 for
  none.
- Reward: the learner's points when a hand is scored, +points if it won the hand,
  -points if it lost it (0 as sitter, or for a drawn hand). An illegal action ends the
  episode with ``illegal_reward`` and ``info["illegal"]`` (as a referee's forfeit would),
  so that ``check_env``'s unmasked random actions are harmless: the convention of
  PettingZoo's ``TerminateIllegalWrapper``, which :func:`okgin.envs.aec.env` applies too.
- The step that ends an episode shows the hand as it ended (with ``episode="hand"`` the
  engine has already dealt the next hand, which is no part of the episode), and its
  ``action_mask`` is all zeros.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ..actions import Action
from ..game import Game
from ..rules import RuleSet
from ..scoring import HandResult
from ..views import View
from .encoding import NO_ADVICE, NUM_ACTIONS, encode_view, id_to_action, legal_mask, observation_size

__all__ = ["Policy", "SingleAgentEnv"]

Policy = Any  # an object with choose(view, legal), or a callable (view, legal) -> Action
StepResult = tuple[np.ndarray, float, bool, bool, dict[str, Any]]  # Gymnasium's step()


def _choose(policy: Policy, view: View, legal: list[Action]) -> Action:
    choose: Callable[[View, list[Action]], Action] | None = getattr(policy, "choose", None)
    if choose is None:
        return policy(view, legal)
    return choose(view, legal)


def _hook(policy: Policy, name: str, *args: Any) -> None:
    f = getattr(policy, name, None)
    if f is not None:
        f(*args)


class SingleAgentEnv(gymnasium.Env):
    """Play one seat of Oklahoma Gin or Gin in the Box against fixed policies."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        opponents: Policy | Sequence[Policy],
        variant: str | None = None,
        rules: RuleSet | None = None,
        seat: int = 0,
        episode: str = "hand",
        advice: bool = True,
        illegal_reward: float = -1.0,
        max_hands: int = 50,
        render_mode: str | None = None,
    ) -> None:
        if rules is None:
            rules = RuleSet(variant=variant or "oklahoma")
        elif variant is not None and variant != rules.variant:
            raise ValueError(f"variant {variant!r} and rules.variant {rules.variant!r} disagree")
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', not {episode!r}")
        self.rules = rules
        n = rules.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0-{n - 1}")
        others = list(opponents) if isinstance(opponents, list | tuple) else [opponents] * (n - 1)
        if len(others) != n - 1:
            raise ValueError(f"{rules.variant} needs {n - 1} opponent policies, got {len(others)}")
        # policies[s] plays seat s; the learner's own slot stays None.
        self.policies: list[Policy] = [*others[:seat], None, *others[seat:]]
        self.seat = seat
        self.episode = episode
        self.advice = advice and rules.variant == "box"
        self.illegal_reward = float(illegal_reward)
        self.max_hands = max_hands
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, (observation_size(n),), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: Game | None = None
        self._advised = False
        self._hand_started = -1
        self._episode_over = False  # set by the step that ends the episode, until reset()
        self._rng = random.Random()

    # ---------------------------------------------------------------- helpers
    def _learner_to_act(self) -> bool:
        g = self.game
        assert g is not None
        if g.is_over:
            return False
        r = g.roles
        if self.advice and r is not None and r[2] == self.seat:
            return g.current_player == r[1] and not self._advised
        return g.current_player == self.seat

    def _mask(self) -> np.ndarray:
        g = self.game
        assert g is not None
        if self._episode_over or g.is_over or not self._learner_to_act():
            return np.zeros(NUM_ACTIONS, dtype=np.int8)
        sitter = g.roles is not None and g.roles[2] == self.seat
        return legal_mask(g.legal_actions(), advice=sitter)

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as a 0/1 vector (sb3-contrib's MaskablePPO asks this)."""
        return self._mask().astype(bool)

    def _obs(self) -> np.ndarray:
        assert self.game is not None
        return encode_view(self.game.view(self.seat))

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self._mask(), **extra}

    def _end(self, reward: float, terminated: bool, truncated: bool, **extra: Any) -> StepResult:
        """The step that ends an episode: the observation is the hand as it ended (the
        engine has already dealt the next one, which belongs to no episode of this one),
        and no action is legal."""
        g = self.game
        assert g is not None
        self._episode_over = True
        view = g.hand_end_view(self.seat) if terminated and not g.is_over else None
        obs = self._obs() if view is None else encode_view(view)
        return obs, reward, terminated, truncated, {"action_mask": np.zeros(NUM_ACTIONS, dtype=np.int8), **extra}

    def _reward_of(self, result: HandResult) -> float:
        if result.winner is None:
            return 0.0
        if result.winner == self.seat:
            return float(result.points)
        if self.seat in (result.knocker, result.defender):
            return -float(result.points)
        return 0.0

    def _hand_start_hooks(self) -> None:
        g = self.game
        assert g is not None
        if g.hand_number != self._hand_started:
            self._hand_started = g.hand_number
            for s, p in enumerate(self.policies):
                if p is not None:
                    _hook(p, "on_hand_start", g.view(s))

    def _hand_end(self, result: HandResult) -> tuple[float, bool, bool]:
        """Hooks, the learner's reward, and (terminated, truncated) after a scored hand."""
        g = self.game
        assert g is not None
        for s, p in enumerate(self.policies):
            if p is not None:
                _hook(p, "on_hand_end", result, g.view(s))
        done = self.episode == "hand" or g.is_over
        truncated = not done and len(g.results) >= self.max_hands
        if g.is_over:
            final = g.final_scores()
            for s, p in enumerate(self.policies):
                if p is not None:
                    _hook(p, "on_game_end", final, g.view(s))
        return self._reward_of(result), done, truncated

    def _advance(self) -> tuple[float, bool, bool]:
        """Let the other seats play until the learner is to act or the episode ends."""
        g = self.game
        assert g is not None
        reward = 0.0
        while not g.is_over and not self._learner_to_act():
            self._hand_start_hooks()
            seat = g.current_player
            assert seat is not None
            legal = g.legal_actions()
            r = g.roles
            if r is not None and seat == r[1] and not self._advised:
                sitter = self.policies[r[2]]
                if sitter is not None and hasattr(sitter, "advise"):
                    adv = sitter.advise(g.view(r[2]), legal)
                    if adv is not None:
                        g.advise(r[2], adv[0], adv[1])
                        v = g.view(seat)
                        if self.policies[seat] is not None:
                            _hook(self.policies[seat], "on_advice", v.advice[-1], v)
            policy = self.policies[seat]
            assert policy is not None
            result = g.apply(_choose(policy, g.view(seat), legal), seat=seat)
            self._advised = False
            if result is not None:
                rew, done, trunc = self._hand_end(result)
                reward += rew
                if done or trunc:
                    return reward, done, trunc
        self._hand_start_hooks()
        return reward, g.is_over, False

    # ------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._rng.seed(seed)
        game_seed = (options or {}).get("game_seed", self._rng.getrandbits(63))
        self.game = Game(self.rules, seed=game_seed)
        while self._sits_out_first_hand():
            # Without advice a Box sitter has no move in its hand: a one-hand episode
            # would have none, so deal another game (still a function of the seed).
            self.game = Game(self.rules, seed=self._rng.getrandbits(63))
        self._advised = False
        self._hand_started = -1
        self._episode_over = False
        for s, p in enumerate(self.policies):
            # A bot's own random stream (clients.bot.Bot.rng) is reseeded from the
            # episode's seed, so that reset(seed=...) replays an episode exactly.
            own_rng = getattr(p, "rng", None)
            if isinstance(own_rng, random.Random):
                own_rng.seed(self._rng.getrandbits(63))
            if p is not None:
                _hook(p, "on_game_start", s, self.rules, self.game.num_seats)
        self._advance()
        return self._obs(), self._info()

    def _sits_out_first_hand(self) -> bool:
        g = self.game
        assert g is not None
        return self.episode == "hand" and not self.advice and g.roles is not None and g.roles[2] == self.seat

    def step(self, action: int) -> StepResult:
        g = self.game
        assert g is not None, "call reset() first"
        if self._episode_over:
            raise RuntimeError("the episode is over: call reset() to start another")
        action = int(action)
        mask = self._mask()
        if not (0 <= action < NUM_ACTIONS and mask[action]):
            g.resign(self.seat, "illegal")
            return self._end(self.illegal_reward, True, False, illegal=True)
        reward = 0.0
        r = g.roles
        if r is not None and r[2] == self.seat:  # the learner sits out: its action is advice
            if action != NO_ADVICE:
                g.advise(self.seat, id_to_action(action), "")
            self._advised = True
            captain = self.policies[r[1]]
            if action != NO_ADVICE and captain is not None:
                v = g.view(r[1])
                _hook(captain, "on_advice", v.advice[-1], v)
        else:
            result = g.apply(id_to_action(action), seat=self.seat)
            self._advised = False
            if result is not None:
                rew, done, trunc = self._hand_end(result)
                if done or trunc:
                    return self._end(rew, done, trunc)
                reward += rew
        rew, done, trunc = self._advance()
        reward += rew
        if done or trunc:
            return self._end(reward, done, trunc)
        return self._obs(), reward, done, trunc, self._info()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.game is None:
            return None
        v = self.game.view(self.seat)
        from ..cards import card_str

        hand = " ".join(card_str(c) for c in sorted(v.hand or ()))
        top = "-" if v.top_discard is None else card_str(v.top_discard)
        return f"hand {v.hand_number} {v.phase}; you: {hand}; top {top}; stock {v.stock_size}; scores {list(v.scores)}"
