"""PettingZoo and Gymnasium environments for Oklahoma Gin and Gin in the Box.

- :class:`OkginAECEnv` (also ``raw_env``; :func:`env` adds PettingZoo's checking
  wrappers): every seat an agent, the Box sitter's advice an action.
- :class:`SingleAgentEnv`: a Gymnasium ``Env`` for one seat, the others played by
  policies you pass in (any object with ``choose(view, legal)``, such as okgin's built-in
  bots, or a plain function). Why the bots are passed in and not named here: ``okgin``
  is the pure engine and imports nothing of ``clients``; ``clients.envs.make_env("simple")``
  resolves a built-in bot's name and builds this environment.

Needs the optional extra: ``pip install 'okgin[research]'`` (pettingzoo, gymnasium).
"""

from __future__ import annotations

try:
    import gymnasium  # noqa: F401
    import pettingzoo  # type: ignore[import-untyped]  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("okgin.envs needs PettingZoo and Gymnasium: pip install 'okgin[research]'") from e

from .aec import OkginAECEnv, env, raw_env
from .encoding import NO_ADVICE, NUM_ACTIONS, action_to_id, encode_view, id_to_action, legal_mask, observation_size
from .gym import SingleAgentEnv

__all__ = [
    "NO_ADVICE",
    "NUM_ACTIONS",
    "OkginAECEnv",
    "SingleAgentEnv",
    "action_to_id",
    "encode_view",
    "env",
    "id_to_action",
    "legal_mask",
    "observation_size",
    "raw_env",
]
