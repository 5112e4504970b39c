// The arena (protocol.md 19, protocol 1.6): sign in once with an account and its key, then
// for each game seek, read the game_ready that says where to play it, play it exactly as a
// reserved seat (a Client with game_ready's endpoint, token and CURVE key), and read the
// arena's game_over (the result and the rating). The arena session stays open the whole
// time: its own async loop keeps its heartbeats going while the game is played.

import { statSync, readFileSync } from "node:fs";
import { Dealer } from "zeromq";
import { decode, encode } from "@msgpack/msgpack";

const ARENA_MINOR = 6; // hello.account and hello.key are protocol 1.6
const WELCOME_WAIT_MS = 30000; // an arena that says nothing this long after hello is unreachable
const BUSY_PATIENCE_MS = 10000; // how long `busy` is retried after a game (the arena files it first)
const BUSY_RETRY_MS = 250;
const OVERS = 4; // game_over messages kept until asked for (one game at a time: a few is plenty)

/** A one-line reason the bot cannot go on (the exit status goes with it). */
export class ArenaError extends Error {
  constructor(message, status = 1) {
    super(message);
    this.status = status;
  }
}

/** The key on the first line of `path`, a file its owner alone may read (mode 0600). */
export function readKey(path) {
  if (!path) throw new ArenaError("OKGIN_ARENA needs OKGIN_KEY_FILE (a file holding the account's key, mode 0600)", 2);
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new ArenaError(`cannot read the key file ${path}: ${e.code}`, 2);
  }
  if (st.mode & 0o077) {
    throw new ArenaError(`the key file ${path} is readable by others (mode ${(st.mode & 0o7777).toString(8)}): chmod 600 ${path}`, 2);
  }
  const key = readFileSync(path, "utf8").split(/\r?\n/)[0].trim();
  if (!key) throw new ArenaError(`the key file ${path} is empty`, 2);
  return key;
}

/**
 * One arena session: `open()` signs in, `nextGame()` seeks and resolves to where to play,
 * `gameOver(game)` to the arena's result, `close()` says bye. One async loop owns the
 * socket (zeromq.js allows one send in flight): the other methods leave their sends in
 * `outbox` and wait for the loop to change the state.
 * @param {object} o endpoint, account, key, variant, clock (optional), log(text), stopped()
 */
export class ArenaSession {
  constructor(o) {
    this.o = o;
    this.socket = new Dealer({ linger: 0, sendTimeout: 0 });
    this.outbox = [];
    this.welcomed = false;
    this.failure = null; // an ArenaError once the session is over
    this.closing = false;
    this.seeking = false;
    this.busyUntil = 0;
    this.seekAgainAt = 0;
    this.ready = null;
    this.overs = [];
    this.wakers = [];
    this.heartbeatMs = 5000;
    this.liveness = 3;
    this.loop = null;
  }

  /** Sign in and wait for the welcome; throws ArenaError saying why not. */
  async open() {
    this.socket.connect(this.o.endpoint);
    const { account, key } = this.o;
    this.outbox.push({ type: "hello", protocol: 1, minor: ARENA_MINOR, role: "player", name: account, account, key });
    this.loop = this.run().catch((e) => this.fail(e instanceof ArenaError ? e : new ArenaError(String(e))));
    await this.waitFor(() => this.welcomed);
  }

  /** Seek one game; resolves to { game, endpoint, token, serverKey } from its game_ready. */
  async nextGame() {
    this.ready = null;
    this.seeking = true;
    this.busyUntil = Date.now() + BUSY_PATIENCE_MS;
    this.outbox.push(this.seekMessage());
    this.o.log(`seeking ${this.o.variant}`);
    await this.waitFor(() => this.ready !== null);
    const ready = this.ready;
    this.ready = null;
    return ready;
  }

  /** The arena's game_over of `game` within `waitMs`, or null. */
  async gameOver(game, waitMs) {
    const find = () => this.overs.find((m) => m.game === game);
    try {
      await this.waitFor(() => find() !== undefined, Date.now() + waitMs);
    } catch (e) {
      if (!(e instanceof ArenaError) || e.status !== -1) throw e;
    }
    return find() ?? null;
  }

  /** Say bye and stop the loop. */
  async close() {
    this.closing = true;
    this.wake();
    await this.loop;
  }

  seekMessage() {
    const seek = { type: "seek", variant: this.o.variant };
    if (this.o.clock) seek.clock = this.o.clock;
    return seek;
  }

  fail(error) {
    this.failure ??= error;
    this.wake();
  }

  wake() {
    const wakers = this.wakers;
    this.wakers = [];
    for (const w of wakers) w();
  }

  /** Until `done()`; throws the session's failure, a stop (status 0), or the deadline (-1). */
  async waitFor(done, deadline = 0) {
    for (;;) {
      if (done()) return;
      if (this.failure) throw this.failure;
      if (this.o.stopped()) throw new ArenaError("stopped by a signal", 0);
      if (deadline && Date.now() >= deadline) throw new ArenaError("deadline", -1);
      await new Promise((resolve) => {
        this.wakers.push(resolve);
        setTimeout(resolve, 100); // look at a signal at least this often
      });
    }
  }

  async send(msg) {
    try {
      await this.socket.send(encode(msg));
    } catch (e) {
      if (e.code !== "EAGAIN") throw e; // a full queue: the arena is unreachable, the wait says so
    }
  }

  async run() {
    const start = Date.now();
    let lastSent = start;
    let lastRecv = start;
    try {
      for (;;) {
        if (this.closing || this.failure) break;
        const now = Date.now();
        if (!this.welcomed && now - start >= WELCOME_WAIT_MS) {
          throw new ArenaError(`no arena answered at ${this.o.endpoint} within ${WELCOME_WAIT_MS / 1000} s (is it running, and is this its endpoint?)`);
        }
        if (this.welcomed && now - lastRecv >= this.heartbeatMs * this.liveness) throw new ArenaError(`the arena at ${this.o.endpoint} went silent`);
        if (this.seekAgainAt && now >= this.seekAgainAt) {
          this.seekAgainAt = 0;
          this.outbox.push(this.seekMessage());
        }
        while (this.outbox.length) {
          await this.send(this.outbox.shift());
          lastSent = Date.now();
        }
        if (this.welcomed && now - lastSent >= this.heartbeatMs) {
          await this.send({ type: "heartbeat" });
          lastSent = now;
        }
        this.socket.receiveTimeout = Math.min(100, this.welcomed ? Math.max(0, lastSent + this.heartbeatMs - now) : 100);
        let frame = null;
        try {
          [frame] = await this.socket.receive();
        } catch (e) {
          if (e.code !== "EAGAIN") throw e;
        }
        if (!frame) continue;
        lastRecv = Date.now();
        let msg;
        try {
          msg = decode(frame);
        } catch {
          continue;
        }
        if (msg !== null && typeof msg === "object") this.onMessage(msg);
        this.wake();
      }
    } catch (e) {
      this.fail(e instanceof ArenaError ? e : new ArenaError(String(e)));
    }
    try {
      await this.send({ type: "bye" });
    } finally {
      this.socket.linger = 500; // let the bye go out
      this.socket.close();
      this.wake();
    }
  }

  onMessage(msg) {
    if (msg.type === "welcome") {
      this.welcomed = true;
      this.heartbeatMs = Math.max(10, msg.heartbeat_ms ?? this.heartbeatMs);
      this.liveness = Math.max(1, msg.liveness ?? this.liveness);
      this.o.log(`signed in to the arena as ${this.o.account}`);
    } else if (msg.type === "game_ready") {
      if (!msg.endpoint || !msg.token) throw new ArenaError("a game_ready without an endpoint or a token");
      const serverKey = msg.server_key ?? null;
      if (serverKey !== null && (typeof serverKey !== "string" || serverKey.length !== 40)) {
        throw new ArenaError("a game_ready whose server_key is not a CURVE public key (40 Z85 characters)");
      }
      this.o.log(`arena game ${msg.game} at ${msg.endpoint}${serverKey ? " (CURVE)" : ""}`);
      this.seeking = false;
      this.seekAgainAt = 0;
      this.ready = { game: msg.game, endpoint: msg.endpoint, token: msg.token, serverKey };
    } else if (msg.type === "game_over") {
      this.overs.push(msg);
      if (this.overs.length > OVERS) this.overs.shift();
    } else if (msg.type === "error") {
      if (msg.name === "busy" && this.seeking && Date.now() < this.busyUntil) {
        this.seekAgainAt = Date.now() + BUSY_RETRY_MS; // the arena is still filing our last game
        return;
      }
      const retry = Number.isInteger(msg.retry_ms) ? ` (try again in ${Math.ceil(msg.retry_ms / 1000)} s)` : "";
      throw new ArenaError(`the arena refused: ${msg.name}: ${msg.message}${retry}`);
    } else if (msg.type === "shutdown") {
      throw new ArenaError(`the arena is shutting down: ${msg.reason ?? ""}`);
    }
    // heartbeat, sought, ok, challenge_offer (not answered: it expires), challenge_closed: nothing to do
  }
}
