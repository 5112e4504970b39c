"""The headers every response of the arena's web carries, whatever produced it.

An ASGI middleware rather than a per-page setting, so that the static files, the error
pages and the event stream get them too:

- ``Content-Security-Policy``: scripts, styles, images, fetches and the event stream only
  from this origin; no inline script or style, no ``eval``, no plugins, no ``<base>``, forms
  only to this origin, and no framing (``frame-ancestors 'none'``). Even a name that slipped
  past the escaping could not run.
- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (a game's address
  does not travel to another site), ``X-Frame-Options: DENY`` (older browsers' framing rule),
  ``Cross-Origin-Opener-Policy: same-origin``, ``Permissions-Policy`` turning off what a
  leaderboard never needs.
- Under ``/admin`` only, ``Referrer-Policy: same-origin`` instead: with ``no-referrer`` a
  browser sends ``Origin: null`` with a form's POST even to its own site, and the admin
  forms' cross-site check (:meth:`arena.web.app.WebApp.admin_form`) needs the real
  ``Origin`` from the arena's own pages (another site's POST still says ``null`` or its own).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ADMIN_HEADERS", "CSP", "HEADERS", "SecurityHeaders"]

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
)
ADMIN_HEADERS = tuple((k, b"same-origin" if k == b"referrer-policy" else v) for k, v in HEADERS)
_NAMES = {k for k, _ in HEADERS}


class SecurityHeaders:
    """Wraps an ASGI app: every HTTP response start gets :data:`HEADERS` (replacing any of
    the same name the app set)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        ours = ADMIN_HEADERS if str(scope.get("path", "")).startswith("/admin") else HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _NAMES]
                message = {**message, "headers": [*kept, *ours]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
