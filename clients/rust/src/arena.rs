//! The arena (protocol.md 19, protocol 1.6): sign in with an account and its key, seek one
//! game, and read the `game_ready` that says where to play it. The game itself is then
//! played exactly as a reserved seat: a `Client` with game_ready's endpoint and token.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::client::STOP;
use crate::wire;

/// `hello.account` and `hello.key` are protocol 1.6.
const ARENA_MINOR: u32 = 6;
/// An arena that says nothing this long after `hello` is unreachable.
const WELCOME_WAIT: Duration = Duration::from_secs(30);

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

/// Sign in, seek, wait for `game_ready` (heartbeats meanwhile), say `bye`.
/// Err: (exit status, the sentence to print; empty when stopped by a signal).
pub fn find_game(o: &ArenaOptions) -> Result<ArenaGame, (i32, String)> {
    let ctx = zmq::Context::new();
    let socket = ctx.socket(zmq::DEALER).map_err(|e| (2, format!("cannot create a ZeroMQ socket: {}", e)))?;
    let _ = socket.set_linger(0);
    socket.connect(&o.endpoint).map_err(|e| (2, format!("cannot connect to the arena {}: {}", o.endpoint, e)))?;
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
    let result = loop {
        if STOP.load(Ordering::SeqCst) {
            send(&socket, &wire::Bare { kind: "bye" });
            break Err((0, String::new()));
        }
        let now = Instant::now();
        if !welcomed && now - start >= WELCOME_WAIT {
            break Err((1, format!(
                "no arena answered at {} within {} s (is it running, and is this its endpoint?)",
                o.endpoint, WELCOME_WAIT.as_secs()
            )));
        }
        if welcomed && now - last_recv >= heartbeat * liveness {
            break Err((1, format!("the arena at {} went silent", o.endpoint)));
        }
        if welcomed && now - last_sent >= heartbeat {
            send(&socket, &wire::Bare { kind: "heartbeat" });
            last_sent = now;
        }
        let wait = if welcomed { (last_sent + heartbeat).saturating_duration_since(now) } else { Duration::from_millis(200) };
        let wait_ms = wait.as_millis().min(200) as i64;
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
                    eprintln!("okgin-bot[rust {}] signed in to the arena as {}; seeking {}", o.name, o.account, o.variant);
                }
                send(&socket, &Seek { kind: "seek", variant: &o.variant });
                last_sent = Instant::now();
            }
            "game_ready" => {
                if msg.server_key.is_some() {
                    break Err((1, "the arena's shard requires CURVE, which this example bot does not speak".to_string()));
                }
                match (msg.endpoint, msg.token) {
                    (Some(endpoint), Some(token)) if !endpoint.is_empty() && !token.is_empty() => {
                        let game = msg.game.unwrap_or_default();
                        if o.verbose {
                            eprintln!("okgin-bot[rust {}] arena game {} at {}", o.name, game, endpoint);
                        }
                        // Leave the arena: the game is at the shard now (protocol.md 19: it is unaffected).
                        send(&socket, &wire::Bare { kind: "bye" });
                        break Ok(ArenaGame { game, endpoint, token });
                    }
                    _ => break Err((1, "a game_ready without an endpoint or a token".to_string())),
                }
            }
            "error" => {
                let name = msg.name.unwrap_or_default();
                let message = msg.message.unwrap_or_default();
                let retry = msg.retry_ms.map(|ms| format!(" (try again in {} s)", (ms + 999) / 1000)).unwrap_or_default();
                break Err((1, format!("the arena refused: {}: {}{}", name, message, retry)));
            }
            // heartbeat, sought, challenge_offer (not answered: it expires), game_over of an earlier game
            _ => {}
        }
    };
    let _ = socket.set_linger(500); // let the bye go out
    result
}
