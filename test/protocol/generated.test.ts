import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';

const schemas = join(process.cwd(), '..', 'shared', 'kafka-protocol');

test('the committed generated protocol matches a fresh run of the generator', (t) => {
  if (!existsSync(schemas)) {
    t.skip(`../shared/kafka-protocol is absent here; cannot check src/protocol/generated is current`);
    return;
  }
  const out = mkdtempSync(join(tmpdir(), 'logline-gen-'));
  try {
    const r = spawnSync(process.execPath, ['scripts/generate-protocol.mjs', '--schemas', schemas, '--out', out], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const committed = join('src', 'protocol', 'generated');
    const names = readdirSync(out).sort();
    assert.deepEqual(readdirSync(committed).sort(), names);
    for (const name of names) {
      assert.ok(readFileSync(join(out, name)).equals(readFileSync(join(committed, name))),
        `${name} is stale: run npm run generate and commit`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
