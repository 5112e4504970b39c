// The protocol client: handshake, sitting down, answering prompts, heartbeats, and
// reconnection with the session token (protocol.md sections 4, 5 and 10).
//
// One async loop owns the socket: it waits for a frame at most until the next heartbeat
// is due or the referee's silence reaches `liveness` beats, so sends never overlap
// (zeromq.js allows one send in flight per socket) and no timers are needed.

import { createHash, randomBytes } from "node:crypto";
import { Dealer, curveKeyPair } from "zeromq";
import { decode, encode } from "@msgpack/msgpack";
import { choose } from "./strategy.js";

export const PROTOCOL_MAJOR = 1;
export const PROTOCOL_MINOR = 2; // 1.1: hello.events; 1.2: hello_first after welcome = resume

/** Errors after which the session cannot exist: no point in trying again. */
// 1.4: session_taken = another connection resumed our session with the token: stop, never
// resume (the two would take the seat from each other for ever); bad_identity = do not set a routing id.
const FATAL_ERRORS = new Set(["version_mismatch", "bad_token", "auth_failed", "session_taken", "bad_identity"]);

export class Client {
  /**
   * @param {object} options endpoint, name, token, table, variant, games (0 = no limit),
   *   giveUpMs, verbose, serverKey (the referee's CURVE public key, Z85: an arena's
   *   game_ready.server_key; absent for plain TCP)
   */
  constructor(options) {
    this.options = options;
    this.token = options.token ?? null;
    this.seatedByToken = Boolean(options.token);
    this.heartbeatMs = 5000; // until `welcome` says otherwise
    this.liveness = 3;
    this.gamesDone = 0;
    this.status = null; // exit status once finished
    this.socket = null;
    this.lastSent = 0;
    this.lastRecv = 0;
    this.lostSince = null;
    this.stopRequested = false;
    // 1.5 (protocol.md 5.27): a random nonce for a tournament's deals, committed in hello
    // (SHA-256 of "okgin-entropy-nonce-v1", a zero byte, the 32 bytes), revealed when asked.
    this.nonce = randomBytes(32);
    this.entropyCommit = createHash("sha256").update(Buffer.from("okgin-entropy-nonce-v1\0", "latin1")).update(this.nonce).digest("hex");
  }

  log(always, text) {
    if (always || this.options.verbose) process.stderr.write(`okgin-bot[js ${this.options.name}] ${text}\n`);
  }

  async send(message) {
    this.lastSent = Date.now();
    try {
      await this.socket.send(encode(message));
    } catch (e) {
      // A full queue means the referee is unreachable: drop it, the silence check reconnects.
      if (e.code !== "EAGAIN") throw e;
    }
  }

  /**
   * CURVE (protocol.md 13) when the referee requires it: its public key, and our own key
   * pair, made once per client (the referee knows the seat by its token, not by our key).
   */
  curveOptions() {
    const serverKey = this.options.serverKey;
    if (!serverKey) return {};
    if (serverKey.length !== 40) throw new Error("the referee's CURVE key must have 40 Z85 characters");
    this.curvePair ??= curveKeyPair();
    return { curveServerKey: serverKey, curvePublicKey: this.curvePair.publicKey, curveSecretKey: this.curvePair.secretKey };
  }

  /** A new DEALER (a new routing id) and a hello, with the token when we have one. */
  async openSocket() {
    this.socket?.close();
    this.socket = new Dealer({ linger: 0, sendTimeout: 0, ...this.curveOptions() });
    this.socket.connect(this.options.endpoint);
    // events: false: every prompt carries the full view, per-move events would only be dropped.
    const hello = { type: "hello", protocol: PROTOCOL_MAJOR, minor: PROTOCOL_MINOR, role: "player", name: this.options.name, events: false };
    if (this.token) hello.token = this.token;
    if (this.seatedByToken) hello.entropy_commit = this.entropyCommit;
    await this.send(hello);
    this.lastRecv = Date.now(); // the silence timer starts with the hello
  }

  /** Leave cleanly: `bye`, flushed for up to a second, then stop. */
  async finish(status) {
    await this.send({ type: "bye" });
    this.socket.linger = 1000;
    this.status = status;
  }

  async sitDown() {
    const { table, variant } = this.options;
    await this.send(table ? { type: "join", table, variant } : { type: "queue", variant });
  }

  async run() {
    await this.openSocket();
    while (this.status === null) {
      if (this.stopRequested) {
        this.log(true, "stopped by a signal");
        await this.finish(0);
        break;
      }
      const silentLimit = this.heartbeatMs * this.liveness;
      const now = Date.now();
      const wait = Math.max(0, Math.min(this.lastSent + this.heartbeatMs, this.lastRecv + silentLimit) - now);
      this.socket.receiveTimeout = wait;
      let frame = null;
      try {
        [frame] = await this.socket.receive();
      } catch (e) {
        if (e.code !== "EAGAIN") throw e;
      }
      if (frame) {
        this.lastRecv = Date.now();
        this.lostSince = null;
        await this.handleFrame(frame);
        if (this.status !== null) break;
      }
      const later = Date.now();
      if (later - this.lastSent >= this.heartbeatMs) await this.send({ type: "heartbeat" });
      if (later - this.lastRecv >= silentLimit) {
        this.lostSince ??= later;
        if (later - this.lostSince >= this.options.giveUpMs) {
          this.log(true, `referee silent for ${later - this.lostSince} ms: giving up`);
          this.status = 1;
          break;
        }
        this.log(true, `referee silent for ${silentLimit} ms: reconnecting with the session token`);
        await this.openSocket();
      }
    }
    this.socket.close();
    return this.status;
  }

  async handleFrame(frame) {
    let msg;
    try {
      msg = decode(frame);
    } catch {
      this.log(true, `ignored a frame that is not msgpack (${frame.length} bytes)`);
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg) || typeof msg.type !== "string") return;
    switch (msg.type) {
      case "welcome":
        this.token = msg.token;
        this.heartbeatMs = Math.max(10, msg.heartbeat_ms ?? this.heartbeatMs);
        this.liveness = Math.max(1, msg.liveness ?? this.liveness);
        this.log(false, `welcome (${msg.resumed ? "resumed" : "new session"}), heartbeat ${this.heartbeatMs} ms`);
        if (!msg.resumed && !this.seatedByToken) await this.sitDown();
        break;
      case "entropy_request":
        this.log(true, `my nonce ${this.nonce.toString("hex")} (commitment ${this.entropyCommit}) goes into the deals; keep it: okgin tournament verify DB --nonce NAME=${this.nonce.toString("hex")}`);
        await this.send({ type: "entropy_reveal", table: msg.table, nonce: this.nonce.toString("hex") });
        break;
      case "prompt":
      case "advise_prompt":
        await this.onPrompt(msg, msg.type === "advise_prompt");
        break;
      case "game_end":
        await this.onGameEnd(msg);
        break;
      case "error":
        await this.onError(msg);
        break;
      case "shutdown":
        this.log(true, `referee shutting down: ${msg.reason}`);
        this.status = 0;
        break;
      case "table_closed":
        if (this.seatedByToken || this.options.table) await this.finish(0); // our only table is gone
        break;
      case "hand_end":
        this.log(false, `hand over: ${msg.result?.outcome}`);
        break;
      default:
      // heartbeat, seated, queued, game_start, event, advice, snapshot, ok, and types
      // this version does not know: nothing to do (each prompt carries the full view).
    }
  }

  async onPrompt(msg, advise) {
    const { table, seq, view, legal } = msg;
    if (!view?.hand || !Array.isArray(legal) || legal.length === 0 || !Number.isInteger(seq)) {
      this.log(true, `ignored a ${msg.type} without a usable view, legal list or seq`);
      return;
    }
    if (msg.error) this.log(true, `re-prompted after ${msg.error.name}: ${msg.error.message}`);
    const action = choose(view, legal);
    if (advise) {
      const text = `I would ${action.kind}${action.card ? " " + action.card : ""}`;
      await this.send({ type: "advise", table, seq, action, text });
    } else {
      await this.send({ type: "act", table, seq, action });
    }
    this.log(false, `${advise ? "advise" : "act"} seq ${seq} at ${table}: ${action.kind} ${action.card ?? ""}`);
  }

  async onGameEnd(msg) {
    this.gamesDone++;
    const scores = msg.final?.scores?.join(" ");
    this.log(true, `game ${this.gamesDone} at ${msg.table} over (${msg.termination}), winner ${msg.winner}, scores ${scores}`);
    const { games, table } = this.options;
    if (games > 0 && this.gamesDone >= games) {
      await this.finish(0);
    } else if (this.seatedByToken || table) {
      await this.send({ type: "rematch", table: msg.table });
    } else {
      await this.send({ type: "leave", table: msg.table });
      await this.sitDown();
    }
  }

  async onError(msg) {
    // Advice racing the captain's move (or the hand's end) is refused as stale: expected.
    const lateAdvice = msg.request === "advise" && (msg.name === "stale_seq" || msg.name === "forbidden");
    this.log(!lateAdvice, `error ${msg.code} ${msg.name} (to ${msg.request}): ${msg.message}`);
    if (FATAL_ERRORS.has(msg.name)) {
      await this.finish(1);
    } else if (msg.name === "hello_first") {
      await this.openSocket(); // this connection lost its session: resume it with the token
    }
  }
}
