// `logline mirror` as its own process, killed with SIGKILL while producers write to A and started
// again: at least once, nothing acknowledged at A is missing on B; exactly once, nothing is missing
// and nothing is there twice. Bad properties are refused naming the key (exit code 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../broker/process-helpers.js';
import { createTopic, eventually, kafkajsWrites, kcatWrites, mm2Properties, readAll, twoClusters } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function writeConfig(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'logline-mm2-')), 'mm2.properties');
  writeFileSync(file, text);
  return file;
}

function startMirrorProcess(file: string): ChildProcess {
  const child = spawn(process.execPath, ['bin/logline.js', 'mirror', '--config', file, '--status-listener', '127.0.0.1:0', '--offset-flush-interval-ms', '500', '--log-level', 'WARN'], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', () => {});
  return child;
}

async function killedMidRun(exactlyOnce: boolean): Promise<void> {
  const c = await twoClusters();
  const file = writeConfig(mm2Properties(c, exactlyOnce ? { 'exactly.once.support': 'enabled' } : {}));
  let mirror = startMirrorProcess(file);
  try {
    await createTopic(c, 'a', 'events', 2);
    const started = Date.now();
    // Producers write for a while; the mirror is killed in the middle and started again.
    const writing = Promise.all([kafkajsWrites(c.aBootstrap, 'events', 3000, 'js'), kcatWrites(c.aBootstrap, 'events', 1500, 'rd')]);
    await eventually('the mirror to start copying', 20_000, async () => ((await readAll(c.bBootstrap, 'A.events', 2).catch(() => null))?.get(0)?.length ?? 0) > 0);
    mirror.kill('SIGKILL');
    await new Promise((r) => mirror.once('exit', r));
    await sleep(300);
    mirror = startMirrorProcess(file);
    const [js, rd] = await writing;
    const source = await readAll(c.aBootstrap, 'events', 2);
    const total = js.length + rd.length;
    assert.equal([...source.values()].reduce((n, r) => n + r.length, 0), total);
    await eventually('B to hold every record of A', 40_000, async () => {
      const target = await readAll(c.bBootstrap, 'A.events', 2).catch(() => null);
      if (target === null) return false;
      return [0, 1].every((p) => new Set(target.get(p)!.map((r) => r.value!.toString())).size >= source.get(p)!.length);
    });
    const target = await readAll(c.bBootstrap, 'A.events', 2);
    let duplicates = 0;
    for (const p of [0, 1]) {
      const values = target.get(p)!.map((r) => r.value!.toString());
      duplicates += values.length - new Set(values).size;
      // Per-partition order: the first copy of each record comes in source order.
      const firsts = values.filter((v, i) => values.indexOf(v) === i);
      assert.deepEqual(firsts, source.get(p)!.map((r) => r.value!.toString()), `A.events-${p} in A's order`);
    }
    console.log(`# ${exactlyOnce ? 'exactly once' : 'at least once'}: ${total} records mirrored across a SIGKILL of logline mirror in ${Date.now() - started} ms, ${duplicates} duplicates`);
    if (exactlyOnce) assert.equal(duplicates, 0, 'exactly once: no record twice');
  } finally {
    mirror.kill('SIGKILL');
    await c.close();
  }
}

test('SIGKILL of logline mirror mid-run, then a restart: nothing acknowledged at A is missing on B (at least once)', { timeout: 90_000 }, () => killedMidRun(false));

test('SIGKILL of logline mirror mid-run with exactly.once.support=enabled: every record on B once (zero duplicates)', { timeout: 90_000 }, () => killedMidRun(true));

test('logline mirror refuses bad properties naming the key, with exit code 2', { timeout: 30_000 }, async () => {
  const file = writeConfig('clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:2\nA->B.enabled = true\nA->B.topics.exlude = x\n');
  const r = await runProcess(process.execPath, ['bin/logline.js', 'mirror', '--config', file], null, 20_000);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /A->B\.topics\.exlude: unknown key/);
  const help = await runProcess(process.execPath, ['bin/logline.js', 'mirror', '--help'], null, 20_000);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--config X/);
});
