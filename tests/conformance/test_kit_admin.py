"""The kit's organiser connection survives the referee forgetting its session.

A fresh-clone run at a load of 27 saw the kit's admin get ``hello_first`` on
``create_table`` and give up: an admin holds no seat, so a session the referee takes for
gone (silent past liveness x heartbeat while a loaded machine stalls both loops) is
dropped at once, and resuming it with its token is refused. A ``bye`` makes the referee
forget the session exactly so, without depending on timing.
"""

from __future__ import annotations

import time

import zmq
import zmq.asyncio

from competition.conformance.runner import Admin
from okgin.protocol import encode
from referee.config import RefereeConfig
from referee.server import Referee


async def test_the_admin_starts_a_new_session_when_its_old_one_is_forgotten() -> None:
    ref = Referee(RefereeConfig(bind="tcp://127.0.0.1:0", journal_dir=None, admin_key="k" * 32))
    endpoint = await ref.start()
    ctx = zmq.asyncio.Context()
    admin = Admin(ctx, endpoint, "k" * 32, 1000)
    try:
        await admin.start()
        first = admin.token
        assert admin.sock is not None
        await admin.sock.send(encode(admin.session.request({"type": "bye"}, time.monotonic())))
        # Next on the same connection: hello_first, a resume the referee refuses, a new session.
        reply = await admin.request({"type": "create_table", "table": "after-bye", "variant": "oklahoma"})
        assert reply["type"] == "table_created", reply
        assert admin.token and admin.token != first
        listed = await admin.request({"type": "list_tables"})
        assert "after-bye" in [t["table"] for t in listed["tables"]]
    finally:
        await admin.stop()
        ctx.term()
        await ref.stop()
