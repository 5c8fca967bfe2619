// Runs every compiled test file on Node's own test runner. Listing the files ourselves keeps this
// independent of how each Node version interprets directory and glob arguments to `--test`.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filter = process.argv[2];
const files = collect('dist/test', []).filter((f) => !filter || f.includes(filter));
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
// --test-force-exit: a file whose tests have all finished ends even if something it started left a
// timer or socket open, so one leaked handle cannot hold CI until its time limit (it did, twice, under
// heavy load). The tests' own timeouts still fail a test that hangs.
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-force-exit', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
