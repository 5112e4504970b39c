"""Issue 14 items 6-8, against ``okgin referee`` processes on 127.0.0.1.

- Text: a name holding U+2028 (category Zl: not Cc/Cf, yet a line end to
  ``str.splitlines``) made the journal unreadable for ``okgin replay --check``; a name or
  an advice with control or invisible reordering characters spoofs what others see.
  Now refused with an error naming the field and the code point; ZWJ emoji still pass.
- Old journals: one whose player names hold raw U+2028 / U+0085 (written directly:
  the referee refuses such names now) is read by ``okgin replay --check`` and by every
  other reader, which split on ``\\n`` only.
- Squatting: a join naming no rules sat at whatever the table's first joiner chose
  (``target_score`` 1). Now ``rules_mismatch`` lists the differences; ``any_rules``
  sits anyway, on purpose.
- Stalling: a default ``okgin referee`` table had no clock, so a connected player who
  never answered held the game for ever. Now 60 s a move unless ``--untimed``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from .hkit import Raw, RefProc, Seats, admin, error_of, journal_of, reserved_table, simple_choice

pytestmark = pytest.mark.timeout(300)

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # MAN ZWJ WOMAN ZWJ GIRL: one glyph, two ZWJ (Cf, allowed)


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory):
    """A referee started as operators start it: no clock option at all."""
    r = RefProc(tmp_path_factory.mktemp("squat"), label="squat")
    yield r
    assert r.internal_errors() == []
    r.stop()


def first_prompt(*cs: Raw, bound_ms: int = 40000) -> dict[str, Any]:
    """The first ``prompt`` any of ``cs`` receives (others' messages are kept in ``received``)."""
    for _ in range(bound_ms // (10 * len(cs))):
        for c in cs:
            if c.sock.poll(10):
                m = c.recv()
                if m["type"] == "prompt":
                    return m
    raise AssertionError(f"no prompt within {bound_ms} ms")


def refused(c: Raw, msg: dict[str, Any], name: str, *needles: str) -> dict[str, Any]:
    m = error_of(c.request(msg), name)
    for n in needles:
        assert n in m["message"], m["message"]
    return m


# ------------------------------------------------------------------ text
@pytest.mark.parametrize(
    ("bad", "shown"),
    [("al\u2028ice", "U+2028"), ("para\u2029", "U+2029"), ("nel\u0085", "U+0085"), ("\u202eecila", "U+202E"),
     ("esc\x1b[2J", "U+001B"), ("tab\there", "U+0009"), ("zero\u200bwidth", "U+200B"), ("bom\ufeff", "U+FEFF")],
)
def test_hello_name_with_a_control_format_or_separator_character_is_refused(ref, bad, shown):
    c = Raw(ref.endpoint)
    try:
        m = refused(c, {"type": "hello", "protocol": 1, "role": "player", "name": bad}, "bad_message", shown, "'name'")
        assert bad not in m["message"]  # the error names the character, it does not echo it
        c.hello("after-refusal")  # nothing changed: the connection may still say hello
    finally:
        c.close()


def test_zwj_and_zwnj_names_are_welcome(ref):
    for name in (f"{FAMILY} family", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "caf\u00e9 \u00a0nbsp"):
        c = Raw(ref.endpoint)
        try:
            assert c.hello(name)["name"] == name
        finally:
            c.close()


def test_create_table_players_are_checked_like_names(ref):
    adm = admin(ref.endpoint)
    try:
        refused(
            adm,
            {"type": "create_table", "table": "spoof", "players": ["ok", "\u202eevil"]},
            "bad_message",
            "players[1]",
            "U+202E",
        )
        adm.request({"type": "create_table", "table": "fam", "players": [FAMILY, "ok"]}, "table_created")
    finally:
        adm.close()


def test_advice_text_refuses_controls_and_format_but_not_zwj(ref):
    adm = admin(ref.endpoint)
    cs = []
    try:
        tokens = reserved_table(adm, "advised", 247, variant="box")
        for s, tok in enumerate(tokens):
            c = Raw(ref.endpoint)
            c.hello(f"box{s}", token=tok)
            cs.append(c)
        start = cs[0].wait_for(lambda m: m["type"] == "game_start")
        roles = start["view"]["roles"]
        captain, sitter = roles.index("captain"), roles.index("sitter")
        cs[captain].wait_for(lambda m: m["type"] == "prompt")
        ap = cs[sitter].wait_for(lambda m: m["type"] == "advise_prompt")
        msg = {"type": "advise", "table": "advised", "seq": ap["seq"]}
        refused(cs[sitter], {**msg, "text": "pass \x1b[31mNOW"}, "bad_advice", "U+001B", "'text'")
        refused(cs[sitter], {**msg, "text": "I say \u202essap"}, "bad_advice", "U+202E")
        refused(cs[sitter], {**msg, "text": "line\u2028break"}, "bad_advice", "U+2028")
        cs[sitter].request({**msg, "text": f"{FAMILY} says pass"}, "ok")
        told = cs[captain].wait_for(lambda m: m["type"] == "advice")
        assert told["text"] == f"{FAMILY} says pass"
    finally:
        for c in [adm, *cs]:
            c.close()


# ------------------------------------------------------------------ squatting
def test_join_naming_no_rules_is_refused_at_a_squatted_table(ref):
    squatter, victim, third = Raw(ref.endpoint), Raw(ref.endpoint), Raw(ref.endpoint)
    try:
        squatter.hello("squatter")
        victim.hello("victim")
        third.hello("third")
        squatter.request({"type": "join", "table": "main", "rules": {"target_score": 1, "gin_bonus": 0}}, "seated")
        m = refused(
            victim,
            {"type": "join", "table": "main"},
            "rules_mismatch",
            "target_score 1 (you asked 100)",
            "gin_bonus 0 (you asked 25)",
            "any_rules",
        )
        assert m["table"] == "main"
        # other rules named: the same list of differences
        refused(
            victim,
            {"type": "join", "table": "main", "rules": {"target_score": 50}},
            "rules_mismatch",
            "target_score 1 (you asked 50)",
        )
        # naming the table's rules, or any_rules, seats: the choice is the joiner's, made knowingly
        seated = victim.request({"type": "join", "table": "main", "any_rules": True}, "seated")
        assert seated["rules"]["target_score"] == 1
        # the variant: one named must match; one not named is the table's (its rules still at the defaults)
        squatter.request({"type": "join", "table": "boxed", "variant": "box", "rules": {"target_score": 2}}, "seated")
        refused(
            third,
            {"type": "join", "table": "boxed", "variant": "oklahoma"},
            "rules_mismatch",
            'variant "box" (you asked "oklahoma")',
        )
        refused(third, {"type": "join", "table": "boxed"}, "rules_mismatch", "target_score 2 (you asked 100)")
        refused(third, {"type": "join", "table": "boxed", "variant": "box"}, "rules_mismatch", "target_score 2 (you asked 100)")
        assert third.request({"type": "join", "table": "boxed", "rules": {"target_score": 2}}, "seated")["variant"] == "box"
        squatter.request({"type": "join", "table": "plainbox", "variant": "box"}, "seated")
        assert third.request({"type": "join", "table": "plainbox"}, "seated")["variant"] == "box"
    finally:
        for c in (squatter, victim, third):
            c.close()


def test_join_at_an_admin_table_with_its_rules_or_any_rules(ref):
    adm = admin(ref.endpoint)
    a, b = Raw(ref.endpoint), Raw(ref.endpoint)
    try:
        adm.request({"type": "create_table", "table": "house", "rules": {"knock_limit": 7}}, "table_created")
        a.hello("a")
        b.hello("b")
        refused(a, {"type": "join", "table": "house"}, "rules_mismatch", 'knock_limit 7 (you asked "upcard")')
        assert a.request({"type": "join", "table": "house", "rules": {"knock_limit": 7}}, "seated")["seat"] == 0
        assert (
            b.request({"type": "join", "table": "house", "any_rules": True, "rules": {"target_score": 5}}, "seated")["seat"] == 1
        )
    finally:
        for c in (adm, a, b):
            c.close()


# ------------------------------------------------------------------ clocks
def test_network_tables_have_a_clock_by_default(ref):
    a, b, q1, q2 = (Raw(ref.endpoint) for _ in range(4))
    try:
        for i, c in enumerate((a, b, q1, q2)):
            c.hello(f"clocked{i}")
        sa = a.request({"type": "join", "table": "clocked"}, "seated")
        b.request({"type": "join", "table": "clocked"}, "seated")
        q1.request({"type": "queue"}, "queued")
        q2.request({"type": "queue"}, "queued")
        sq = q1.wait_for(lambda m: m["type"] == "seated")
        for s in (sa, sq):
            assert s["clock"]["move_ms"] == 60000 and s["clock"]["grace_ms"] == 1000, s["clock"]
            assert s["policies"]["disconnect_grace_ms"] == 30000 and s["policies"]["timeout"] == "forfeit"
        prompt = first_prompt(a, b)
        assert prompt["clock"]["remaining_ms"] is not None and 0 < prompt["clock"]["remaining_ms"] <= 60000
    finally:
        for c in (a, b, q1, q2):
            c.close()


@pytest.mark.slow
def test_a_silent_player_loses_on_time_by_default(ref):
    """The default clock itself (a minute): the player who never answers loses the game."""
    a, b = Raw(ref.endpoint), Raw(ref.endpoint)
    try:
        a.hello("talker")
        b.hello("silent")
        a.request({"type": "join", "table": "stall"}, "seated")
        b.request({"type": "join", "table": "stall"}, "seated")
        # seat 0 answers every prompt; seat 1 stays connected (heartbeats) and never acts
        end = None
        for _ in range(1500):  # 1500 rounds of at most 100 ms: a bound on a hang only
            for c in (a, b):
                c.send({"type": "heartbeat"})
            for c in (a, b):
                while c.sock.poll(50):
                    m = c.recv()
                    if m["type"] == "prompt" and c is a:
                        a.send({"type": "act", "table": "stall", "seq": m["seq"], "action": simple_choice(m["legal"])})
                    elif m["type"] == "game_end" and c is b:
                        end = m
            if end is not None:
                break
        assert end is not None, "the silent player's game never ended"
        assert end["termination"] == "timeout" and end["at_fault"] == 1 and end["winner"] == 0, end
    finally:
        a.close()
        b.close()


def test_untimed_referee_tables_have_no_clock(tmp_path):
    r = RefProc(tmp_path, "--untimed", label="untimed")
    a, b = Raw(r.endpoint), Raw(r.endpoint)
    try:
        a.hello("a")
        b.hello("b")
        s = a.request({"type": "join", "table": "slow"}, "seated")
        b.request({"type": "join", "table": "slow"}, "seated")
        assert s["clock"]["move_ms"] == 0 and s["clock"]["bank_ms"] == 0
        assert first_prompt(a, b)["clock"]["remaining_ms"] is None
    finally:
        a.close()
        b.close()
        assert r.internal_errors() == []
        r.stop()
    bad = subprocess.run(
        [sys.executable, "-m", "okgin", "referee", "--untimed", "--move-ms", "5000", "--no-journal"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--untimed" in bad.stderr


# ------------------------------------------------------------------ old journals
def test_a_journal_with_line_separators_in_names_is_read_by_every_reader(ref, tmp_path):
    """A game's journal with its two names rewritten to hold raw U+2028, U+2029 and
    U+0085 (as a referee before 1.4 wrote them: canonical_json keeps non-ASCII raw)."""
    a, b = Raw(ref.endpoint), Raw(ref.endpoint)
    try:
        a.hello("zed-one")
        b.hello("zed-two")
        a.request({"type": "join", "table": "old", "rules": {"target_score": 10}}, "seated")
        b.request({"type": "join", "table": "old", "rules": {"target_score": 10}}, "seated")
        seats = Seats()
        seats.add("old", 0, a)
        seats.add("old", 1, b)
        seats.drive()
    finally:
        a.close()
        b.close()
    src = journal_of(ref.journal_dir, "old")
    names = {"zed-one": "zed\u2028one", "zed-two": "zed\u0085two\u2029"}
    text = src.read_text(encoding="utf-8")
    assert text.count('"zed-one"') >= 1
    for old, new in names.items():
        text = text.replace(json.dumps(old), json.dumps(new, ensure_ascii=False))
    olddir = tmp_path / "journals"
    olddir.mkdir()
    path = olddir / src.name
    path.write_bytes(text.encode("utf-8"))
    assert "\u2028" in path.read_text(encoding="utf-8") and len(path.read_text(encoding="utf-8").splitlines()) > text.count("\n")

    done = subprocess.run(
        [sys.executable, "-m", "okgin", "replay", str(olddir), "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr

    from clients.tui.replay import finished_journal as tui_read
    from competition.tournament.records import journal_outcome as tournament_read
    from okgin.journal import read_journal
    from referee.replay import numbered_entries as replay_read
    from referee.statefiles import StateDir, read_journal_entries

    entries = replay_read(path)
    assert entries[0]["players"] == list(names.values()) and entries[-1]["t"] == "end"
    start, end = tui_read(path)
    assert start["players"] == list(names.values()) and end is not None
    assert tournament_read(path)[0] is not None
    assert read_journal(path).record is not None
    assert len(read_journal_entries(path)) == text.count("\n")  # crash recovery's reader
    files = StateDir(tmp_path)  # and its state directory's, with no referee behind it
    files.log_path = tmp_path / "sessions.log"
    files.tables_dir = tmp_path / "no-tables"
    line = json.dumps({"t": "session", "h": "ab" * 32, "name": "zed\u2028one", "role": "player"}, ensure_ascii=False)
    files.log_path.write_text(line + "\n", encoding="utf-8")
    sessions, _states, _failed = files.load()
    assert sessions == {"ab" * 32: ("zed\u2028one", "player")}
