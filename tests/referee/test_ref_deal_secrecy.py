"""Issue 14 item 1: deals nobody can predict, and anyone can check afterwards.

The attack these tests reproduce (they fail on a referee before protocol 1.4): a bot read
``game_start``'s ``seed_hash``, tried small seeds until one hashed to it (871 in a few
milliseconds) and so knew its opponent's hand and the stock; a rematch's seed was
``"S/2"`` with S revealed at the previous ``game_end``, so the next deal was known before
it started. Now every seed the referee chooses is 256 random bits, a rematch draws a fresh
one, and the commitment is salted (protocol.md §5.10), so even an admin's small fixed
seed cannot be found from its hash. The tests play through a real referee on loopback.

Also here: the reveal that anyone can check (the hash and a re-deal, with a verifier
written from protocol.md §12.1 alone, not from okgin.rng), the deferred reveal and the
admin's ``reveal`` (§5.25), 1.3 journals that still pass ``okgin replay --check``, and
protocol.md's worked example, recomputed.

Run ``python3 tests/referee/test_ref_deal_secrecy.py`` to print the worked example's
lines for a fresh seed and salt (how protocol.md §12.1's were made).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from refharness import ROOT, Client, error_of, play_until_end

from okgin import Game, RuleSet, card_str
from referee.replay import Mismatch, check_entries, check_file, numbered_entries

DOC = (ROOT / "protocol.md").read_text()
HEX64 = re.compile(r"[0-9a-f]{64}")
JOURNALS13 = Path(__file__).parent / "journals13"  # written by the referee of protocol 1.3

# The worked example of protocol.md §12.1 (made with this file's __main__).
EXAMPLE_SEED = "d0be46b1860cb96e1d19275b7896ae7df5b33733b69602e24031d69009e4b477"
EXAMPLE_SALT = "6dd893fd837aedc277e19943facff3d4"


# --------------------------------------------------------------- a verifier from the text alone
def commitment(seed: int | str, salt: str | None) -> str:
    """protocol.md §5.10: SHA-256(salt bytes || seed text bytes); unsalted before 1.4."""
    text = str(seed).encode()
    return hashlib.sha256((bytes.fromhex(salt) if salt is not None else b"") + text).hexdigest()


class Stream:
    """protocol.md §12.1's stream: SHA-256 of ``okgin/LABEL/SEED#COUNTER`` in blocks of
    four big-endian 64-bit values, first bytes first, rejection-sampled."""

    def __init__(self, seed: str, label: str) -> None:
        self.key = f"okgin/{label}/{seed}".encode()
        self.counter = 0
        self.values: list[int] = []
        self.blocks: list[bytes] = []

    def u64(self) -> int:
        if not self.values:
            block = hashlib.sha256(self.key + b"#" + str(self.counter).encode()).digest()
            self.blocks.append(block)
            self.counter += 1
            self.values = [int.from_bytes(block[i : i + 8], "big") for i in (0, 8, 16, 24)]
        return self.values.pop(0)

    def below(self, n: int) -> int:
        limit = 2**64 - 2**64 % n
        while True:
            v = self.u64()
            if v < limit:
                return v % n

    def shuffled_deck(self) -> tuple[list[int], list[int]]:
        """The shuffled deck 0..51 and the j drawn for i = 51, 50, ..., 1."""
        deck = list(range(52))
        js = []
        for i in range(51, 0, -1):
            j = self.below(i + 1)
            js.append(j)
            deck[i], deck[j] = deck[j], deck[i]
        return deck, js


def first_deal(seed: int | str) -> dict[str, Any]:
    """Hand 0 of an Oklahoma game, re-dealt by protocol.md §12.1 (cards by name)."""
    text = str(seed)
    dealer = Stream(text, "dealer").below(2)
    deck, _ = Stream(text, "deal/0").shuffled_deck()
    names = [card_str(c) for c in deck]
    hands = {1 - dealer: sorted(deck[0:10]), dealer: sorted(deck[10:20])}
    return {
        "dealer": dealer,
        "hands": {s: [card_str(c) for c in h] for s, h in hands.items()},
        "upcard": names[20],
        "stock": names[21:],
    }


def example_lines(seed: str, salt: str) -> list[str]:
    """The lines of protocol.md §12.1's worked example for this seed and salt."""
    data = bytes.fromhex(salt) + seed.encode()
    s = Stream(seed, "deal/0")
    deck, js = s.shuffled_deck()
    d = Stream(seed, "dealer")
    v = d.u64()
    deal = first_deal(seed)
    nd = 1 - deal["dealer"]
    first_block = s.blocks[0]
    return [
        f"seed          {seed}",
        f"salt          {salt}",
        f"hashed bytes  {data[:16].hex()}  (the salt: 16 bytes)",
        f"              {data[16:48].hex()}",
        f"              {data[48:].hex()}  (the seed's text: 64 ASCII bytes)",
        f"seed_hash     {hashlib.sha256(data).hexdigest()}",
        f"deal/0 key    okgin/deal/0/{seed}",
        f'block 0       SHA-256(key + "#0") = {first_block.hex()}',
        "values        " + " ".join(str(int.from_bytes(first_block[i : i + 8], "big")) for i in (0, 8, 16, 24)),
        f"j, i=51..47   {' '.join(str(j) for j in js[:5])}",
        f"deck          {' '.join(card_str(c) for c in deck[:26])}",
        f"              {' '.join(card_str(c) for c in deck[26:])}",
        f"dealer        first value of okgin/dealer/SEED: {v}; mod 2 = seat {deal['dealer']}",
        f"seat {nd} hand   {' '.join(deal['hands'][nd])}  (non-dealer: deck[0:10])",
        f"seat {1 - nd} hand   {' '.join(deal['hands'][1 - nd])}  (dealer: deck[10:20])",
        f"upcard        {deal['upcard']}  (deck[20])",
        f"stock         {' '.join(deal['stock'][:5])} ... (deck[21] on top)",
    ]


# --------------------------------------------------------------- helpers
def reserved(referee: Any, make_client: Any, table: str, n: int = 2, **create: Any) -> tuple[Client, dict[int, Client]]:
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    toks = admin.request(
        {"type": "create_table", "table": table, "variant": "oklahoma" if n == 2 else "box", "reserved": True, **create},
        "table_created",
    )["seat_tokens"]
    clients = {}
    for seat, tok in enumerate(toks):
        c = make_client(referee.endpoint)
        c.hello(f"p{seat}", token=tok)
        c.expect("seated")
        clients[seat] = c
    return admin, clients


def starts(clients: dict[int, Client], table: str) -> dict[int, dict[str, Any]]:
    return {s: c.wait_for(lambda m: m["type"] == "game_start" and m["table"] == table) for s, c in clients.items()}


def resign_game(clients: dict[int, Client], table: str) -> dict[int, dict[str, Any]]:
    """Seat 0 resigns the running game; every seat's game_end."""
    clients[0].request({"type": "resign", "table": table}, "ok")
    return {s: c.wait_for(lambda m: m["type"] == "game_end" and m["table"] == table) for s, c in clients.items()}


def hands_seen(gs: dict[int, dict[str, Any]]) -> dict[int, list[str]]:
    return {s: m["view"]["hand"] for s, m in gs.items()}


def dealt(rules: RuleSet, seed: int | str) -> dict[int, list[str]]:
    full = Game(rules, seed).full_view()
    return {s: [card_str(c) for c in sorted(h)] for s, h in enumerate(full.all_hands)}


def old_scheme_search(target: str, top: int = 100_000) -> list[str]:
    """The attack: every seed text 0..top, and its rematch "S/2", hashed the 1.3 way."""
    found = []
    for i in range(top + 1):
        for text in (str(i), f"{i}/2"):
            if hashlib.sha256(text.encode()).hexdigest() == target:
                found.append(text)
    return found


# --------------------------------------------------------------- (a) the hash gives nothing away
def test_a_small_fixed_seed_is_not_found_from_its_hash(referee, make_client):
    _, clients = reserved(referee, make_client, "fixed", seed=871)
    g = starts(clients, "fixed")
    h = g[0]["seed_hash"]
    assert HEX64.fullmatch(h) and g[1]["seed_hash"] == h
    assert old_scheme_search(h) == [], "the seed was found from game_start's seed_hash"
    assert h != hashlib.sha256(b"871").hexdigest()


# --------------------------------------------------------------- (b) + (c) rematches, and checking a reveal
@pytest.mark.parametrize("fixed", [871, None], ids=["admin-seed", "random-seed"])
def test_b_c_a_rematch_is_not_predictable_and_every_reveal_checks(referee, make_client, fixed):
    rules = RuleSet()
    create = {} if fixed is None else {"seed": fixed}
    _, clients = reserved(referee, make_client, "rm", **create)
    g1 = starts(clients, "rm")
    e1 = resign_game(clients, "rm")[0]
    s1 = e1["seed"]  # revealed to every player
    # (b) what a player knows after game 1 (S) does not tell it game 2's deal
    for c in clients.values():
        c.request({"type": "rematch", "table": "rm"}, "ok")
    g2 = starts(clients, "rm")
    seen2 = hands_seen(g2)
    for guess in (f"{s1}/2", s1, f"{s1}/1", 2):
        assert dealt(rules, guess) != seen2, f"game 2 was dealt from {guess!r}, known from game 1"
        assert commitment(guess, None) != g2[0]["seed_hash"]
    assert g2[0]["seed_hash"] != g1[0]["seed_hash"]
    if fixed is not None:
        assert s1 == fixed
    else:  # 1.4: the referee's own seeds are 256 bits, as 64 hex digits
        assert isinstance(s1, str) and HEX64.fullmatch(s1)
    # (c) game 1's reveal verifies against the commitment and re-deals the hands seen
    assert commitment(s1, e1["salt"]) == g1[0]["seed_hash"] == e1["seed_hash"]
    assert {s: first_deal(s1)["hands"][s] for s in clients} == hands_seen(g1) == dealt(rules, s1)
    e2 = resign_game(clients, "rm")[0]
    s2 = e2["seed"]
    assert isinstance(s2, str) and HEX64.fullmatch(s2) and s2 != s1, "a rematch draws a fresh random seed"
    assert e2["salt"] != e1["salt"]
    assert commitment(s2, e2["salt"]) == g2[0]["seed_hash"] == e2["seed_hash"]
    assert first_deal(s2)["hands"] == seen2 == dealt(rules, s2)
    assert first_deal(s2)["upcard"] == g2[0]["view"]["upcard"]


# --------------------------------------------------------------- (d) deferred reveal
def test_d_deferred_reveal_is_for_admins_only(make_referee, make_client, tmp_path):
    referee = make_referee(journal_dir=str(tmp_path))
    admin, clients = reserved(referee, make_client, "secret", reveal="deferred")
    g1 = starts(clients, "secret")
    h1 = g1[0]["seed_hash"]
    rq = {"type": "reveal", "table": "secret", "game": 1}
    error_of(admin.request(rq), "game_in_progress")  # a running game's seed is never handed out
    ends = resign_game(clients, "secret")
    for e in ends.values():
        assert e["seed"] is None and e["salt"] is None and e["seed_hash"] == h1
    error_of(clients[0].request(rq), "forbidden")  # a player of that very game
    spectator = make_client(referee.endpoint)
    spectator.hello("watcher", role="spectator")
    error_of(spectator.request(rq), "forbidden")
    r = admin.request(rq, "revealed")
    assert r["table"] == "secret" and r["game"] == 1 and r["seed_hash"] == h1
    assert HEX64.fullmatch(r["seed"]) and commitment(r["seed"], r["salt"]) == h1
    assert first_deal(r["seed"])["hands"] == hands_seen(g1)
    error_of(admin.request({**rq, "game": 2}), "no_such_game")
    error_of(admin.request({**rq, "game": 0}), "no_such_game")
    error_of(admin.request({**rq, "table": "nowhere"}), "no_such_table")
    # the journal is the operator's: it keeps the seed and salt, marked deferred, and checks
    journal = next(tmp_path.glob("secret-g1-*.jsonl"))
    end = json.loads(journal.read_text().splitlines()[-1])
    assert end["t"] == "end" and end["reveal"] == "deferred" and (end["seed"], end["salt"]) == (r["seed"], r["salt"])
    assert check_file(journal).termination == "resigned"
    # a rematch at a deferred table: game 2 is deferred too, game 1 still revealable
    for c in clients.values():
        c.request({"type": "rematch", "table": "secret"}, "ok")
    g2 = starts(clients, "secret")
    assert resign_game(clients, "secret")[1]["seed"] is None
    r2 = admin.request({**rq, "game": 2}, "revealed")
    assert r2["seed"] != r["seed"] and commitment(r2["seed"], r2["salt"]) == g2[0]["seed_hash"]
    assert admin.request(rq, "revealed")["seed"] == r["seed"]


def test_d_reveal_at_an_ordinary_table_just_answers(referee, make_client):
    admin, clients = reserved(referee, make_client, "open", seed="open/7")
    starts(clients, "open")
    e = resign_game(clients, "open")[0]
    r = admin.request({"type": "reveal", "table": "open", "game": 1}, "revealed")
    assert (
        (r["seed"], r["salt"], r["seed_hash"])
        == (e["seed"], e["salt"], e["seed_hash"])
        == ("open/7", e["salt"], commitment("open/7", e["salt"]))
    )


def test_d_a_bad_reveal_option_is_refused(referee, make_client):
    admin = make_client(referee.endpoint)
    admin.hello("organiser", role="admin")
    error_of(admin.request({"type": "create_table", "table": "x", "reveal": "never"}, check=False), "bad_message")
    error_of(admin.request({"type": "reveal", "table": "x"}, check=False), "bad_message")  # game is required


def test_d_a_table_keeps_the_last_64_games(referee, make_client):
    from referee.table import REVEAL_HISTORY

    admin, _ = reserved(referee, make_client, "long", reveal="deferred")
    t = referee.call(lambda: referee.ref.lobby.tables["long"])
    referee.call(
        lambda: [t.remember_deal(k, f"s{k}", "00" * 16, commitment(f"s{k}", "00" * 16)) for k in range(1, REVEAL_HISTORY + 11)]
    )
    error_of(admin.request({"type": "reveal", "table": "long", "game": 10}), "no_such_game")
    assert admin.request({"type": "reveal", "table": "long", "game": 11}, "revealed")["seed"] == "s11"
    assert len(t.deals) == REVEAL_HISTORY


# --------------------------------------------------------------- (e) 1.3 journals
def test_e_journals_of_a_1_3_referee_still_check():
    files = sorted(JOURNALS13.glob("*.jsonl"))
    assert len(files) == 2
    for path in files:
        entries = numbered_entries(path)
        end = entries[-1]
        assert "salt" not in end and end["seed_hash"] == hashlib.sha256(str(end["seed"]).encode()).hexdigest()
        check_file(path)
        # the old rule is not a loophole: a wrong seed, or a salt that was never used, fails
        for bad in ({"seed": 872}, {"salt": "00" * 16}, {"salt": "not hex"}, {"seed": None}):
            with pytest.raises(Mismatch, match=r"seed|salt"):
                check_entries([*entries[:-1], {**end, **bad}])


def test_e_replay_checks_the_salted_hash(make_referee, make_client, tmp_path):
    referee = make_referee(journal_dir=str(tmp_path))
    _, clients = reserved(referee, make_client, "j", seed=5, rules={"target_score": 25})
    play_until_end(clients, "j")
    journal = next(tmp_path.glob("j-g1-*.jsonl"))
    entries = numbered_entries(journal)
    assert "salt" not in entries[0]  # the start line holds only the commitment
    end = entries[-1]
    assert commitment(5, end["salt"]) == end["seed_hash"] == entries[0]["seed_hash"]
    check_entries(entries)
    for bad in ({"salt": None}, {"salt": "11" * 16}, {"seed": 6}):
        with pytest.raises(Mismatch, match="seed"):
            check_entries([*entries[:-1], {**end, **bad}])


# --------------------------------------------------------------- protocol.md's worked example
def test_the_worked_example_of_protocol_md_is_right():
    section = DOC[DOC.index("### 12.1 Verifying a deal") :]
    section = section[: section.index("\n## ")]
    block = section[section.index("```text") : section.index("```", section.index("```text") + 3)]
    for line in example_lines(EXAMPLE_SEED, EXAMPLE_SALT):
        assert line in block, f"protocol.md 12.1 lacks (or has another value for): {line}"
    # the documented algorithm is the engine's, for this seed and for old kinds of seeds
    rules = RuleSet()
    for seed in (EXAMPLE_SEED, 871, "871/2", "spring/3", ""):
        g = Game(rules, seed)
        deal = first_deal(seed)
        assert deal["dealer"] == g.hand.dealer and dealt(rules, seed) == deal["hands"]
        assert card_str(g.hand.upcard) == deal["upcard"] and [card_str(c) for c in g.hand.stock[::-1]] == deal["stock"]
    from okgin.rng import seed_hash

    assert seed_hash(EXAMPLE_SEED, EXAMPLE_SALT) == commitment(EXAMPLE_SEED, EXAMPLE_SALT)


if __name__ == "__main__":
    from okgin.rng import new_salt, new_seed

    seed, salt = (sys.argv[1], sys.argv[2]) if len(sys.argv) == 3 else (new_seed(), new_salt())
    print("\n".join(example_lines(seed, salt)))
