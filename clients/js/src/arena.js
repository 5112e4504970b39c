// The arena (protocol.md 19, protocol 1.6): sign in with an account and its key, seek one
// game, and read the game_ready that says where to play it. The game itself is then played
// exactly as a reserved seat: a Client with game_ready's endpoint and token.

import { statSync, readFileSync } from "node:fs";
import { Dealer } from "zeromq";
import { decode, encode } from "@msgpack/msgpack";

const ARENA_MINOR = 6; // hello.account and hello.key are protocol 1.6
const WELCOME_WAIT_MS = 30000; // an arena that says nothing this long after hello is unreachable

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
 * Sign in, seek one game of `variant`, wait for its game_ready (heartbeats meanwhile), say
 * bye. Resolves to { game, endpoint, token }; throws ArenaError saying why not.
 * @param {object} o endpoint, account, key, variant, clock (optional), log(text), stopped()
 */
export async function findGame(o) {
  const socket = new Dealer({ linger: 0, sendTimeout: 0 });
  socket.connect(o.endpoint);
  const send = async (msg) => {
    try {
      await socket.send(encode(msg));
    } catch (e) {
      if (e.code !== "EAGAIN") throw e; // a full queue: the arena is unreachable, the wait says so
    }
  };
  let welcomed = false;
  let heartbeatMs = 5000;
  let liveness = 3;
  const start = Date.now();
  let lastSent = start;
  let lastRecv = start;
  try {
    await send({ type: "hello", protocol: 1, minor: ARENA_MINOR, role: "player", name: o.account, account: o.account, key: o.key });
    for (;;) {
      if (o.stopped()) throw new ArenaError("stopped by a signal", 0);
      const now = Date.now();
      if (!welcomed && now - start >= WELCOME_WAIT_MS) {
        throw new ArenaError(`no arena answered at ${o.endpoint} within ${WELCOME_WAIT_MS / 1000} s (is it running, and is this its endpoint?)`);
      }
      if (welcomed && now - lastRecv >= heartbeatMs * liveness) throw new ArenaError(`the arena at ${o.endpoint} went silent`);
      if (welcomed && now - lastSent >= heartbeatMs) {
        await send({ type: "heartbeat" });
        lastSent = now;
      }
      socket.receiveTimeout = Math.min(200, welcomed ? Math.max(0, lastSent + heartbeatMs - now) : 200);
      let frame = null;
      try {
        [frame] = await socket.receive();
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
      if (msg === null || typeof msg !== "object") continue;
      if (msg.type === "welcome") {
        welcomed = true;
        heartbeatMs = Math.max(10, msg.heartbeat_ms ?? heartbeatMs);
        liveness = Math.max(1, msg.liveness ?? liveness);
        o.log(`signed in to the arena as ${o.account}; seeking ${o.variant}`);
        const seek = { type: "seek", variant: o.variant };
        if (o.clock) seek.clock = o.clock;
        await send(seek);
        lastSent = Date.now();
      } else if (msg.type === "game_ready") {
        if (msg.server_key) throw new ArenaError("the arena's shard requires CURVE, which this example bot does not speak");
        if (!msg.endpoint || !msg.token) throw new ArenaError("a game_ready without an endpoint or a token");
        o.log(`arena game ${msg.game} at ${msg.endpoint}`);
        // Leave the arena: the game is at the shard now (protocol.md 19: it is unaffected).
        await send({ type: "bye" });
        socket.linger = 500;
        return { game: msg.game, endpoint: msg.endpoint, token: msg.token };
      } else if (msg.type === "error") {
        const retry = Number.isInteger(msg.retry_ms) ? ` (try again in ${Math.ceil(msg.retry_ms / 1000)} s)` : "";
        throw new ArenaError(`the arena refused: ${msg.name}: ${msg.message}${retry}`);
      }
      // heartbeat, sought, challenge_offer (not answered: it expires), game_over of an earlier game: nothing to do
    }
  } finally {
    socket.close();
  }
}
