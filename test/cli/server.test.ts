// `logline server` as a user runs it: bad properties are refused, a taken port is a clear error,
// SIGTERM shuts down cleanly, and the CLI talks to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freePort } from '../../src/util/index.js';

const BIN = 'bin/logline.js';

test('unknown and invalid properties exit with code 2 and name the key', () => {
  const r = spawnSync(process.execPath, [BIN, 'server', '--set', 'no.such.key=1', '--set', 'num.partitions=0'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no\.such\.key/);
  assert.match(r.stderr, /num\.partitions/);
  const usage = spawnSync(process.execPath, [BIN, 'nonsense'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(usage.status, 2);
});

test('a running server logs its listener, serves the CLI, refuses a second one on its port, and stops on SIGTERM', async () => {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-cli-'));
  const child = spawn(process.execPath, [BIN, 'server', '--data-dir', dataDir, '--listeners', `PLAINTEXT://127.0.0.1:${port}`, '--set', 'num.partitions=2', '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listener line: ${out}`)), 15_000);
      child.stdout.on('data', (d) => { out += d; if (out.includes(`listening on PLAINTEXT://127.0.0.1:${port}`)) { clearTimeout(timer); resolve(); } });
    });
    const bootstrap = ['--bootstrap-server', `127.0.0.1:${port}`];
    const created = spawnSync(process.execPath, [BIN, 'topic', 'create', 'cli-t', ...bootstrap, '--json'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(created.status, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).partitions, 2, 'num.partitions from --set');
    const produced = spawnSync(process.execPath, [BIN, 'produce', '--topic', 'cli-t', '--key-separator', ':', ...bootstrap], { input: 'a:1\nb:2\nc:3\n', encoding: 'utf8', timeout: 20_000 });
    assert.equal(produced.status, 0, produced.stderr);
    const consumed = spawnSync(process.execPath, [BIN, 'consume', '--topic', 'cli-t', '--format', 'json', ...bootstrap], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(consumed.status, 0, consumed.stderr);
    const rows = consumed.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(rows.map((r) => `${r.key}=${r.value}`).sort(), ['a=1', 'b=2', 'c=3']);
    const bench = spawnSync(process.execPath, [BIN, 'bench', 'produce', '--num-records', '3050', '--batch-size', '100', '--record-size', '200', '--json', ...bootstrap], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(bench.status, 0, bench.stderr);
    const summary = JSON.parse(bench.stdout);
    assert.equal(summary.records, 3050, 'exactly the records asked for');
    assert.ok(summary.recordsPerSec > 0 && summary.latencyMs.p99 >= summary.latencyMs.p50);
    const idem = spawnSync(process.execPath, [BIN, 'bench', 'produce', '--topic', 'idem-bench', '--partitions', '1', '--idempotence', '--acks', '-1', '--num-records', '2500', '--batch-size', '100', '--record-size', '50', '--json', ...bootstrap], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(idem.status, 0, idem.stderr);
    assert.equal(JSON.parse(idem.stdout).idempotence, true);
    const idemBack = spawnSync(process.execPath, [BIN, 'consume', '--topic', 'idem-bench', '--format', 'json', ...bootstrap], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(idemBack.stdout.trim().split('\n').length, 2500, 'every idempotent record once');
    assert.notEqual(spawnSync(process.execPath, [BIN, 'bench', 'produce', '--idempotence', '--acks', '1', ...bootstrap], { encoding: 'utf8', timeout: 20_000 }).status, 0, '--idempotence needs acks=-1');
    const otherDir = join(dataDir, 'other');
    const second = spawnSync(process.execPath, [BIN, 'server', '--data-dir', otherDir, '--listeners', `PLAINTEXT://127.0.0.1:${port}`, '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(second.status, 1);
    assert.match(second.stderr, /EADDRINUSE|in use/);
    const samePort = await freePort();
    const sameDir = spawnSync(process.execPath, [BIN, 'server', '--data-dir', dataDir, '--listeners', `PLAINTEXT://127.0.0.1:${samePort}`, '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(sameDir.status, 1, 'a second server on the same data directory is refused');
    assert.match(sameDir.stderr, new RegExp(`data directory .* is in use by process ${child.pid}`));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(out, /stopped/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a data directory of another node or cluster, or one that cannot be used, is refused with exit code 1', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-cli-'));
  try {
    writeFileSync(join(dataDir, 'meta.properties'), 'version=1\nnode.id=7\ncluster.id=someone-elses\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\n');
    const r = spawnSync(process.execPath, [BIN, 'server', '--data-dir', dataDir, '--listeners', 'PLAINTEXT://127.0.0.1:0'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot start: .*node 7/);
    const file = join(dataDir, 'a-file');
    writeFileSync(file, 'not a directory');
    const bad = spawnSync(process.execPath, [BIN, 'server', '--data-dir', file, '--listeners', 'PLAINTEXT://127.0.0.1:0'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /cannot start: .*(EEXIST|ENOTDIR|not a directory)/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('--log-format json: every line the server writes is a JSON object with ts, level, component and msg; bad formats and levels exit with code 2', async () => {
  assert.equal(spawnSync(process.execPath, [BIN, 'server', '--log-format', 'xml'], { encoding: 'utf8', timeout: 20_000 }).status, 2);
  const badLevel = spawnSync(process.execPath, [BIN, 'server', '--set', 'log.level=LOUD'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(badLevel.status, 2);
  assert.match(badLevel.stderr, /log\.level/);
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-cli-'));
  const child = spawn(process.execPath, [BIN, 'server', '--data-dir', dataDir, '--listeners', `PLAINTEXT://127.0.0.1:${port}`, '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0', '--set', 'log.level=DEBUG', '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    child.stderr.on('data', (d) => { out += d; });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listener line: ${out}`)), 15_000);
      child.stdout.on('data', (d) => { out += d; if (out.includes(`listening on PLAINTEXT://127.0.0.1:${port}`)) { clearTimeout(timer); resolve(); } });
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    for (const l of lines) {
      assert.deepEqual(Object.keys(l), ['ts', 'level', 'component', 'msg']);
      assert.ok(!Number.isNaN(Date.parse(l.ts!)) && ['ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'].includes(l.level!), JSON.stringify(l));
    }
    const components = new Set(lines.map((l) => l.component));
    for (const c of ['server', 'storage', 'controller', 'broker-lifecycle']) assert.ok(components.has(c), `a line from ${c} in ${[...components].join(', ')}`);
    assert.ok(lines.some((l) => l.component === 'server' && l.msg === `listening on PLAINTEXT://127.0.0.1:${port}`));
    assert.ok(lines.some((l) => l.component === 'server' && l.msg === 'stopped'));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the server grows V8's old generation 4x what is live (no back-to-back Mark-Compacts), unless the operator chose", async () => {
  const { tuneHeap } = await import('../../src/cli/heap.js');
  const set: string[] = [];
  assert.equal(tuneHeap([], '', (f) => set.push(f)), '--heap-growing-percent=300');
  assert.deepEqual(set, ['--heap-growing-percent=300']);
  assert.equal(tuneHeap(['--heap-growing-percent=50'], '', (f) => set.push(f)), null, "node's own flag");
  assert.equal(tuneHeap([], '--max-old-space-size=512 --heap_growing_percent=20', (f) => set.push(f)), null, 'NODE_OPTIONS');
  assert.equal(set.length, 1);
});
