// The README's failure story ("RF 3, min.insync.replicas 2, acks=all: one broker down, then two")
// works as written. The test runs the commands between the readme-walkthrough markers in
// README.md: the ```sh block once, then each `$ command` of the ```console blocks in order, in
// bash, in a temporary directory. Its ports are changed to free ones, and `npx logline` and
// `bin/logline.js` point at this checkout. Each command's output (stdout and stderr) must be what
// the README shows under it. The topic id is not compared, nor the order of an ISR or of the
// offline replicas (the controller orders them). A read-only command (describe, consume) is run
// again until its output matches: the README's "about 9 s later". Commands that change something
// run once. Only the processes the README's commands started are signalled, by their pid files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runProcess } from '../broker/process-helpers.js';
import { reservePort } from '../../src/util/index.js';

const BIN = resolve('bin/logline.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Step { command: string; expected: string }

/** The walkthrough's setup script and its `$ command` steps with the output shown under each. */
function walkthrough(): { setup: string; steps: Step[] } {
  const readme = readFileSync('README.md', 'utf8');
  const begin = readme.indexOf('<!-- readme-walkthrough: begin');
  const end = readme.indexOf('<!-- readme-walkthrough: end -->');
  assert.ok(begin >= 0 && end > begin, 'README.md has the walkthrough markers');
  const section = readme.slice(begin, end);
  const blocks = [...section.matchAll(/```(sh|console)\n([\s\S]*?)```/g)];
  const setup = blocks.filter((b) => b[1] === 'sh').map((b) => b[2]!).join('\n');
  const steps: Step[] = [];
  for (const b of blocks.filter((x) => x[1] === 'console')) {
    for (const line of b[2]!.split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: '' });
      else if (line !== '' || steps.at(-1)!.expected !== '') steps.at(-1)!.expected += `${line}\n`;
    }
  }
  return { setup, steps };
}

/**
 * A 4-digit prefix P with ports P1, P2, P3 free (the README's brokers listen on 2909N), a free
 * controller port, and a prefix H with H0..H3 free (the nodes' HTTP listeners, 2964N).
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

/**
 * Output as compared: runs of spaces collapsed (column widths follow the content), the topic id
 * left out, and the ISR and OFFLINE columns of a partition table sorted.
 */
function normalize(text: string): string {
  let sortedColumns: number[] = [];
  return text.trim().split('\n').map((line) => {
    const tokens = line.trim().split(/\s+/);
    if (tokens.includes('PARTITION') && tokens.includes('ISR')) {
      sortedColumns = ['ISR', 'OFFLINE'].map((c) => tokens.indexOf(c)).filter((i) => i >= 0);
      return tokens.join(' ');
    }
    if (line.trim() === '') { sortedColumns = []; return ''; }
    for (const i of sortedColumns) {
      if (tokens[i] !== undefined && /^\d+(,\d+)*$/.test(tokens[i]!)) tokens[i] = tokens[i]!.split(',').map(Number).sort((a, b) => a - b).join(',');
    }
    return tokens.join(' ').replace(/^topic (\S+) id \S+$/, 'topic $1 id <id>');
  }).join('\n');
}

test('README: one broker down, writes go on; two down, acks=all refused with NOT_ENOUGH_REPLICAS; one back, writes resume; preferred leaders return', { timeout: 300_000 }, async () => {
  const { setup, steps } = walkthrough();
  assert.ok(steps.length >= 15, `the walkthrough's commands: ${steps.map((s) => s.command).join(' | ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'logline-readme-'));
  const { prefix, controller, httpPrefix } = await freePorts();
  const ports: Record<string, string> = { 29190: String(controller), 2909: prefix, 2964: httpPrefix };
  const local = (script: string) => script
    .replace(/29190|2909|2964/g, (m) => ports[m]!)
    .replaceAll('npx logline', `node ${BIN}`).replaceAll('node bin/logline.js', `node ${BIN}`);
  // What every command needs from the setup: the exported variables and start_broker.
  const prelude = local(setup.slice(0, setup.indexOf('\n}\n') + 3));
  assert.match(prelude, /^export LOGLINE_BOOTSTRAP_SERVERS=.*start_broker\(\) \{/s);
  // The README's `node` is the one running this test (CI runs the suite on more than one Node).
  const bash = (script: string, timeoutMs: number) => runProcess('bash', ['-c', `set -e -o pipefail\ncd ${dir}\n${script}`], null, timeoutMs, { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` });
  try {
    const started = await bash(local(setup), 60_000);
    assert.equal(started.code, 0, `setup: ${started.stderr}`);
    for (const step of steps) {
      const readOnly = /topic describe|consume/.test(step.command);
      const deadline = performance.now() + 60_000;
      for (;;) {
        const r = await bash(`${prelude}\n${local(step.command)}`, 150_000);
        const got = normalize(r.stdout + r.stderr);
        if (got === normalize(step.expected)) break;
        if (!readOnly || performance.now() > deadline) {
          assert.fail(`$ ${step.command}\nexpected:\n${step.expected}\ngot (exit ${r.code}):\n${r.stdout}${r.stderr}`);
        }
        await sleep(500);
      }
    }
  } finally {
    for (const n of [0, 1, 2, 3]) {
      const file = join(dir, `node-${n}.pid`);
      if (!existsSync(file)) continue;
      try { process.kill(Number(readFileSync(file, 'utf8').trim()), 'SIGKILL'); } catch { /* already gone */ }
    }
    await sleep(200);
    rmSync(dir, { recursive: true, force: true });
  }
});
