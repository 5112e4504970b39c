//! The protocol client: handshake, sitting down, answering prompts, heartbeats, and
//! reconnection with the session token (protocol.md sections 4, 5 and 10).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cards;
use crate::entropy::Entropy;
use crate::strategy::{Action, Situation};
use crate::wire::{self, Incoming, WireAction};

/// How the bot was asked to play.
pub struct Options {
    pub endpoint: String,
    pub name: String,
    /// A reserved seat's (or a session's) token: `hello` seats or resumes us.
    pub token: Option<String>,
    /// A named table to join; else the quick-match queue of `variant`.
    pub table: Option<String>,
    pub variant: String,
    /// Games to play before leaving; 0 = until the referee stops.
    pub games: u32,
    pub give_up: Duration,
    pub verbose: bool,
    /// The referee's CURVE public key (Z85, 40 characters: an arena's `game_ready.server_key`);
    /// None for plain TCP.
    pub server_key: Option<String>,
}

/// Set by SIGINT / SIGTERM: leave cleanly at the next turn of the loop.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Errors after which the session cannot exist: no point in trying again.
// 1.4: session_taken = another connection resumed our session with the token: stop, never
// resume (the two would take the seat from each other for ever); bad_identity = do not set a routing id.
const FATAL_ERRORS: [&str; 5] = ["version_mismatch", "bad_token", "auth_failed", "session_taken", "bad_identity"];

pub struct Client {
    opt: Options,
    ctx: zmq::Context,
    socket: zmq::Socket,
    token: Option<String>,
    seated_by_token: bool,
    heartbeat: Duration,
    liveness: u32,
    last_sent: Instant,
    last_recv: Instant,
    lost_since: Option<Instant>,
    games_done: u32,
    status: Option<i32>,
    entropy: Option<Entropy>,
    /// Our CURVE key pair, made once when the referee requires CURVE (it knows the seat by
    /// its token, not by our key, so a fresh pair is as good as any).
    curve: Option<zmq::CurveKeyPair>,
}

impl Client {
    pub fn new(opt: Options) -> Result<Client, zmq::Error> {
        let ctx = zmq::Context::new();
        let socket = ctx.socket(zmq::DEALER)?;
        let now = Instant::now();
        let seated_by_token = opt.token.is_some();
        Ok(Client {
            token: opt.token.clone(),
            seated_by_token,
            opt,
            ctx,
            socket,
            heartbeat: Duration::from_millis(5000), // until `welcome` says otherwise
            liveness: 3,
            last_sent: now,
            last_recv: now,
            lost_since: None,
            games_done: 0,
            status: None,
            // 1.5: a nonce for a tournament's deals when seated by a token (none if /dev/urandom fails)
            entropy: if seated_by_token { Entropy::new().ok() } else { None },
            curve: None,
        })
    }

    fn log(&self, always: bool, text: &str) {
        if always || self.opt.verbose {
            eprintln!("okgin-bot[rust {}] {}", self.opt.name, text);
        }
    }

    /// Sends one frame without blocking; a full queue means the referee is unreachable,
    /// and the silence check will reconnect.
    fn send<T: Serialize>(&mut self, message: &T) {
        self.last_sent = Instant::now();
        if let Err(e) = self.socket.send(wire::encode(message), zmq::DONTWAIT) {
            if e != zmq::Error::EAGAIN {
                self.log(true, &format!("send failed: {}", e));
            }
        }
    }

    fn send_bare(&mut self, kind: &'static str) {
        self.send(&wire::Bare { kind });
    }

    /// A new DEALER (a new routing id) and a `hello`, with the token when we have one.
    fn open_socket(&mut self) -> Result<(), zmq::Error> {
        let socket = self.ctx.socket(zmq::DEALER)?;
        socket.set_linger(0)?;
        if let Some(server_key) = self.opt.server_key.as_deref() {
            let server = zmq::z85_decode(server_key).map_err(|_| zmq::Error::EINVAL)?;
            if server.len() != 32 {
                return Err(zmq::Error::EINVAL);
            }
            if self.curve.is_none() {
                self.curve = Some(zmq::CurveKeyPair::new()?);
            }
            let pair = self.curve.as_ref().expect("made above");
            socket.set_curve_serverkey(&server)?;
            socket.set_curve_publickey(&pair.public_key)?;
            socket.set_curve_secretkey(&pair.secret_key)?;
        }
        socket.connect(&self.opt.endpoint)?;
        self.socket = socket; // the old one is dropped, i.e. closed
        let token = self.token.clone();
        let name = self.opt.name.clone();
        let commit = self.entropy.as_ref().map(|e| e.commit.clone());
        self.send(&wire::Hello {
            kind: "hello",
            protocol: wire::PROTOCOL_MAJOR,
            minor: wire::PROTOCOL_MINOR,
            role: "player",
            name: &name,
            token: token.as_deref(),
            events: false,
            entropy_commit: commit.as_deref(),
        });
        self.last_recv = Instant::now(); // the silence timer starts with the hello
        Ok(())
    }

    /// Leave cleanly: `bye`, flushed for up to a second.
    fn finish(&mut self, status: i32) {
        self.send_bare("bye");
        let _ = self.socket.set_linger(1000);
        self.status = Some(status);
    }

    fn sit_down(&mut self) {
        let table = self.opt.table.clone();
        let variant = self.opt.variant.clone();
        let kind = if table.is_some() { "join" } else { "queue" };
        self.send(&wire::SitDown { kind, table: table.as_deref(), variant: &variant });
    }

    /// Plays until done; returns the process exit status.
    pub fn run(&mut self) -> i32 {
        if let Err(e) = self.open_socket() {
            self.log(true, &format!("cannot connect to {}: {}", self.opt.endpoint, e));
            return 2;
        }
        while self.status.is_none() {
            if STOP.load(Ordering::SeqCst) {
                self.log(true, "stopped by a signal");
                self.finish(0);
                break;
            }
            let silent_limit = self.heartbeat * self.liveness;
            let now = Instant::now();
            let due = (self.last_sent + self.heartbeat).min(self.last_recv + silent_limit);
            let wait = due.saturating_duration_since(now);
            match self.socket.poll(zmq::POLLIN, wait.as_millis() as i64) {
                Ok(n) if n > 0 => self.receive_all(),
                Ok(_) | Err(zmq::Error::EINTR) => {}
                Err(e) => {
                    self.log(true, &format!("poll failed: {}", e));
                    return 1;
                }
            }
            if self.status.is_some() {
                break;
            }
            let now = Instant::now();
            if now.duration_since(self.last_sent) >= self.heartbeat {
                self.send_bare("heartbeat");
            }
            if now.duration_since(self.last_recv) >= silent_limit {
                let lost_since = *self.lost_since.get_or_insert(now);
                if now.duration_since(lost_since) >= self.opt.give_up {
                    self.log(true, &format!("referee silent for {:?}: giving up", now.duration_since(lost_since)));
                    return 1;
                }
                self.log(true, &format!("referee silent for {:?}: reconnecting with the session token", silent_limit));
                if let Err(e) = self.open_socket() {
                    self.log(true, &format!("cannot reconnect: {}", e));
                    return 1;
                }
            }
        }
        self.status.unwrap_or(1)
    }

    fn receive_all(&mut self) {
        while self.status.is_none() {
            let frame = match self.socket.recv_bytes(zmq::DONTWAIT) {
                Ok(frame) => frame,
                Err(_) => return,
            };
            self.last_recv = Instant::now();
            self.lost_since = None;
            match wire::decode(&frame) {
                Ok(msg) => self.handle(msg),
                Err(e) => self.log(true, &format!("ignored a frame that does not decode ({} bytes): {}", frame.len(), e)),
            }
        }
    }

    fn handle(&mut self, msg: Incoming) {
        match msg.kind.as_str() {
            "welcome" => {
                self.token = msg.token.clone();
                self.heartbeat = Duration::from_millis(msg.heartbeat_ms.unwrap_or(5000).max(10));
                self.liveness = msg.liveness.unwrap_or(3).clamp(1, 1000) as u32;
                self.log(false, &format!("welcome ({}), heartbeat {:?}", if msg.resumed { "resumed" } else { "new session" }, self.heartbeat));
                if !msg.resumed && !self.seated_by_token {
                    self.sit_down();
                }
            }
            "entropy_request" => {
                if let (Some((nonce, commit)), Some(table)) = (self.entropy.as_ref().map(|e| (e.nonce.clone(), e.commit.clone())), msg.table.as_deref()) {
                    self.log(true, &format!("my nonce {} (commitment {}) goes into the deals; keep it: okgin tournament verify DB --nonce NAME={}", nonce, commit, nonce));
                    self.send(&wire::EntropyReveal { kind: "entropy_reveal", table, nonce: &nonce });
                }
            }
            "prompt" => self.on_prompt(&msg, false),
            "advise_prompt" => self.on_prompt(&msg, true),
            "game_end" => self.on_game_end(&msg),
            "error" => self.on_error(&msg),
            "shutdown" => {
                self.log(true, &format!("referee shutting down: {}", msg.reason.unwrap_or_default()));
                self.status = Some(0);
            }
            "table_closed" => {
                if self.seated_by_token || self.opt.table.is_some() {
                    self.finish(0); // our only table is gone
                }
            }
            "hand_end" => {
                let outcome = msg.result.map(|r| r.outcome).unwrap_or_default();
                self.log(false, &format!("hand over: {}", outcome));
            }
            // heartbeat, seated, queued, game_start, event, advice, snapshot, ok, and types
            // this version does not know: nothing to do (each prompt carries the full view).
            _ => {}
        }
    }

    fn on_prompt(&mut self, msg: &Incoming, advise: bool) {
        let (table, seq, view) = match (&msg.table, msg.seq, &msg.view) {
            (Some(t), Some(s), Some(v)) if !msg.legal.is_empty() => (t.clone(), s, v),
            _ => {
                self.log(true, &format!("ignored a {} without a usable view, legal list or seq", msg.kind));
                return;
            }
        };
        if let Some(e) = &msg.error {
            self.log(true, &format!("re-prompted after {} ({}): {}", e.name, e.code, e.message));
        }
        let action = match decide(view, &msg.legal) {
            Some(a) => a,
            None => {
                self.log(true, &format!("ignored a {} whose view has no cards", msg.kind));
                return;
            }
        };
        let described = format!("{} {}", action.kind, action.card.clone().unwrap_or_default());
        if advise {
            let text = format!("I would {}", described.trim_end());
            self.send(&wire::Advise { kind: "advise", table: &table, seq, action, text });
        } else {
            self.send(&wire::Act { kind: "act", table: &table, seq, action });
        }
        self.log(false, &format!("{} seq {} at {}: {}", if advise { "advise" } else { "act" }, seq, table, described));
    }

    fn on_game_end(&mut self, msg: &Incoming) {
        self.games_done += 1;
        let table = msg.table.clone().unwrap_or_default();
        let scores = msg.final_scores.as_ref().map(|f| format!("{:?}", f.scores)).unwrap_or_default();
        self.log(
            true,
            &format!(
                "game {} at {} over ({}), winner {:?}, scores {}",
                self.games_done,
                table,
                msg.termination.clone().unwrap_or_default(),
                msg.winner,
                scores
            ),
        );
        if self.opt.games > 0 && self.games_done >= self.opt.games {
            self.finish(0);
        } else if self.seated_by_token || self.opt.table.is_some() {
            self.send(&wire::TableRequest { kind: "rematch", table: &table });
        } else {
            self.send(&wire::TableRequest { kind: "leave", table: &table });
            self.sit_down();
        }
    }

    fn on_error(&mut self, msg: &Incoming) {
        let name = msg.name.clone().unwrap_or_default();
        // Advice racing the captain's move (or the hand's end) is refused as stale: expected.
        let late_advice = msg.request.as_deref() == Some("advise") && (name == "stale_seq" || name == "forbidden");
        self.log(
            !late_advice,
            &format!(
                "error {} {} (to {}): {}",
                msg.code.unwrap_or(0),
                name,
                msg.request.clone().unwrap_or_default(),
                msg.message.clone().unwrap_or_default()
            ),
        );
        if FATAL_ERRORS.contains(&name.as_str()) {
            self.finish(1);
        } else if name == "hello_first" {
            // This connection lost its session: resume it with the token.
            if let Err(e) = self.open_socket() {
                self.log(true, &format!("cannot reconnect: {}", e));
                self.status = Some(1);
            }
        }
    }
}

fn parse_card(text: &Option<String>) -> Option<cards::Card> {
    text.as_deref().and_then(cards::parse)
}

/// The strategy's move for a prompt's view and legal actions, in wire form.
fn decide(view: &wire::View, legal: &[WireAction]) -> Option<WireAction> {
    let hand = cards::hand_of(view.hand.as_ref()?.iter().map(String::as_str))?;
    let legal: Vec<Action> = legal
        .iter()
        .map(|a| Action { kind: a.kind.clone(), card: parse_card(&a.card), melds: None })
        .collect();
    let situation = Situation {
        hand,
        phase: &view.phase,
        upcard: parse_card(&view.upcard).unwrap_or(0),
        top_discard: view.discard_pile.last().and_then(|c| cards::parse(c)),
        taken_card: parse_card(&view.taken_card),
        knock_limit: view.knock_limit,
        legal: &legal,
    };
    let chosen = situation.choose();
    Some(WireAction {
        kind: chosen.kind,
        card: chosen.card.map(cards::to_str),
        melds: chosen.melds.map(|ms| ms.into_iter().map(|m| m.into_iter().map(cards::to_str).collect()).collect()),
    })
}
