"""The arena's web face (issue 27 item 1): leaderboards, players, live games, a game viewer,
events and admin pages, served by Starlette and uvicorn on the arena's loop.

:mod:`arena.web.app` (the pages), :mod:`arena.web.live` (server-sent events),
:mod:`arena.web.viewer` (a finished game's public steps), :mod:`arena.web.security` (the
headers), :mod:`arena.web.serve` (uvicorn), :mod:`arena.web.words` (small wordings).
Nothing outside ``arena`` imports it; its extra is ``okgin[arena-web]``.
"""
