// The README's quick start works on this checkout: `npm ci && npm start` and `npm test` are the
// commands it gives and package.json's scripts do what it says, and the commands it shows between
// `<!-- quick-start: begin -->` and `<!-- quick-start: end -->` print what it shows, against the
// server `npm start` runs. That server runs with its embedded defaults except where it listens (a
// free port, a temporary data directory, no HTTP listener): other tests on this machine may hold
// 9092 and 9644.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { killProcess, runProcess, startServerProcess, tempDataDir } from '../broker/process-helpers.js';
import { markedSections, normalize } from './pages.js';

const BIN = resolve('bin/logline.js');

test('the quick start\'s two commands are npm start and npm test, and package.json runs them as the README says', () => {
  const readme = readFileSync('README.md', 'utf8');
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  assert.match(quickStart, /```sh\nnpm ci && npm start {2,}# a single-node broker on localhost:9092/);
  assert.match(quickStart, /```sh\nnpm test {2,}# compiles with tsc and runs every test/);
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
  assert.equal(scripts.start, 'node bin/logline.js server', 'npm start: the server with no options, its embedded defaults');
  assert.match(scripts.test!, /tsc -p tsconfig\.json && node scripts\/run-tests\.mjs$/);
});

test('the quick start\'s commands print what the README shows, against npm start\'s server', { timeout: 120_000 }, async () => {
  const [section, ...more] = markedSections('quick-start', [{ path: 'README.md', text: readFileSync('README.md', 'utf8') }]);
  assert.ok(section !== undefined && more.length === 0, 'README.md has one quick-start section');
  assert.ok(section.steps.length >= 3);
  const server = await startServerProcess(tempDataDir());
  try {
    for (const step of section.steps) {
      const command = step.command.replaceAll('npx logline', `node ${BIN}`);
      const r = await runProcess('bash', ['-c', `set -e -o pipefail\n${command}`], null, 30_000, { LOGLINE_BOOTSTRAP_SERVERS: `127.0.0.1:${server.port}` });
      assert.equal(normalize(r.stdout + r.stderr), normalize(step.expected), `$ ${step.command} (exit ${r.code})`);
    }
  } finally {
    await killProcess(server.child);
  }
});
