"""Gymnasium environments against okgin's built-in bots, by name.

``okgin.envs.SingleAgentEnv`` takes the opponents as policy objects, because ``okgin``
is the pure engine and must not import ``clients`` (where the bots live). This module
sits on the other side of that line: it resolves bot names with
:func:`clients.bots.get_bot` (``random``, ``simple``, ``strong``, ``module:Class`` or
``path/file.py:Class``) and builds the environment.

>>> env = make_env("simple")                       # doctest: +SKIP
>>> obs, info = env.reset(seed=1)                  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from okgin import RuleSet

from ..bots import get_bot


def make_env(
    opponent: str | list[str] = "simple",
    variant: str | None = None,
    rules: RuleSet | None = None,
    seed: int | str | None = None,
    **kwargs: Any,
):
    """A :class:`okgin.envs.SingleAgentEnv` whose other seats are built-in bots.

    ``opponent`` is one bot name for every other seat, or a list of one name per other
    seat (in seat order, the learner's seat left out); ``seed`` seeds the bots. Other
    keyword arguments go to ``SingleAgentEnv`` (``seat``, ``episode``, ``advice``, ...).
    """
    from okgin.envs import SingleAgentEnv  # needs the okgin[research] extra

    rules = rules if rules is not None else RuleSet(variant=variant or "oklahoma")
    n = rules.num_players
    names = [opponent] * (n - 1) if isinstance(opponent, str) else list(opponent)
    bots = [get_bot(name, seed=None if seed is None else f"{seed}/{i}") for i, name in enumerate(names)]
    return SingleAgentEnv(bots, rules=rules, **kwargs)


def _register() -> None:
    """Gymnasium ids for both variants: ``gymnasium.make("okgin/OklahomaGin-v0",
    opponent="strong")`` (after ``import clients.envs``). Skipped without gymnasium."""
    try:
        import gymnasium
    except ImportError:  # the okgin[research] extra is not installed
        return
    for env_id, variant in (("okgin/OklahomaGin-v0", "oklahoma"), ("okgin/GinInTheBox-v0", "box")):
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="clients.envs:make_env", kwargs={"variant": variant})


_register()

__all__ = ["make_env"]
