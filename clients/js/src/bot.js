#!/usr/bin/env node
// okgin-bot (JavaScript): entry point. The protocol client is being written against
// protocol.md; for now: --eval (least deadwood of each hand read from stdin).
import { readFileSync } from "node:fs";
import { parseCard, rowsOf } from "./cards.js";
import { bestArrangement, deadwood } from "./melds.js";

if (process.argv[2] === "--eval") {
  const out = [];
  for (const line of readFileSync(0, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const rows = rowsOf(line.trim().split(/\s+/).map(parseCard));
    out.push(`${deadwood(rows)} ${bestArrangement(rows).deadwood}`);
  }
  if (out.length) console.log(out.join("\n"));
} else {
  console.error("usage: okgin-bot --eval");
  process.exitCode = 2;
}
