"""``okgin mcp``: a seat at a referee's table, served to a language-model agent over MCP.

- :mod:`clients.mcp.seat` — the seat: an ordinary protocol client
  (:class:`clients.sdk.AsyncClient`) that keeps the latest prompt, view and history, and
  the tools' logic (``state``, ``legal_moves``, ``play``, ``advise``, ``history``, ``rules``,
  ``resign``, ``rematch``) as plain coroutines returning text.
- :mod:`clients.mcp.server` — the MCP server (the ``mcp`` Python SDK, stdio) exposing them.
- :mod:`clients.mcp.cli` — the command line.

The text itself (the view in words, the legal moves, the move parser) is
:mod:`okgin.harness`, a pure library function for people who call a model themselves.
"""
