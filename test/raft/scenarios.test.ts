// Replays every scenario file in test/raft/scenarios/ (commands with the output they gave, see
// src/raft/sim/scenario.ts and the raft README) against the core. LOGLINE_REWRITE_SCENARIOS=1
// writes what the commands give now under them instead, for a change of behaviour made on purpose
// (read the diff before committing it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkScenario, parseScenario, rewriteScenario, runScenario } from '../../src/raft/sim/scenario.js';

// Compiled to dist/test/raft/; the files stay in the source tree.
const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'raft', 'scenarios');
const rewrite = process.env['LOGLINE_REWRITE_SCENARIOS'] === '1';
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();

test('scenario files exist', () => {
  assert.ok(files.length >= 3, `only ${files.length} scenario files in ${dir}`);
});

for (const file of files) {
  test(`scenario ${file}`, () => {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    if (rewrite) {
      writeFileSync(path, rewriteScenario(text));
      return;
    }
    const diff = checkScenario(text);
    assert.equal(diff, undefined, `${file} ${diff}\n(LOGLINE_REWRITE_SCENARIOS=1 rewrites it if the change is meant)`);
    // A scenario must not end in a broken invariant: each pins behaviour that holds.
    const outputs = runScenario(parseScenario(text));
    assert.ok(!outputs.flat().some((l) => l.startsWith('violation:')), `${file} records a broken invariant`);
  });
}

test('a scenario whose recorded output differs fails, and a rewrite makes it pass', () => {
  const text = 'cluster voters=1\n----\nn1 leader e9\n\nstatus\n----\nwrong\n';
  assert.match(checkScenario(text) ?? '', /after "cluster voters=1"/);
  const fixed = rewriteScenario(text);
  assert.equal(checkScenario(fixed), undefined);
  assert.match(fixed, /^cluster voters=1\n----\nn1 leader e1 /);
});
