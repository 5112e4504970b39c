#!/usr/bin/env node
// okgin-bot (JavaScript): an example bot for the okgin referee. It plays Oklahoma Gin
// and Gin in the Box in every role with the "simple player" strategy; see ../README.md.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
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
  --eval              print the least deadwood of each hand read from stdin`;

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
  if (!values.connect) return usageError("--connect ENDPOINT is required");
  if (!["oklahoma", "box"].includes(values.variant)) return usageError("--variant must be oklahoma or box");
  if (!Number.isInteger(games) || games < 0 || !(giveUpMs > 0)) return usageError("--games must be >= 0 and --give-up-ms > 0");
  if (values.name.length < 1 || values.name.length > 40) return usageError("--name must have 1 to 40 characters");
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

process.exitCode = await main(process.argv.slice(2));
