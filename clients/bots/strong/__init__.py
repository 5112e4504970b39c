"""The strong built-in bot (``okgin match strong simple``): see :mod:`.bot`."""

from .bot import CURRENT, V1, Params, StrongBot, StrongV1Bot

__all__ = ["CURRENT", "V1", "Params", "StrongBot", "StrongV1Bot"]
