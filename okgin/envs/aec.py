"""A PettingZoo AEC environment for Oklahoma Gin (2 agents) and Gin in the Box (3 agents).

- Agents are ``player_0`` ... (the seats). The engine says whose turn it is; in Gin in
  the Box with ``advice=True`` the sitter gets a turn before each of its captain's
  decisions, to advise one of the captain's legal actions or to stay quiet (action
  109), and the captain's next observation shows that advice (docs/rules.md §4.3).
- Observations: ``{"observation": float32 vector, "action_mask": int8 vector}``, the
  vector from :func:`okgin.envs.encoding.encode_view` of the agent's own View: what that
  seat may see, never the full state.
- Rewards: when a hand is scored, its winner gets +points and the other player of the
  hand -points (the sitter 0; a drawn hand or a tie 0 for all). ``episode="hand"``
  (default) ends after one hand; ``episode="game"`` plays to ``target_score``, truncated
  after ``max_hands`` hands. An ended episode's observations show the hand as it ended
  (the engine has already dealt the next one).
- Illegal actions: :func:`env` (with PettingZoo's wrappers) ends the game with -1 for
  the agent that took one and 0 for the others (``TerminateIllegalWrapper``, as
  PettingZoo's classic games and :class:`okgin.envs.gym.SingleAgentEnv` do); the raw
  env raises :class:`okgin.errors.IllegalAction`.
- ``render()``: ``ansi`` returns the picture, ``human`` prints it and returns None.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]  # no stubs

from ..game import Game
from ..rules import RuleSet
from .encoding import NO_ADVICE, NUM_ACTIONS, encode_view, id_to_action, legal_mask, observation_size

__all__ = ["RENDER_MODES", "OkginAECEnv", "env", "raw_env"]

RENDER_MODES = ("human", "ansi")


class OkginAECEnv(AECEnv):
    """Oklahoma Gin or Gin in the Box as an agent-environment-cycle game."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "okgin_v0", "is_parallelizable": False}

    def __init__(
        self,
        variant: str | None = None,
        rules: RuleSet | None = None,
        episode: str = "hand",
        advice: bool = True,
        max_hands: int = 50,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', not {episode!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {', '.join(RENDER_MODES)}, not {render_mode!r}")
        if rules is None:
            rules = RuleSet(variant=variant or "oklahoma")
        elif variant is not None and variant != rules.variant:
            raise ValueError(f"variant {variant!r} and rules.variant {rules.variant!r} disagree")
        self.rules = rules
        self.episode = episode
        self.advice = advice and self.rules.variant == "box"
        self.max_hands = max_hands
        self.render_mode = render_mode
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        size = observation_size(n)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        # One space object per agent, built once (PettingZoo expects the same object back).
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._rng = random.Random()
        self.game: Game | None = None
        self._advised = False  # the sitter has had its turn for the captain's current decision

    # --------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --------------------------------------------------------------- episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` fixes it (the engine's seed, docs/rules.md §6)."""
        if seed is not None:
            self._rng.seed(seed)
        game_seed = (options or {}).get("game_seed", self._rng.getrandbits(63))
        self.game = Game(self.rules, seed=game_seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._advised = False
        self.agent_selection = self._next_agent()

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def _sitter_turn(self) -> bool:
        """Is the sitter to advise now (before its captain's decision)?"""
        g = self.game
        assert g is not None
        return self.advice and not self._advised and g.roles is not None and g.current_player == g.roles[1]

    def _next_agent(self) -> str:
        g = self.game
        assert g is not None
        if g.is_over:
            return self.agent_selection
        if self._sitter_turn():
            assert g.roles is not None
            return self.possible_agents[g.roles[2]]
        seat = g.current_player
        assert seat is not None
        return self.possible_agents[seat]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        g = self.game
        assert g is not None, "call reset() first"
        seat = self._seat(agent)
        ended = self.terminations[agent] and not g.is_over
        # After the episode's last hand the engine has dealt the next one, which is no
        # part of the episode: show the hand as it ended.
        view = g.hand_end_view(seat) if ended else g.view(seat)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and not g.is_over and not (self.terminations[agent] or self.truncations[agent]):
            mask = legal_mask(g.legal_actions(), advice=g.roles is not None and seat == g.roles[2])
        return {"observation": encode_view(view), "action_mask": mask}

    def legal_actions(self, agent: str | None = None) -> list[int]:
        """The action numbers ``agent`` (default: the one to act) may take now."""
        agent = agent or self.agent_selection
        return [int(i) for i in np.flatnonzero(self.observe(agent)["action_mask"])]

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        g = self.game
        assert g is not None
        seat = self._seat(agent)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        assert action is not None
        action = int(action)
        if g.roles is not None and seat == g.roles[2]:
            # The sitter's turn: advice (any of the captain's legal actions) or none.
            if action != NO_ADVICE:
                g.advise(seat, id_to_action(action), "")
            self._advised = True
        else:
            if action == NO_ADVICE:
                raise ValueError(f"{agent} is no sitter: action {NO_ADVICE} (no advice) is not its to take")
            result = g.apply(id_to_action(action), seat=seat)
            self._advised = False
            if result is not None:
                if result.winner is not None:
                    loser = result.defender if result.winner == result.knocker else result.knocker
                    self.rewards[self.possible_agents[result.winner]] = float(result.points)
                    if loser is not None:
                        self.rewards[self.possible_agents[loser]] = -float(result.points)
                for a in self.agents:
                    self.infos[a] = {"hand_result": result.to_wire()}
                if self.episode == "hand" or g.is_over:
                    self.terminations = dict.fromkeys(self.agents, True)
                elif len(g.results) >= self.max_hands:
                    self.truncations = dict.fromkeys(self.agents, True)
        if not g.is_over and not any(self.terminations.values()) and not any(self.truncations.values()):
            self.agent_selection = self._next_agent()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ---------------------------------------------------------------- output
    def render(self) -> str | None:
        """A one-line picture of the whole table, every hand shown: ``ansi`` returns it,
        ``human`` prints it and returns None (PettingZoo's convention). For people
        watching or debugging, never an agent's input."""
        if self.render_mode is None or self.game is None:
            return None
        text = self._picture()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _picture(self) -> str:
        assert self.game is not None
        g = self.game
        h = g.hand
        from ..cards import card_str, cards_of

        hands = " / ".join(
            f"{self.possible_agents[p]}: {' '.join(card_str(c) for c in cards_of(m))}" for p, m in enumerate(h.hands)
        )
        top = card_str(h.discard_pile[-1]) if h.discard_pile else "-"
        return f"hand {h.number} {h.phase}; {hands}; top {top}; stock {len(h.stock)}; scores {g.scores}"

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual checking wrappers (as its own games do)."""
    from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

    e: AECEnv = OkginAECEnv(**kwargs)
    # An illegal action ends the game with -1 for the agent that took it and 0 for the
    # others, as the Gymnasium env does and as PettingZoo's classic games do; the raw
    # env (raw_env) raises IllegalAction instead.
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


raw_env = OkginAECEnv
