// The documentation's walkthroughs work as written (today the failure story of docs/operations.md,
// "RF 3, min.insync.replicas 2, acks=all: one broker down, then two", docs/schema-registry.md's
// `logline schema`, and the README's share groups and mirroring between two clusters). Every section of README.md and docs/*.md between
// `<!-- readme-walkthrough: begin ... -->` and `<!-- readme-walkthrough: end -->` is a test: its
// ```sh blocks run once, then each `$ command` of its ```console blocks in order, in bash, in a
// temporary directory. Its ports (a controller on 29190, brokers on 2909N, HTTP listeners, the
// console's and the schema registry's, on 2964N) are changed to free ones, and `npx logline` and
// `bin/logline.js` point at this checkout. Each command's output (stdout and stderr) must be what
// the page shows under it. The topic id is not compared, nor the order of an ISR or of the offline
// replicas (the controller orders them). A read-only command (describe, consume, link status) is run again until
// its output matches: the page's "about 9 s later". Commands that change something run once. Only
// the processes the section's commands started are signalled, by their pid files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runProcess } from '../broker/process-helpers.js';
import { reservePort } from '../../src/util/index.js';
import { markedSections, normalize, type Section } from '../docs/pages.js';

const BIN = resolve('bin/logline.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A 4-digit prefix P with ports P1, P2, P3 free (the brokers' 2909N), a free controller port, and a
 * prefix H with H0..H3 free (the nodes' HTTP listeners, 2964N).
 */
async function freePorts(): Promise<{ prefix: string; controller: number; httpPrefix: string }> {
  for (;;) {
    // Below the kernel's ephemeral range (32768 up), as freePort picks.
    const prefix = 2000 + Math.floor(Math.random() * 800);
    const httpPrefix = prefix + 400;
    const controller = prefix * 10 + 5;
    const all = [1, 2, 3].map((n) => prefix * 10 + n).concat(controller, ...[0, 1, 2, 3].map((n) => httpPrefix * 10 + n));
    if ((await Promise.all(all.map((p) => reservePort(p)))).every(Boolean)) return { prefix: String(prefix), controller, httpPrefix: String(httpPrefix) };
  }
}

/** What every command needs from the setup: up to the end of its first shell function (start_broker), else its exports. */
function preludeOf(setup: string): string {
  const fn = setup.indexOf('\n}\n');
  return fn >= 0 ? setup.slice(0, fn + 3) : setup.split('\n').filter((l) => l.startsWith('export ')).join('\n');
}

async function runSection(section: Section): Promise<void> {
  const { setup, steps } = section;
  assert.ok(steps.length > 0, `${section.page}: a walkthrough without $ commands`);
  const dir = mkdtempSync(join(tmpdir(), 'logline-walkthrough-'));
  const { prefix, controller, httpPrefix } = await freePorts();
  const ports: Record<string, string> = { 29190: String(controller), 2909: prefix, 2964: httpPrefix };
  const localPorts = (text: string) => text.replace(/29190|2909|2964/g, (m) => ports[m]!);
  const local = (script: string) => localPorts(script)
    .replaceAll('npx logline', `node ${BIN}`).replaceAll('node bin/logline.js', `node ${BIN}`);
  const prelude = local(preludeOf(setup));
  // The page's `node` is the one running this test (CI runs the suite on more than one Node).
  const bash = (script: string, timeoutMs: number) => runProcess('bash', ['-c', `set -e -o pipefail\ncd ${dir}\n${script}`], null, timeoutMs, { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` });
  try {
    const started = await bash(local(setup), 60_000);
    assert.equal(started.code, 0, `setup: ${started.stderr}`);
    for (const step of steps) {
      const readOnly = /topic describe|consume|group describe|link status/.test(step.command);
      const deadline = performance.now() + 90_000;
      for (;;) {
        // The page's `sleep N;` before a read-only command is its wait; here the attempts are.
        const command = readOnly ? step.command.replace(/^sleep \d+; /, '') : step.command;
        const r = await bash(`${prelude}\n${local(command)}`, 150_000);
        const got = normalize(r.stdout + r.stderr);
        if (got === normalize(localPorts(step.expected))) break;
        if (!readOnly || performance.now() > deadline) {
          assert.fail(`$ ${step.command}\nexpected:\n${step.expected}\ngot (exit ${r.code}):\n${r.stdout}${r.stderr}`);
        }
        await sleep(500);
      }
    }
  } finally {
    for (const file of readdirSync(dir).filter((n) => n.endsWith('.pid'))) {
      try { process.kill(Number(readFileSync(join(dir, file), 'utf8').trim()), 'SIGKILL'); } catch { /* already gone */ }
    }
    await sleep(200);
    rmSync(dir, { recursive: true, force: true });
  }
}

const sections = markedSections('readme-walkthrough');

test('the documentation has walkthroughs, and docs/operations.md has the acks=all failure story', () => {
  assert.ok(sections.some((s) => s.page === 'docs/operations.md' && s.steps.length >= 15), sections.map((s) => `${s.page}: ${s.heading} (${s.steps.length} steps)`).join('\n'));
});

for (const section of sections) {
  test(`${section.page}: ${section.heading}`, { timeout: 300_000 }, () => runSection(section));
}
