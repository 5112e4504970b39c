//! The arena (protocol.md 19, protocol 1.6): sign in once with an account and its key,
//! then for each game seek, read the `game_ready` that says where to play it, play it
//! exactly as a reserved seat (a `Client` with game_ready's endpoint, token and CURVE key),
//! and read the arena's `game_over` (the result and the rating). The arena session stays
//! open the whole time: a thread of its own owns its socket and keeps its heartbeats going
//! while the game is played; the main thread talks to it through two channels.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::client::STOP;
use crate::wire;

/// `hello.account` and `hello.key` are protocol 1.6.
const ARENA_MINOR: u32 = 6;
/// An arena that says nothing this long after `hello` is unreachable.
const WELCOME_WAIT: Duration = Duration::from_secs(30);
/// How long `busy` is retried after a game (the arena files the game first).
const BUSY_PATIENCE: Duration = Duration::from_secs(10);
const BUSY_RETRY: Duration = Duration::from_millis(250);
/// How often the waiting main thread looks at a signal.
const TICK: Duration = Duration::from_millis(100);

pub struct ArenaOptions {
    pub endpoint: String,
    pub account: String,
    /// The API key, read from `OKGIN_KEY_FILE` (never a command-line argument).
    pub key: String,
    pub variant: String,
    pub name: String,
    pub verbose: bool,
}

/// Where to play one game. The token is a secret: never printed.
pub struct ArenaGame {
    pub game: String,
    pub endpoint: String,
    pub token: String,
    /// The shard's CURVE public key (Z85), None for a plain shard.
    pub server_key: Option<String>,
}

/// The arena's `game_over` of a game.
#[derive(Clone, Default, Deserialize)]
#[serde(default)]
pub struct ArenaOver {
    pub game: String,
    pub result: String,
    pub termination: String,
    /// None: no rating change (unrated or void).
    pub rating: Option<RatingChange>,
}

#[derive(Clone, Default, Deserialize)]
#[serde(default)]
pub struct RatingChange {
    pub before: i64,
    pub after: i64,
    pub deviation: i64,
    pub provisional: bool,
}

#[derive(Serialize)]
struct Hello<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: u32,
    minor: u32,
    role: &'static str,
    name: &'a str,
    account: &'a str,
    key: &'a str,
}

#[derive(Serialize)]
struct Seek<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    variant: &'a str,
}

/// What the bot reads of the arena's messages (every other field is ignored).
#[derive(Default, Deserialize)]
#[serde(default)]
struct FromArena {
    #[serde(rename = "type")]
    kind: String,
    heartbeat_ms: Option<u64>,
    liveness: Option<u64>,
    game: Option<String>,
    endpoint: Option<String>,
    token: Option<String>,
    server_key: Option<String>,
    name: Option<String>,
    message: Option<String>,
    retry_ms: Option<u64>,
    reason: Option<String>,
}

/// The main thread's asks of the session's thread.
enum Ask {
    Seek,
    Close,
}

/// What the session's thread tells the main thread.
enum Event {
    Welcome,
    Ready(ArenaGame),
    Over(ArenaOver),
    /// The session is over: (exit status, the sentence to print).
    Failed(i32, String),
}

/// The key on the first line of `path`, a file its owner alone may read (mode 0600).
/// Err: the sentence to print (exit status 2).
pub fn read_key(path: Option<String>) -> Result<String, String> {
    let path = path.filter(|p| !p.is_empty()).ok_or_else(|| {
        "OKGIN_ARENA needs OKGIN_KEY_FILE (a file holding the account's key, mode 0600)".to_string()
    })?;
    let meta = std::fs::metadata(&path).map_err(|e| format!("cannot read the key file {}: {}", path, e))?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(format!("the key file {} is readable by others (mode {:o}): chmod 600 {}", path, mode & 0o7777, path));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read the key file {}: {}", path, e))?;
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if key.is_empty() {
        return Err(format!("the key file {} is empty", path));
    }
    Ok(key)
}

fn send<T: Serialize>(socket: &zmq::Socket, message: &T) {
    // A full queue: the arena is unreachable, and the wait says so.
    let _ = socket.send(wire::encode(message), zmq::DONTWAIT);
}

/// One arena session (see the module comment). Err values are (exit status, the sentence
/// to print; empty when stopped by a signal).
pub struct ArenaSession {
    asks: mpsc::Sender<Ask>,
    events: mpsc::Receiver<Event>,
    thread: Option<JoinHandle<()>>,
    overs: Vec<ArenaOver>,
    failed: Option<(i32, String)>,
}

impl ArenaSession {
    /// Sign in and wait for the welcome.
    pub fn open(o: ArenaOptions) -> Result<ArenaSession, (i32, String)> {
        let (ask_tx, ask_rx) = mpsc::channel();
        let (event_tx, event_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("arena".into())
            .spawn(move || session_main(o, ask_rx, event_tx))
            .map_err(|e| (2, format!("cannot start the arena session's thread: {}", e)))?;
        let mut s = ArenaSession { asks: ask_tx, events: event_rx, thread: Some(thread), overs: Vec::new(), failed: None };
        match s.wait(|e| matches!(e, Event::Welcome), None)? {
            Some(_) => Ok(s),
            None => Err((1, "the arena session ended before its welcome".to_string())),
        }
    }

    /// Seek one game and wait for its `game_ready`.
    pub fn next_game(&mut self) -> Result<ArenaGame, (i32, String)> {
        let _ = self.asks.send(Ask::Seek);
        match self.wait(|e| matches!(e, Event::Ready(_)), None)? {
            Some(Event::Ready(game)) => Ok(game),
            _ => Err((1, "the arena session ended while seeking".to_string())),
        }
    }

    /// The arena's `game_over` of `game` within `wait`, or None.
    pub fn game_over(&mut self, game: &str, wait: Duration) -> Option<ArenaOver> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(i) = self.overs.iter().position(|o| o.game == game) {
                return Some(self.overs.remove(i));
            }
            match self.wait(|e| matches!(e, Event::Over(_)), Some(deadline)) {
                Ok(Some(Event::Over(over))) => self.overs.push(over),
                _ => return None,
            }
        }
    }

    /// Say bye and stop the session's thread.
    pub fn close(mut self) {
        let _ = self.asks.send(Ask::Close);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// The first event `want` accepts (game_over messages meanwhile are kept); Ok(None) at
    /// the deadline; Err when the session failed or a signal asked to stop.
    fn wait(&mut self, want: impl Fn(&Event) -> bool, deadline: Option<Instant>) -> Result<Option<Event>, (i32, String)> {
        loop {
            if let Some(f) = &self.failed {
                return Err(f.clone());
            }
            if STOP.load(Ordering::SeqCst) {
                return Err((0, String::new()));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
            match self.events.recv_timeout(TICK) {
                Ok(e) if want(&e) => return Ok(Some(e)),
                Ok(Event::Over(over)) => {
                    self.overs.push(over);
                    if self.overs.len() > 4 {
                        self.overs.remove(0);
                    }
                }
                Ok(Event::Failed(status, why)) => self.failed = Some((status, why)),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.failed.get_or_insert((1, "the arena session ended".to_string()));
                }
            }
        }
    }
}

/// The session's thread: the only one that touches its socket.
fn session_main(o: ArenaOptions, asks: mpsc::Receiver<Ask>, events: mpsc::Sender<Event>) {
    let fail = |status: i32, why: String| {
        let _ = events.send(Event::Failed(status, why));
    };
    let ctx = zmq::Context::new();
    let socket = match ctx.socket(zmq::DEALER) {
        Ok(s) => s,
        Err(e) => return fail(2, format!("cannot create a ZeroMQ socket: {}", e)),
    };
    let _ = socket.set_linger(0);
    if let Err(e) = socket.connect(&o.endpoint) {
        return fail(2, format!("cannot connect to the arena {}: {}", o.endpoint, e));
    }
    send(&socket, &Hello {
        kind: "hello",
        protocol: wire::PROTOCOL_MAJOR,
        minor: ARENA_MINOR,
        role: "player",
        name: &o.account,
        account: &o.account,
        key: &o.key,
    });
    let start = Instant::now();
    let mut welcomed = false;
    let mut heartbeat = Duration::from_millis(5000);
    let mut liveness: u32 = 3;
    let mut last_sent = start;
    let mut last_recv = start;
    let mut seeking = false;
    let mut busy_until = start;
    let mut seek_again_at: Option<Instant> = None;
    let seek = |socket: &zmq::Socket| {
        if o.verbose {
            eprintln!("okgin-bot[rust {}] seeking {}", o.name, o.variant);
        }
        send(socket, &Seek { kind: "seek", variant: &o.variant });
    };
    loop {
        let now = Instant::now();
        match asks.try_recv() {
            Ok(Ask::Close) | Err(mpsc::TryRecvError::Disconnected) => break,
            Ok(Ask::Seek) => {
                seeking = true;
                busy_until = now + BUSY_PATIENCE;
                seek(&socket);
                last_sent = now;
            }
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if !welcomed && now - start >= WELCOME_WAIT {
            fail(1, format!(
                "no arena answered at {} within {} s (is it running, and is this its endpoint?)",
                o.endpoint, WELCOME_WAIT.as_secs()
            ));
            break;
        }
        if welcomed && now - last_recv >= heartbeat * liveness {
            fail(1, format!("the arena at {} went silent", o.endpoint));
            break;
        }
        if seek_again_at.is_some_and(|t| now >= t) {
            seek_again_at = None;
            seek(&socket);
            last_sent = now;
        }
        if welcomed && now - last_sent >= heartbeat {
            send(&socket, &wire::Bare { kind: "heartbeat" });
            last_sent = now;
        }
        let wait = if welcomed { (last_sent + heartbeat).saturating_duration_since(now) } else { TICK };
        let wait_ms = wait.min(TICK).as_millis() as i64; // look at the main thread's asks at least this often
        if socket.poll(zmq::POLLIN, wait_ms).unwrap_or(0) <= 0 {
            continue;
        }
        let frame = match socket.recv_bytes(zmq::DONTWAIT) {
            Ok(f) => f,
            Err(_) => continue,
        };
        last_recv = Instant::now();
        let msg: FromArena = match rmp_serde::from_slice(&frame) {
            Ok(m) => m,
            Err(_) => continue,
        };
        match msg.kind.as_str() {
            "welcome" => {
                welcomed = true;
                heartbeat = Duration::from_millis(msg.heartbeat_ms.unwrap_or(5000).max(10));
                liveness = msg.liveness.unwrap_or(3).max(1) as u32;
                if o.verbose {
                    eprintln!("okgin-bot[rust {}] signed in to the arena as {}", o.name, o.account);
                }
                let _ = events.send(Event::Welcome);
            }
            "game_ready" => {
                let server_key = msg.server_key.filter(|k| !k.is_empty());
                if server_key.as_ref().is_some_and(|k| k.len() != 40) {
                    fail(1, "a game_ready whose server_key is not a CURVE public key (40 Z85 characters)".to_string());
                    break;
                }
                match (msg.endpoint, msg.token) {
                    (Some(endpoint), Some(token)) if !endpoint.is_empty() && !token.is_empty() => {
                        let game = msg.game.unwrap_or_default();
                        if o.verbose {
                            let curve = if server_key.is_some() { " (CURVE)" } else { "" };
                            eprintln!("okgin-bot[rust {}] arena game {} at {}{}", o.name, game, endpoint, curve);
                        }
                        seeking = false;
                        seek_again_at = None;
                        let _ = events.send(Event::Ready(ArenaGame { game, endpoint, token, server_key }));
                    }
                    _ => {
                        fail(1, "a game_ready without an endpoint or a token".to_string());
                        break;
                    }
                }
            }
            "game_over" => {
                if let Ok(over) = rmp_serde::from_slice::<ArenaOver>(&frame) {
                    let _ = events.send(Event::Over(over));
                }
            }
            "error" => {
                let name = msg.name.unwrap_or_default();
                if name == "busy" && seeking && Instant::now() < busy_until {
                    seek_again_at = Some(Instant::now() + BUSY_RETRY); // the arena is still filing our last game
                    continue;
                }
                let message = msg.message.unwrap_or_default();
                let retry = msg.retry_ms.map(|ms| format!(" (try again in {} s)", (ms + 999) / 1000)).unwrap_or_default();
                fail(1, format!("the arena refused: {}: {}{}", name, message, retry));
                break;
            }
            "shutdown" => {
                fail(1, format!("the arena is shutting down: {}", msg.reason.unwrap_or_default()));
                break;
            }
            // heartbeat, sought, ok, challenge_offer (not answered: it expires), challenge_closed
            _ => {}
        }
    }
    send(&socket, &wire::Bare { kind: "bye" });
    let _ = socket.set_linger(500); // let the bye go out
}
