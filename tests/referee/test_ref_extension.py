"""The referee's extension point (referee/extension.py, protocol 1.6) and what a plain
referee answers to the arena's messages.

A plain referee refuses ``hello.account``/``hello.key`` (``bad_message``) and every arena
request (``not_an_arena``); a referee with an extension hands it every ``hello`` (which
it may admit later, off the request), its message types, and the news that a session is
gone, while the dispatcher's own checks (shape, role) still come first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from refharness import Client

from okgin.protocol import ProtocolError
from referee.extension import ExtensionParts, Handler
from referee.sessions import Session


class ToyArena:
    """Accounts 'ann' and 'bob' with key 'k'; admits a hello on the next turn of the loop."""

    def __init__(self) -> None:
        self.parts: ExtensionParts | None = None
        self.online: dict[str, Session] = {}
        self.gone_names: list[str] = []

    def attach(self, parts: ExtensionParts) -> Mapping[str, Handler]:
        self.parts = parts
        return {"seek": self.on_seek}

    def hello(self, rid: bytes, msg: dict[str, Any], rqid: Any) -> None:
        assert self.parts is not None
        parts = self.parts
        account = msg.get("account")
        if account == "nobody":
            raise ProtocolError("auth_failed", "no")  # refused at once

        def later() -> None:
            if account not in ("ann", "bob") or msg.get("key") != "k":
                parts.refuse(rid, ProtocolError("auth_failed", "wrong account or key", request="hello"), rqid)
                return
            old = self.online.get(account)
            welcome = {"account": {"name": account, "kind": "bot", "admin": False}}
            sess = parts.admit(rid, msg, rqid, account, msg["role"], welcome)
            if old is not None:
                parts.take(old)
            self.online[account] = sess

        parts.host.loop.call_soon(later)

    def gone(self, sess: Session) -> None:
        self.gone_names.append(sess.name)
        if self.online.get(sess.name) is sess:
            del self.online[sess.name]

    def on_seek(self, sess: Session, msg: dict[str, Any], rqid: Any) -> None:
        assert self.parts is not None
        self.parts.host.reply(sess, {"type": "sought", "seek": f"s-{sess.name}"}, rqid)


def test_a_plain_referee_refuses_arena_hellos_and_requests(referee: Any, make_client: Any) -> None:
    c: Client = make_client(referee.endpoint)
    err = c.request({"type": "hello", "protocol": 1, "role": "player", "name": "x", "account": "ann", "key": "k"}, "error")
    assert err["name"] == "bad_message" and "arena" in err["message"]
    c.hello("x")
    err = c.request({"type": "seek", "variant": "oklahoma"}, "error")
    assert (err["code"], err["name"], err["request"]) == (6001, "not_an_arena", "seek")
    err = c.request({"type": "lobby"}, "error")
    assert err["name"] == "not_an_arena"


def test_an_extension_owns_hello_its_types_and_hears_of_gone_sessions(make_referee: Any, make_client: Any) -> None:
    toy = ToyArena()
    r = make_referee(extension=toy)
    hello = {"type": "hello", "protocol": 1, "role": "player", "name": "ignored"}
    c = make_client(r.endpoint)
    assert c.request({**hello, "account": "nobody"}, "error")["name"] == "auth_failed"
    assert c.request({**hello, "account": "ann", "key": "bad"}, "error")["name"] == "auth_failed"
    assert c.request({"type": "ping"}, "error")["name"] == "hello_first"  # refused: no session was made
    w = c.request({**hello, "account": "ann", "key": "k"}, "welcome")
    assert w["name"] == "ann" and w["account"] == {"name": "ann", "kind": "bot", "admin": False}
    assert c.request({"type": "seek", "variant": "oklahoma"}, "sought")["seek"] == "s-ann"
    # the dispatcher's checks come first: shape, then role
    assert c.request({"type": "seek"}, "error", check=False)["name"] == "bad_message"
    assert c.request({"type": "ban", "account": "bob", "reason": "r"}, "error")["name"] == "forbidden"
    # an arena type the extension does not handle is still not_an_arena
    assert c.request({"type": "lobby"}, "error")["name"] == "not_an_arena"
    # a second session of the same account: the older connection is told and closed
    c2 = make_client(r.endpoint)
    c2.request({**hello, "account": "ann", "key": "k"}, "welcome")
    taken = c.wait_for(lambda m: m["type"] == "error" and m["name"] == "session_taken")
    assert "id" not in taken
    assert c.request({"type": "ping"}, "error")["name"] == "session_taken"
    assert r.call(lambda: list(toy.gone_names)) == ["ann"]
    c2.send({"type": "bye"})
    c2.request({**hello, "account": "bob", "key": "k"}, "welcome")  # the same connection, a new session
    assert r.call(lambda: list(toy.gone_names)) == ["ann", "ann"]
    assert r.call(lambda: sorted(toy.online)) == ["bob"]
