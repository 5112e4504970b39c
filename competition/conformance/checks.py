"""From what the kit saw to a verdict per protocol feature.

Every game's trace is read in order, replaying the conversation as the bot lived it
(only what was actually relayed counts: a message swallowed by a silenced connection
never reached the other side). A feature *passes* when it was exercised and every
exercise went right, *fails* at the first thing that went wrong (which is kept, with the
offending message, for the report), and is *not exercised* when no game gave the
occasion. Required features fail the run when not exercised; the ones that depend on
the cards (a drawn hand, say) only warn.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from okgin.cards import mask_of, parse_card
from okgin.melds import validate_arrangement
from okgin.protocol import ProtocolError, validate

from .runner import HELLO_WITHIN_S, TERM_GRACE_S, RunResult
from .trace import C2R, GameTrace, Record, show

# key: (title, required). Order is the report's.
FEATURES: dict[str, tuple[str, bool]] = {
    "arena": ("arena handshake (hello with account and key, seek, heartbeats, game_ready, then its table)", True),
    "handshake": ("handshake and version (hello, protocol 1, seat token, welcome)", True),
    "messages": ("every message one msgpack map per frame, valid per the schema", True),
    "errors": ("no error from the referee except those the kit provoked", True),
    "prompts": ("every prompt answered once, with a legal action, echoing its seq", True),
    "upcard_taken": ("upcard taken", False),
    "upcard_passed": ("upcard passed", False),
    "draw_stock": ("draw from the stock", False),
    "draw_discard": ("draw from the discard pile", False),
    "discard": ("discard", True),
    "knock": ("knock (deadwood within the limit)", False),
    "gin": ("gin", False),
    "big_gin": ("big gin (rule big_gin)", False),
    "layoffs": ("hand laid out with layoffs", False),
    "drawn_hand": ("drawn hand", False),
    "role_box": ("Gin in the Box: played in the box", True),
    "role_captain": ("Gin in the Box: played as captain", True),
    "role_sitter": ("Gin in the Box: sat out (advise prompts)", True),
    "advice": ("advice sent as sitter and accepted", True),
    "illegal_recovery": ("illegal action answered with an error, and recovered from", True),
    "heartbeats": ("heartbeats (never silent for liveness x heartbeat)", True),
    "reconnect": ("reconnect with the token after a silent drop", True),
    "shutdown": ("clean shutdown (after game_end: exits with status 0, or stays and exits on SIGTERM)", True),
    "games": ("games finished normally", True),
}
BOX_ONLY = {"role_box", "role_captain", "role_sitter", "advice"}


@dataclass
class Finding:
    game: str
    what: str
    offending: str = ""
    context: str = ""


@dataclass
class Feature:
    key: str
    title: str
    required: bool
    count: int = 0
    failures: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.failures:
            return "fail"
        return "pass" if self.count else "not exercised"


@dataclass
class Verdict:
    features: list[Feature]
    info: list[str]
    passed: bool
    problems: list[str]

    def feature(self, key: str) -> Feature:
        return next(f for f in self.features if f.key == key)


def _legal_match(action: dict[str, Any], legal: list[Any]) -> bool:
    for a in legal:
        if isinstance(a, dict) and a.get("kind") == action.get("kind") and a.get("card") == action.get("card"):
            return True
    return False


def action_problem(action: Any, prompt: dict[str, Any]) -> str | None:
    """Why ``action`` is not a legal answer to ``prompt`` (None when it is)."""
    if not isinstance(action, dict):
        return "the action is not a map"
    legal = prompt.get("legal") or []
    if not _legal_match(action, legal):
        return f"{show(action)} is not among the prompt's legal actions"
    melds = action.get("melds")
    if melds is None:
        return None
    if action.get("kind") not in ("knock", "big_gin"):
        return "only knock and big_gin may declare melds"
    view = prompt.get("view") or {}
    try:
        hand = mask_of(parse_card(c) for c in view.get("hand") or [])
        if action.get("card") is not None:
            hand &= ~(1 << parse_card(action["card"]))
        arrangement = validate_arrangement(hand, [[parse_card(c) for c in m] for m in melds])
    except (ValueError, TypeError) as e:
        return f"declared melds refused: {e}"
    if action.get("kind") == "big_gin" and arrangement.deadwood:
        return f"big gin declared with {arrangement.deadwood} deadwood: all 11 cards must be melded"
    if arrangement.deadwood > int(view.get("knock_limit", 0)):
        return f"declared melds leave {arrangement.deadwood} deadwood, over the knock limit {view.get('knock_limit')}"
    return None


class _Game:
    """Replays one game's trace against the features."""

    def __init__(self, gt: GameTrace, f: dict[str, Feature], heartbeat_ms: int, liveness: int, info: dict[str, int]) -> None:
        self.gt = gt
        self.f = f
        self.hb = heartbeat_ms
        self.liveness = liveness
        self.info = info
        self.first_on_conn: set[int] = set()
        self.pending_prompt: dict[str, Any] | None = None
        self.prompted: dict[int, Record] = {}
        self.answered: set[object] = set()  # the seqs acts echoed, as the bot sent them (a prompt's int)
        self.advise_prompts: dict[int, int] = {}  # seq -> record index
        self.pending_advise: dict[int, list[Record]] = {}
        self.last_request: dict[tuple[int, str], Record] = {}
        self.illegal_state = ""  # "" -> sent -> error -> reprompted -> recovered
        self.last_move_at = -1  # record index of the last event the bot saw
        # The bot's last legal act, until the referee's next message shows it was taken
        # (anything but an error to it). Counted from acts, not events: a bot may decline
        # events (hello.events = false, protocol 1.1).
        self.unconfirmed: dict[str, Any] | None = None

    def fail(self, key: str, what: str, rec: Record | None = None, context: str = "") -> None:
        self.f[key].failures.append(Finding(self.gt.label, what, show(rec.msg, raw=rec.raw) if rec is not None else "", context))

    def run(self) -> None:
        gt = self.gt
        errors_before = len(self.f["errors"].failures)
        for rec in gt.records:
            if rec.direction == C2R:
                self.from_bot(rec)
            elif rec.relayed:
                self.to_bot(rec)
        if len(self.f["errors"].failures) == errors_before and gt.records:
            self.f["errors"].count += 1  # one more game without an unexpected error
        self.after()

    # -- the bot's messages ---------------------------------------------------------
    def from_bot(self, rec: Record) -> None:
        m = rec.msg
        if m is None or rec.problem:
            self.fail("messages", rec.problem or "not a message", rec)
            if m is None:
                return
        try:
            validate(m)
            if not rec.problem:
                self.f["messages"].count += 1
        except ProtocolError as e:
            self.fail("messages", f"{e.name}: {e}", rec)
        t = rec.type or "?"
        if rec.conn not in self.first_on_conn:
            self.first_on_conn.add(rec.conn)
            if t != "hello":
                self.fail("handshake", f"the first message on a new connection is {t!r}, not hello", rec)
        if t == "hello":
            self.hello(rec, m)
        if not rec.relayed:
            return  # swallowed by the silenced connection: the referee never saw it
        self.last_request[(rec.conn, t)] = rec
        if t == "act":
            self.act(rec, m)
        elif t == "advise":
            self.advise(rec, m)
        elif t == "heartbeat":
            self.info["heartbeats sent"] = self.info.get("heartbeats sent", 0) + 1
        elif t == "bye":
            self.info["bye sent"] = self.info.get("bye sent", 0) + 1

    def hello(self, rec: Record, m: dict[str, Any]) -> None:
        problems = []
        if m.get("protocol") != 1:
            problems.append(f"protocol is {m.get('protocol')!r}, not 1")
        if m.get("role") != "player":
            problems.append(f"role is {m.get('role')!r}, not 'player'")
        if m.get("token") != self.gt.token:
            problems.append("the token is not the seat's")
        if sum(1 for r in self.gt.records[: rec.index] if r.conn == rec.conn and r.direction == C2R and r.type == "hello"):
            problems.append("a second hello on the same connection")
        for p in problems:
            self.fail("handshake", p, rec)
        if not problems:
            self.f["handshake"].count += 1

    def act(self, rec: Record, m: dict[str, Any]) -> None:
        prompt = self.pending_prompt
        seq = m.get("seq")
        if prompt is None:
            self.fail("prompts", "an act with no prompt pending", rec)
            return
        if seq != prompt.get("seq"):
            self.fail("prompts", f"the act answers seq {seq!r}; the pending prompt is seq {prompt.get('seq')}", rec, show(prompt))
        elif m.get("table") != self.gt.table:
            self.fail("prompts", f"the act names table {m.get('table')!r}, not {self.gt.table!r}", rec)
        elif seq in self.answered:
            self.fail("prompts", f"a second act for seq {seq}", rec)
        else:
            problem = action_problem(m.get("action"), prompt)
            if problem:
                self.fail("prompts", problem, rec, show(prompt.get("legal")))
            else:
                self.answered.add(seq)
                self.f["prompts"].count += 1
                action = m.get("action") or {}
                if rec.replaced_by is None:
                    self.unconfirmed = action
                if action.get("kind") in ("knock", "big_gin"):
                    key = "knocks with declared melds" if action.get("melds") is not None else "knocks with the referee's melds"
                    self.info[key] = self.info.get(key, 0) + 1
        self.pending_prompt = None
        if rec.replaced_by is not None:
            self.illegal_state = "sent"

    def advise(self, rec: Record, m: dict[str, Any]) -> None:
        self.pending_advise.setdefault(rec.conn, []).append(rec)
        seq = m.get("seq")
        at = self.advise_prompts.get(seq) if isinstance(seq, int) else None
        if at is None:
            self.fail("advice", f"advice for seq {seq!r}, which no advise_prompt offered", rec)
            return
        action = m.get("action")
        prompt = self.gt.records[at].msg or {}
        if action is not None:
            problem = action_problem(action, prompt)
            if problem:
                self.fail("advice", "the advised " + problem, rec, show(prompt.get("legal")))

    # -- what the bot received ------------------------------------------------------
    def to_bot(self, rec: Record) -> None:
        m = rec.msg
        if m is None:
            return
        t = rec.type
        seat = self.gt.seat
        if self.unconfirmed is not None and t not in ("error", "heartbeat", "ok", "pong", "advice"):
            self.confirmed(self.unconfirmed)
            self.unconfirmed = None
        if t == "welcome":
            resumed = bool(m.get("resumed"))
            if rec.conn != self.gt.connections[0] and not resumed:
                self.fail("reconnect", "the welcome on the new connection did not resume the session", rec)
        elif t == "prompt":
            self.pending_prompt = m
            seq = m.get("seq")
            if isinstance(seq, int):
                self.prompted.setdefault(seq, rec)
            role = _role(m, seat)
            if role in ("box", "captain"):
                self.f[f"role_{role}"].count += 1
            if m.get("error") is not None and self.illegal_state == "error":
                self.illegal_state = "reprompted"
        elif t == "advise_prompt":
            if isinstance(m.get("seq"), int):
                self.advise_prompts[m["seq"]] = rec.index
            self.f["role_sitter"].count += 1
        elif t == "advice":
            self.info["advice received as captain"] = self.info.get("advice received as captain", 0) + 1
        elif t == "ok" and m.get("request") == "advise":
            queue = self.pending_advise.get(rec.conn) or []
            if queue:
                queue.pop(0)
            self.f["advice"].count += 1
        elif t == "error":
            self.error(rec, m)
        elif t == "event":
            self.last_move_at = rec.index
        elif t == "hand_end":
            self.last_move_at = rec.index
            self.hand_end(m)
        elif t == "game_end":
            self.last_move_at = rec.index

    def confirmed(self, action: dict[str, Any]) -> None:
        """The referee took this move of the bot's."""
        if self.illegal_state == "reprompted":
            self.illegal_state = "recovered"
        key = {
            "take": "upcard_taken",
            "pass": "upcard_passed",
            "draw_stock": "draw_stock",
            "draw_discard": "draw_discard",
            "discard": "discard",
        }.get(str(action.get("kind")))
        if key:
            self.f[key].count += 1

    def error(self, rec: Record, m: dict[str, Any]) -> None:
        request = m.get("request")
        name = m.get("name")
        if request == "act":
            self.unconfirmed = None
        offending = self.last_request.get((rec.conn, str(request)))
        if request is None:  # a frame too broken to have a type: the last such frame sent
            offending = next(
                (
                    r
                    for r in reversed(self.gt.records[: rec.index])
                    if r.conn == rec.conn and r.direction == C2R and r.msg is None
                ),
                None,
            )
        if request == "act" and self.illegal_state == "sent" and offending is not None and offending.replaced_by is not None:
            self.illegal_state = "error" if name == "illegal_action" else "wrong-error"
            return
        if request == "advise":
            queue = self.pending_advise.get(rec.conn) or []
            advice = queue.pop(0) if queue else offending
            seq = advice.msg.get("seq") if advice is not None and advice.msg else None
            at = self.advise_prompts.get(seq, rec.index) if isinstance(seq, int) else rec.index
            # Advice that raced the captain's move (protocol.md 16) is refused, harmlessly.
            if name == "stale_seq" or (name in ("forbidden", "no_game") and self.last_move_at > at):
                self.info["advice too late (raced the captain)"] = self.info.get("advice too late (raced the captain)", 0) + 1
                return
            offending = advice
        what = f"error {m.get('code')} {name} to {request}: {m.get('message')}"
        if offending is not None:
            self.f["errors"].failures.append(Finding(self.gt.label, what, show(offending.msg, raw=offending.raw), show(m)))
        else:
            self.fail("errors", what, rec)

    def hand_end(self, m: dict[str, Any]) -> None:
        result = m.get("result") or {}
        seat = self.gt.seat
        outcome = result.get("outcome")
        if outcome == "drawn":
            if _role(m, seat) != "sitter":
                self.f["drawn_hand"].count += 1
            return
        if seat not in (result.get("knocker"), result.get("defender")):
            return
        if result.get("knocker") == seat:
            self.f[{"gin": "gin", "big_gin": "big_gin"}.get(str(outcome), "knock")].count += 1
        layout = result.get("defender_layout") or {}
        if layout.get("layoffs"):
            self.f["layoffs"].count += 1

    # -- the game as a whole ----------------------------------------------------------
    def after(self) -> None:
        gt = self.gt
        if not gt.connections:
            self.fail(
                "handshake",
                "the bot never said hello with its seat token (no connection of its reached the kit)",
                None,
                gt.stderr_tail,
            )
        never = sorted(s for s in self.prompted if s not in self.answered)
        if never and gt.game_end is not None and gt.game_end.get("termination") == "normal":
            # A prompt superseded by the illegal probe's re-prompt was answered (illegally).
            probe = gt.fault("illegal")
            never = [s for s in never if not (probe and (gt.records[probe.record].msg or {}).get("seq") == s)]
        if never:
            self.fail("prompts", f"prompt seq {never[0]} was never answered", self.prompted[never[0]])
        self.heartbeats()
        self.probes()
        if gt.problem:
            self.fail("games", gt.problem)
        elif gt.game_end is not None:
            term = gt.game_end.get("termination")
            if term == "normal":
                self.f["games"].count += 1
            else:
                who = gt.game_end.get("at_fault")
                blame = "the bot under test" if who == gt.seat else f"seat {who}"
                self.fail("games", f"the game ended by {term} ({blame} at fault)", None, show(gt.game_end))
        # protocol.md §18 ("Running a bot"), exactly: after its game_end a bot exits with
        # status 0, or stays (in the lobby, §4) until the launcher's SIGTERM ends it within
        # TERM_GRACE_S; both are clean. A non-zero status of its own, or needing SIGKILL, is not.
        if gt.exited_by_itself and gt.exit_code == 0:
            self.f["shutdown"].count += 1
        elif gt.exited_by_itself:
            self.fail("shutdown", f"the bot exited with status {gt.exit_code}", None, gt.stderr_tail)
        elif gt.stopped_by_term:
            self.f["shutdown"].count += 1
        else:
            self.fail(
                "shutdown",
                f"the bot was still running after the game ended, and SIGTERM did not end it within {TERM_GRACE_S:g} s "
                "(it was killed)",
                None,
                gt.stderr_tail,
            )
        if gt.hello_after is not None and gt.hello_after > HELLO_WITHIN_S:
            self.fail("handshake", f"the bot said hello {gt.hello_after:.1f} s after it was started; the launch contract "
                      f"(protocol.md §18) allows {HELLO_WITHIN_S:g} s", None, gt.stderr_tail)

    def heartbeats(self) -> None:
        gt = self.gt
        limit = self.hb * self.liveness / 1000
        end = gt.ended if gt.ended is not None else float("inf")
        silence = gt.fault("silence")
        longest = 0.0
        blamed: list[float] = []  # silences over the limit while the referee kept talking
        excused = 0
        for conn in gt.connections:
            times = [r.t for r in gt.records if r.conn == conn and r.direction == C2R and r.relayed and r.t <= end]
            heard = [r.t for r in gt.records if r.conn == conn and r.direction != C2R and r.relayed]
            if silence is not None and gt.records[silence.record].conn == conn:
                times = [t for t in times if t <= silence.t]
            for a, b in itertools.pairwise(times):
                longest = max(longest, b - a)
                if b - a <= limit:
                    continue
                # The kit itself may have been starved of CPU: then the referee's messages
                # of that stretch reach it bunched at the end. Only a silence during which
                # the referee was heard, spread out, is the bot's.
                inside = [t for t in heard if a < t < b]
                if inside and max(inside) - min(inside) >= self.hb / 1000:
                    blamed.append(b - a)
                else:
                    excused += 1
        self.info["longest silence of the bot (ms)"] = max(
            self.info.get("longest silence of the bot (ms)", 0), round(longest * 1000)
        )
        if blamed:
            self.fail(
                "heartbeats",
                f"the bot sent nothing for {max(blamed) * 1000:.0f} ms while the referee kept talking; "
                f"the referee drops a peer after {limit * 1000:.0f} ms",
            )
        if excused:
            self.info["silences blamed on a slow machine, not the bot"] = (
                self.info.get("silences blamed on a slow machine, not the bot", 0) + excused
            )
        if gt.idle_window is not None:
            t0, t1 = gt.idle_window
            # Slack of one beat at the end: frames read in the same turn of the kit's loop
            # as the end of its wait may be stamped just after it.
            beats = [r for r in gt.records if r.direction == C2R and r.type == "heartbeat" and t0 <= r.t <= t1 + self.hb / 1000]
            if beats:
                self.f["heartbeats"].count += 1
            else:
                self.fail(
                    "heartbeats",
                    f"no heartbeat while waiting {(t1 - t0) * 1000:.0f} ms for the opponents (heartbeat_ms {self.hb})",
                )

    def probes(self) -> None:
        gt = self.gt
        illegal = gt.fault("illegal")
        if illegal is not None:
            context = illegal.detail
            if self.illegal_state == "recovered":
                self.f["illegal_recovery"].count += 1
            elif self.illegal_state == "sent":
                self.fail(
                    "illegal_recovery",
                    "the referee never answered the illegal action with an error (referee problem)",
                    gt.records[illegal.record],
                    context,
                )
            elif self.illegal_state == "wrong-error":
                self.fail(
                    "illegal_recovery",
                    "the referee answered the illegal action with another error (referee problem)",
                    gt.records[illegal.record],
                    context,
                )
            elif self.illegal_state == "error":
                self.fail(
                    "illegal_recovery", "no re-prompt came after the error (referee problem)", gt.records[illegal.record], context
                )
            else:
                self.fail(
                    "illegal_recovery",
                    "the bot did not answer the re-prompt with a legal act",
                    gt.records[illegal.record],
                    context,
                )
        silence = gt.fault("silence")
        if silence is None:
            return
        silenced_conn = gt.records[silence.record].conn
        later = [
            c for c in gt.connections if c != silenced_conn and gt.connections.index(c) > gt.connections.index(silenced_conn)
        ]
        if not later:
            self.fail(
                "reconnect",
                f"no new connection after the connection went silent (expected within {self.hb * self.liveness} ms of silence)",
                gt.records[silence.record],
            )
            return
        new = later[0]
        first = next((r for r in gt.records if r.conn == new), None)
        welcome = next((r for r in gt.records if r.conn == new and r.direction != C2R and r.type == "welcome"), None)
        moved = any(r.conn == new and r.direction == C2R and r.type == "act" for r in gt.records)
        ended_ok = gt.game_end is not None and gt.game_end.get("termination") == "normal"
        if welcome is None or not (welcome.msg or {}).get("resumed"):
            return  # reported by the handshake / welcome checks
        if not (moved or ended_ok):
            self.fail("reconnect", "after resuming, the bot never acted again", first)
            return
        self.f["reconnect"].count += 1
        assert first is not None
        self.info["reconnection delay after the silence (ms)"] = round((first.t - silence.t) * 1000)


def _role(m: dict[str, Any], seat: int) -> str | None:
    """The seat's role in the message's view (a drawn hand keeps the roles, so for its
    ``hand_end`` the next deal's roles are the drawn hand's too)."""
    view = m.get("view") or {}
    roles = view.get("roles") or []
    return roles[seat] if isinstance(roles, list) and seat < len(roles) else None


def _arena(gt: GameTrace, feature: Feature, hb: int) -> None:
    """--arena: what the stand-in arena saw of this game's bot (.arenadesk), then whether
    it reached the table game_ready named."""
    visit = gt.arena
    label = gt.label
    before = len(feature.failures)
    for why in visit.problems:
        feature.failures.append(Finding(label, why, show(visit.hello) if why.startswith("hello") else show(visit.seek)))
    if visit.hello is None:
        feature.failures.append(Finding(label, "the bot never said hello to the arena (OKGIN_ARENA)"))
    elif visit.seek is None and not visit.problems:
        feature.failures.append(Finding(label, "the bot never sent seek after the arena's welcome", show(visit.hello)))
    elif visit.ready_at is not None and gt.hello_after is None:
        feature.failures.append(Finding(label, "the bot never said hello at the table with game_ready's endpoint and token"))
    if visit.wait_window is not None:
        t0, t1 = visit.wait_window
        if not any(t0 <= t <= t1 + hb / 1000 for t in visit.heartbeats):
            feature.failures.append(Finding(
                label, f"no heartbeat to the arena while waiting {(t1 - t0) * 1000:.0f} ms for game_ready (heartbeat_ms {hb})"))
    if len(feature.failures) == before and gt.hello_after is not None:
        feature.count += 1


def judge(result: RunResult) -> Verdict:
    cfg = result.config
    feats = {k: Feature(k, title, req) for k, (title, req) in FEATURES.items()}
    info: dict[str, int] = {}
    for gt in result.games:
        _Game(gt, feats, cfg.heartbeat_ms, cfg.liveness, info).run()
        if gt.arena is not None:
            _arena(gt, feats["arena"], cfg.heartbeat_ms)
    for why in result.arena_strangers:
        feats["arena"].failures.append(Finding("(no game)", why))
    for conn, msg in result.orphans:
        feats["handshake"].failures.append(
            Finding(
                "(no game)", f"connection {conn} did not start with a hello carrying a seat token the kit handed out", show(msg)
            )
        )
    for why in result.not_zmtp:
        feats["messages"].failures.append(Finding("(no game)", f"the bytes on a connection are not ZMTP: {why}"))
    box = "box" in cfg.variants and cfg.games > 0
    features = [f for f in feats.values() if box or f.key not in BOX_ONLY]
    if not any(r.replace(" ", "").lower() in ("big_gin=true", "big_gin=1", "big_gin=yes", "big_gin=on") for r in cfg.rules):
        features = [f for f in features if f.key != "big_gin"]
    if not cfg.probes:
        features = [f for f in features if f.key not in ("illegal_recovery", "reconnect")]
    if not cfg.arena:
        features = [f for f in features if f.key != "arena"]
    problems = []
    for f in features:
        if f.status == "fail":
            problems.append(f"{f.title}: failed")
        elif f.status == "not exercised" and f.required:
            problems.append(f"{f.title}: not exercised")
    lines = [f"{k}: {v}" for k, v in sorted(info.items())]
    return Verdict(features, lines, not problems, problems)
