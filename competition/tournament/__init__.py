"""Tournaments: the organiser's side of an AI competition (the cutechess-cli of gin).

A tournament is a TOML file (:mod:`.config`) turned into a deterministic list of games
(:mod:`.schedule`), played on one or more referees by bots launched as subprocesses or
connecting from elsewhere (:mod:`.runner`), each finished game written at once to a
SQLite file (:mod:`.store`), and rated (:mod:`.ratings`, :mod:`.sprt`) into a table,
CSV, JSON and a ratings chart (:mod:`.report`, :mod:`.chart`, matplotlib when installed).

This package imports ``okgin`` only: never ``clients`` (bots are started as ``okgin bot``
subprocesses) and never the referee's internals (referees are started as ``okgin
referee`` subprocesses and spoken to over the documented protocol).
"""
