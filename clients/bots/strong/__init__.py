"""The strong built-in bot (``okgin match strong simple``): see :mod:`.bot`."""

from .bot import Params, StrongBot

__all__ = ["Params", "StrongBot"]
