"""``okgin tournament verify DB``: check a finished tournament's deals from its revealed secret.

Why anyone can do it: the seeds are not the organiser's word. The secret's commitment
was printed and stored before the first game; each game's ``seed_hash`` was published by
the referee at ``game_start``. Once the event is over its secret is revealed, and then:

1. **The secret**: SHA-256(secret) must equal the stored commitment.
2. **The schedule**: rebuilt from the stored config, every game's index must give its
   stored deal, seating and seats, and deal ``k``'s seed must be HMAC-SHA256(secret,
   ASCII decimal of ``k``) (:mod:`okgin.schedule`) -- in the game row, in its record and
   in the revealed deals.
3. **The commitments**: every game's ``seed_hash`` must be SHA-256(salt || seed)
   (protocol.md §5.10, 12.1) with the salt the referee revealed after the game.
4. **The games**: every record re-runs through the engine (:meth:`okgin.Game.from_record`
   with ``verify``) to the stored winner and final scores.

Exit status 0 when everything agrees, 1 on any mismatch (each printed), 2 when the file
cannot be read or verified (not a results file, made before secret deals, or an event
still in progress: its secret is not revealed yet).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from okgin import Game
from okgin.rng import is_salt, seed_hash
from okgin.schedule import commitment, deal_key, deal_seed, parse_secret

from . import entropy
from .config import ConfigError, TournamentConfig, parse_config
from .schedule import Schedule
from .store import ResultsStore, StoreError

MAX_SHOWN = 50  # mismatches printed one by one; the rest are counted


def secrecy_lines(store: ResultsStore) -> list[str]:
    """What a report may say about the deals: the commitment, the revealed deals, and the
    secret only once it was revealed (never while the event is in progress)."""
    com = store.get_meta("secret_commitment")
    if com is None:
        return ["deals: made before secret deals (each deal's seed was public)"]
    deals = store.revealed_deals()
    lines = [f"secret deals: commitment {com}; {len(deals)} deal(s) revealed"]
    if store.get_meta("secret_fixed") == "1":
        lines.append("  the secret was fixed by the config: these deals were reproducible, not secret")
    revealed = store.secret_revealed()
    if revealed is None:
        lines.append("  the secret stays secret until the event is complete (a --resume keeps it)")
    else:
        lines.append(f"  secret {revealed} (check every deal: okgin tournament verify {store.path})")
    return lines


def config_from_store(data: dict[str, Any]) -> TournamentConfig:
    """The parts of the config that decide the schedule, from the stored fingerprint data."""
    t: dict[str, Any] = {"format": data["format"], "duplicate": data["duplicate"]}
    if data["format"] != "sprt":
        t["games_per_pairing"] = data["games_per_pairing"]
    if data.get("champion"):
        t["champion"] = data["champion"]
    doc: dict[str, Any] = {
        "tournament": t,
        "participant": [{"name": p["name"], "bot": "random"} for p in data["participants"]],
        "rules": data["rules"],
    }
    if data.get("sprt"):
        doc["sprt"] = data["sprt"]
    return parse_config(doc)


def verify(store: ResultsStore) -> tuple[list[str], int]:
    """Every mismatch as a sentence, and the number of games checked.

    Raises :class:`StoreError` when the file cannot be verified at all."""
    if store.get_meta("secret_commitment") is None:
        raise StoreError(f"{store.path} was made before secret deals: there is no secret to verify")
    revealed = store.secret_revealed()
    if revealed is None:
        raise StoreError(f"{store.path}: the event is not complete, its secret is not revealed yet "
                         "(finish it with --resume, then verify)")
    bad: list[str] = []
    try:
        secret = parse_secret(revealed)
    except ValueError as e:
        raise StoreError(f"{store.path}: the revealed secret is malformed ({e})") from None
    if commitment(secret) != store.get_meta("secret_commitment"):
        bad.append(f"the revealed secret does not match the commitment {store.get_meta('secret_commitment')} "
                   f"(SHA-256 of it is {commitment(secret)})")
    try:
        schedule: Schedule | None = Schedule(config_from_store(store.config_data()), secret, store.entropy_nonces())
    except (ConfigError, KeyError, TypeError) as e:
        schedule = None
        bad.append(f"the stored config does not give a schedule: {e}")
    deals = store.revealed_deals()
    commits = store.commitments()
    games = store.games(with_records=True)
    # The participants' nonces (.entropy): the deals derive from them too; none stored: the old derivation.
    bad += entropy.record_problems(store, secret)
    key = deal_key(secret, store.entropy_nonces())
    for deal in sorted(deals):
        if deals[deal] != deal_seed(key, deal):
            bad.append(f"deal {deal}: the revealed seed {deals[deal]} is not HMAC-SHA256(secret, {deal!r})")
    for g in games:
        where = f"game {g.index} ({g.key})"
        seed = deal_seed(key, g.deal)
        if schedule is not None:
            try:
                sg = schedule[g.index]
            except IndexError:
                bad.append(f"{where}: index {g.index} is outside the schedule")
            else:
                if (sg.deal, sg.seating, sg.seats, sg.key) != (g.deal, g.seating, g.seats, g.key):
                    bad.append(f"{where}: the schedule has deal {sg.deal}, seating {sg.seating}, seats "
                               f"{' v '.join(sg.seats)} at this index; the file has deal {g.deal}, seating "
                               f"{g.seating}, seats {' v '.join(g.seats)}")
        if g.seed != seed:
            bad.append(f"{where}: seed {g.seed} is not deal {g.deal}'s ({seed})")
        if str(g.record.get("seed")) != seed:
            bad.append(f"{where}: its record was dealt from {g.record.get('seed')!r}, not deal {g.deal}'s seed")
        if g.deal not in deals:
            bad.append(f"{where}: deal {g.deal}'s seed was never revealed")
        if g.index not in commits:
            bad.append(f"{where}: no seed_hash and salt were kept for it")
        else:
            h, salt = commits[g.index]
            if not is_salt(salt):
                bad.append(f"{where}: the referee revealed no valid salt ({salt!r})")
            elif seed_hash(seed, salt) != h:
                bad.append(f"{where}: game_start's seed_hash {h} is not SHA-256(salt || seed) = {seed_hash(seed, salt)}")
        try:
            game = Game.from_record(g.record, verify=True)
        except Exception as e:  # any failure to replay is a mismatch to report
            bad.append(f"{where}: its record does not replay: {type(e).__name__}: {e}")
            continue
        if not game.is_over:
            bad.append(f"{where}: its record replays to an unfinished game")
            continue
        winner = None if game.winner is None else g.seats[game.winner]
        if tuple(game.scores) != tuple(g.scores) or winner != g.winner:
            bad.append(f"{where}: the record replays to scores {list(game.scores)}, winner {winner}; the file says "
                       f"{list(g.scores)}, winner {g.winner}")
    return bad, len(games)


def verify_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="okgin tournament verify",
                                description="Check every deal, commitment and game of a finished tournament from its "
                                "revealed secret (docs/tournaments.md, Secret deals).")
    p.add_argument("db", help="the results file (.sqlite) of a finished tournament")
    p.add_argument("--nonce", action="append", default=[], metavar="NAME=HEX",
                   help="a participant's own nonce (its bot printed it): check that it went into every deal")
    args = p.parse_args(argv)
    own: list[tuple[str, str]] = []
    for item in args.nonce:
        name, sep, hexed = item.partition("=")
        if not sep or not name:
            print(f"okgin tournament verify: --nonce wants NAME=HEX, got {item!r}", file=sys.stderr)
            return 2
        own.append((name, hexed.strip().lower()))
    try:
        store = ResultsStore.open_existing(args.db)
    except StoreError as e:
        print(f"okgin tournament verify: {e}", file=sys.stderr)
        return 2
    try:
        bad, n = verify(store)
        for name, hexed in own:
            mine = entropy.check_nonce(store, parse_secret(store.secret_revealed() or ""), name, hexed)
            bad += mine
            if not mine:
                print(f"{name}: your nonce went into every deal: ok")
    except StoreError as e:
        print(f"okgin tournament verify: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()
    if bad:
        for line in bad[:MAX_SHOWN]:
            print(f"MISMATCH {line}")
        if len(bad) > MAX_SHOWN:
            print(f"... and {len(bad) - MAX_SHOWN} more")
        print(f"okgin tournament verify: {len(bad)} mismatch(es) in {n} game(s)")
        return 1
    print(f"okgin tournament verify: {n} game(s), every deal, commitment and record checks")
    return 0
