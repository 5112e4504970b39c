//! Protocol messages as Rust types (protocol.md sections 5 and 6), encoded with
//! `rmp_serde::to_vec_named` (maps with field names, as the protocol wants) and decoded
//! with serde, which ignores every field not declared here (protocol.md 14).
//!
//! Incoming messages share one struct with every field this bot reads, all optional:
//! the `type` says which are present, and a message of a type this version does not
//! know decodes just as well (and is then ignored).

use serde::{Deserialize, Serialize};

pub const PROTOCOL_MAJOR: u32 = 1;
/// 1.1: `hello.events`; 1.2: `hello_first` after `welcome` means resume.
pub const PROTOCOL_MINOR: u32 = 2;

/// An Action (6.2) in wire form.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WireAction {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub melds: Option<Vec<Vec<String>>>,
}

/// The parts of a View (6.5) the bot plays from.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct View {
    pub phase: String,
    pub hand: Option<Vec<String>>,
    pub upcard: Option<String>,
    pub knock_limit: u32,
    pub discard_pile: Vec<String>,
    pub taken_card: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorInfo {
    pub code: i64,
    pub name: String,
    pub message: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Final {
    pub scores: Vec<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HandResult {
    pub outcome: String,
}

/// Any message from the referee, with the fields this bot reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Incoming {
    #[serde(rename = "type")]
    pub kind: String,
    // welcome
    pub token: Option<String>,
    pub resumed: bool,
    pub heartbeat_ms: Option<u64>,
    pub liveness: Option<u64>,
    // prompt, advise_prompt, game_end, table_closed, ...
    pub table: Option<String>,
    pub seq: Option<u64>,
    pub legal: Vec<WireAction>,
    pub view: Option<View>,
    pub error: Option<ErrorInfo>,
    // error
    pub code: Option<i64>,
    pub name: Option<String>,
    pub message: Option<String>,
    pub request: Option<String>,
    // hand_end, game_end, shutdown
    pub result: Option<HandResult>,
    #[serde(rename = "final")]
    pub final_scores: Option<Final>,
    pub termination: Option<String>,
    pub winner: Option<i64>,
    pub reason: Option<String>,
}

#[derive(Serialize)]
pub struct Hello<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: u32,
    pub minor: u32,
    pub role: &'static str,
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<&'a str>,
    /// false: no per-move `event` messages (every prompt carries the full view).
    pub events: bool,
    /// 1.5: the commitment to this bot's nonce (crate::entropy), with a seat token only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entropy_commit: Option<&'a str>,
}

/// 1.5: `entropy_reveal`, the answer to `entropy_request`.
#[derive(Serialize)]
pub struct EntropyReveal<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub table: &'a str,
    pub nonce: &'a str,
}

/// `queue` or `join`: where to sit when not seated by a token.
#[derive(Serialize)]
pub struct SitDown<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<&'a str>,
    pub variant: &'a str,
}

#[derive(Serialize)]
pub struct Act<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub table: &'a str,
    pub seq: u64,
    pub action: WireAction,
}

#[derive(Serialize)]
pub struct Advise<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub table: &'a str,
    pub seq: u64,
    pub action: WireAction,
    pub text: String,
}

/// `rematch`, `leave`: a type and a table.
#[derive(Serialize)]
pub struct TableRequest<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub table: &'a str,
}

/// `heartbeat`, `bye`: a type alone.
#[derive(Serialize)]
pub struct Bare {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(message).expect("protocol messages always encode")
}

pub fn decode(frame: &[u8]) -> Result<Incoming, rmp_serde::decode::Error> {
    rmp_serde::from_slice(frame)
}
