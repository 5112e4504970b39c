#!/usr/bin/env node
// okgin-bot (JavaScript): an example bot for the okgin referee. It plays Oklahoma Gin
// and Gin in the Box in every role with the "simple player" strategy; see ../README.md.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ArenaError, ArenaSession, readKey } from "./arena.js";
import { parseCard, rowsOf } from "./cards.js";
import { Client } from "./client.js";
import { bestArrangement, deadwood } from "./melds.js";

const USAGE = `usage: okgin-bot --connect ENDPOINT [--token TOKEN | --table NAME | --variant oklahoma|box]
                 [--name NAME] [--games N] [--give-up-ms MS] [--verbose]
       okgin-bot --eval

  --connect ENDPOINT  the referee, e.g. tcp://127.0.0.1:7117 (or $OKGIN_ENDPOINT)
  --token TOKEN       a reserved seat's token from the organiser (or $OKGIN_TOKEN)
  --table NAME        join (or create) this named table
  --variant V         otherwise: quick-match queue of this variant (default oklahoma)
  --name NAME         display name (default js-bot)
  --games N           games to play, then leave (default 1; 0 = until the referee stops)
  --give-up-ms MS     stop reconnecting to a silent referee after this long (default 60000)
  --verbose           log every move to stderr
  --eval              print the least deadwood of each hand read from stdin

At an arena (protocol 1.6): set OKGIN_ARENA (its endpoint), OKGIN_ACCOUNT and
OKGIN_KEY_FILE (the account's key, mode 0600). The bot then seeks --games games of
--variant and plays each where the arena says.`;

function evalHands() {
  const out = [];
  for (const line of readFileSync(0, "utf8").split("\n")) {
    const rows = rowsOf(line.trim() ? line.trim().split(/\s+/).map(parseCard) : []);
    if (line.trim()) out.push(`${deadwood(rows)} ${bestArrangement(rows).deadwood}`);
  }
  if (out.length) process.stdout.write(out.join("\n") + "\n");
  return 0;
}

function usageError(what) {
  process.stderr.write(`okgin-bot: ${what}\n\n${USAGE}\n`);
  return 2;
}

async function main(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        connect: { type: "string", default: process.env.OKGIN_ENDPOINT },
        token: { type: "string", default: process.env.OKGIN_TOKEN || undefined },
        table: { type: "string" },
        variant: { type: "string", default: "oklahoma" },
        name: { type: "string", default: "js-bot" },
        games: { type: "string", default: "1" },
        "give-up-ms": { type: "string", default: "60000" },
        verbose: { type: "boolean", default: false },
        eval: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (e) {
    return usageError(e.message);
  }
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (values.eval) return evalHands();
  const games = Number(values.games);
  const giveUpMs = Number(values["give-up-ms"]);
  const arena = process.env.OKGIN_ARENA;
  if (!values.connect && !arena) return usageError("--connect ENDPOINT is required");
  if (!["oklahoma", "box"].includes(values.variant)) return usageError("--variant must be oklahoma or box");
  if (!Number.isInteger(games) || games < 0 || !(giveUpMs > 0)) return usageError("--games must be >= 0 and --give-up-ms > 0");
  if (values.name.length < 1 || values.name.length > 40) return usageError("--name must have 1 to 40 characters");
  if (arena) return playAtArena(values, arena, games, giveUpMs);
  const client = new Client({
    endpoint: values.connect,
    token: values.token,
    table: values.table,
    variant: values.variant,
    name: values.name,
    games,
    giveUpMs,
    verbose: values.verbose,
  });
  const stop = () => {
    client.stopRequested = true;
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return client.run();
}

/** The arena's word on a game, one line on stderr (as the game_end line is). */
function overLine(name, over) {
  const r = over.rating;
  const rating = r ? `rating ${r.before} -> ${r.after} (deviation ${r.deviation}${r.provisional ? ", provisional" : ""})` : "not rated";
  return `okgin-bot[js ${name}] arena game ${over.game}: ${over.result} (${over.termination}), ${rating}\n`;
}

// OKGIN_ARENA set: sign in once; for each game seek, play the game the arena names at its
// shard exactly as a reserved seat (the token replaces --token, the shard --connect, its
// CURVE key when it has one), then read the arena's game_over.
async function playAtArena(values, arena, games, giveUpMs) {
  const account = process.env.OKGIN_ACCOUNT;
  if (!account || account.length > 40) return usageError("OKGIN_ARENA needs OKGIN_ACCOUNT (the account's name, 1 to 40 characters)");
  let stopRequested = false;
  let client = null;
  const stop = () => {
    stopRequested = true;
    if (client) client.stopRequested = true;
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  let session = null;
  try {
    const key = readKey(process.env.OKGIN_KEY_FILE);
    const log = (text) => values.verbose && process.stderr.write(`okgin-bot[js ${values.name}] ${text}\n`);
    session = new ArenaSession({ endpoint: arena, account, key, variant: values.variant, log, stopped: () => stopRequested });
    await session.open();
    for (let played = 0; games === 0 || played < games; played++) {
      const game = await session.nextGame();
      client = new Client({
        endpoint: game.endpoint, token: game.token, serverKey: game.serverKey, variant: values.variant, name: values.name,
        games: 1, giveUpMs, verbose: values.verbose,
      });
      if (stopRequested) client.stopRequested = true;
      const status = await client.run();
      client = null;
      if (status !== 0 || stopRequested) return status;
      const over = await session.gameOver(game.game, 30000);
      process.stderr.write(over ? overLine(values.name, over) : `okgin-bot[js ${values.name}] arena game ${game.game}: no game_over from the arena\n`);
    }
    return 0;
  } catch (e) {
    if (!(e instanceof ArenaError)) throw e;
    if (e.status !== 0) process.stderr.write(`okgin-bot: ${e.message}\n`);
    return e.status;
  } finally {
    await session?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
