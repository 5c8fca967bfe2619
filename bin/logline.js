#!/usr/bin/env node
// The CLI entry point: everything lives in the compiled cli room.
import { main } from '../dist/src/cli/index.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
