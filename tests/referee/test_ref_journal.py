"""Journals (protocol.md §12): flushed after every event, replayed identically, checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from refharness import play_until_end, simple_choice

from okgin import Game, canonical_json
from referee.replay import check_file

TIMES = ("ms", "started")


def strip_times(path: Path) -> list[dict[str, Any]]:
    """The journal's entries without what differs between two runs of one game: times,
    and (1.4) the per-game salt and the seed commitment made with it."""
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        e = json.loads(line)
        for k in (*TIMES, "salt", "seed_hash"):
            e.pop(k, None)
        out.append(e)
    return out


def play_seeded(r, make_client, table: str, variant: str, seed: int, advise: bool) -> None:
    admin = make_client(r.endpoint)
    admin.hello("org", role="admin")
    toks = admin.request({"type": "create_table", "table": table, "variant": variant, "seed": seed,
                          "rules": {"target_score": 35}, "reserved": True}, "table_created")["seat_tokens"]
    clients = {}
    for s, tok in enumerate(toks):
        c = make_client(r.endpoint)
        c.hello(f"p{s}", token=tok)
        clients[s] = c

    # The first answer is illegal (a discard during the upcard offer): the referee
    # journals it and re-prompts; every later answer is the simple strategy's.
    first = True

    def wrapped(seat: int, m: dict[str, Any]) -> dict[str, Any]:
        nonlocal first
        if first and m["seq"] == 1:
            first = False
            return {"kind": "discard", "card": "As"}  # illegal during the offer: re-prompted
        return simple_choice(m["legal"])

    play_until_end(clients, table, choose=wrapped, advise=advise)


def test_same_seed_same_moves_same_journal(make_referee, make_client, tmp_path):
    for variant in ("oklahoma", "box"):
        a_dir, b_dir = tmp_path / f"{variant}-a", tmp_path / f"{variant}-b"
        for d in (a_dir, b_dir):
            r = make_referee(journal_dir=str(d))
            play_seeded(r, make_client, "j", variant, 4242, advise=False)
            r.stop()
        ja, jb = next(a_dir.glob("j-g1-*.jsonl")), next(b_dir.glob("j-g1-*.jsonl"))
        assert strip_times(ja) == strip_times(jb)
        kinds = {e["t"] for e in strip_times(ja)}
        assert {"start", "action", "hand_end", "illegal", "end"} <= kinds
        report = check_file(ja)
        assert report.termination == "normal"
        # the end line's record replays through the engine to the same record, byte for byte
        record = strip_times(ja)[-1]["record"]
        assert canonical_json(Game.from_record(record).to_record()) == canonical_json(record)


def test_journal_is_flushed_after_every_event(make_referee, make_client, tmp_path):
    r = make_referee(journal_dir=str(tmp_path))
    a, b = make_client(r.endpoint), make_client(r.endpoint)
    a.hello("a")
    b.hello("b")
    a.request({"type": "join", "table": "f"}, "seated")
    b.request({"type": "join", "table": "f"}, "seated")
    clients = {0: a, 1: b}
    path = None
    events = 0
    while events < 12:
        for s, c in clients.items():
            if not c.sock.poll(10):
                continue
            m = c.recv()
            if m["type"] == "event" and s == 0:
                events += 1
                # the referee sent this event after journaling it: the line must be on disk
                path = path or next(tmp_path.glob("f-g1-*.jsonl"))
                lines = [json.loads(x) for x in path.read_text().splitlines()]
                assert lines[0]["t"] == "start"
                assert max(x.get("n", 0) for x in lines) >= m["n"]
            if m["type"] == "prompt":
                c.send({"type": "act", "table": "f", "seq": m["seq"], "action": simple_choice(m["legal"])})
    assert path is not None


def test_advice_is_journaled_and_replayed(make_referee, make_client, tmp_path):
    """Advice races the captain's move (it may arrive late: stale_seq), so its lines are
    not deterministic; whatever was accepted is journaled and replays through the engine."""
    r = make_referee(journal_dir=str(tmp_path))
    play_seeded(r, make_client, "adv", "box", 99, advise=True)
    j = next(tmp_path.glob("adv-g1-*.jsonl"))
    lines = strip_times(j)
    assert any(e["t"] == "advice" for e in lines)
    report = check_file(j)
    assert report.termination == "normal"
    assert sum(1 for e in report.game.log if e[0] == "advice") == sum(1 for e in lines if e["t"] == "advice")


def test_write_action_is_byte_identical_to_write(tmp_path):
    """The per-move fast path (cached action JSON, fixed key order) writes exactly the
    line ``write("action", ...)`` writes, for every kind of action, declared melds too."""
    import random

    from okgin import RuleSet
    from okgin.actions import Action
    from referee.journal import Journal

    j = Journal(tmp_path, "t", 1)
    g = Game(RuleSet(), 5)
    rng = random.Random(1)
    acts = []
    while not g.is_over and len(acts) < 400:
        a = rng.choice(g.legal_actions())
        acts.append(a)
        g.apply(a)
    acts += [Action.knock(3, [[0, 1, 2]]), Action.big_gin_knock([[0, 1, 2, 3], [13, 26, 39]])]
    for i, a in enumerate(acts):
        j.write("action", seat=i % 2, action=a.to_wire(), seq=i * 7, ms=i * 13, auto=bool(i % 3), n=i)
        j.write_action(i % 2, a, i * 7, i * 13, bool(i % 3), i)
    j.close()
    lines = Path(j.path).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * len(acts)
    assert lines[0::2] == lines[1::2]
