"""The conformance kit: tells any bot author whether their bot speaks protocol v1 right.

``okgin conformance -- COMMAND`` (see :mod:`.cli`) plays games against built-in bots
through a referee it starts on loopback, watching the bot's every message through a
ZMTP-aware proxy (:mod:`.proxy`, :mod:`.zmtp`) that can also silence the connection or
turn a move illegal, and judges the conversation feature by feature (:mod:`.checks`).
"""
