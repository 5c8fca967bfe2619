// The controller is a deterministic state machine (DESIGN.md §1): time, randomness and I/O come in
// as arguments. This guards the room's sources against the usual ways they sneak in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const dir = new URL('../../../src/controller/', import.meta.url);
const FORBIDDEN: [RegExp, string][] = [
  [/\bDate\.now\b|\bnew Date\(/, 'a clock'],
  [/\bperformance\.now\b|\bprocess\.hrtime\b/, 'a clock'],
  [/\bMath\.random\b|\bcrypto\.random/, 'randomness'],
  [/\bset(Timeout|Interval|Immediate)\b/, 'a timer'],
  [/\bawait\b|\basync\b/, 'async code'],
  [/from 'node:(fs|net|dgram|child_process|worker_threads|crypto)'/, 'I/O'],
];

test('the controller room has no clock, timer, randomness, await or I/O of its own', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  assert.ok(files.includes('quorum-controller.ts'));
  for (const f of files) {
    const source = readFileSync(new URL(f, dir), 'utf8').replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
    for (const [pattern, what] of FORBIDDEN) assert.doesNotMatch(source, pattern, `src/controller/${f} uses ${what}`);
  }
});
