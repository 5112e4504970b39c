"""Competitions: the organiser's tools, outside the server (issue 25 item 2).

- :mod:`competition.tournament`: ``okgin tournament``, a TOML config turned into a schedule
  of games, played on referees by sandboxed bots, stored, rated and reported;
- :mod:`competition.cluster`: the same games as Dask tasks (``--dask``), and ``okgin cluster``;
- :mod:`competition.conformance`: ``okgin conformance``, the kit that tells a bot author
  whether their bot speaks the protocol right.

Each is a *client* of the referee: it starts referees as ``okgin referee`` processes (or
reaches remote ones) and speaks to them over the documented protocol only. The referee imports
nothing of this package, and nothing here imports ``clients`` (bots run as processes).
"""
