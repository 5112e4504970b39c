"""Running tournaments and matches across machines on Dask distributed (issue 16).

``connect`` opens a client (or a ``--dask local`` cluster); ``tournament`` runs a
tournament's games as Dask tasks, each on a worker-local referee with that game's
sandboxed participants. Nothing here is imported unless ``--dask`` is given, so
Dask stays an optional extra (``okgin[cluster]``).
"""
