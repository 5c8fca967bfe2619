// `logline cluster start` as a user runs it: three nodes in one process, the bootstrap list and
// controller ports printed; `cluster status` shows the quorum (a leader, three voters, no lag once
// caught up) and `cluster info` the brokers; Ctrl-C (SIGINT) stops it with exit code 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const BIN = 'bin/logline.js';

/** `logline cluster start ARGS` until it prints Ctrl-C; the child and everything it printed. */
async function startCli(args: string[], dir: string): Promise<{ child: ChildProcess; out: string }> {
  const child = spawn(process.execPath, [BIN, 'cluster', 'start', ...args, '--broker-port', '0', '--http-port', '0', '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster did not start: ${out}`)), 60_000);
    const onData = (d: Buffer) => { out += d; if (out.includes('Ctrl-C')) { clearTimeout(timer); resolve(); } };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${out}`)); });
  }).catch((e) => { child.kill('SIGKILL'); throw e; });
  return { child, out };
}

type Status = { quorum: { leaderId: number; voters: { id: number; lag: string }[]; observers: { id: number }[] }; brokers: { id: number }[] };

/** `cluster status --json` until every voter has caught up. */
async function statusCaughtUp(bootstrap: string): Promise<Status> {
  let status: Status | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    const r = spawnSync(process.execPath, [BIN, 'cluster', 'status', '--json', '-b', bootstrap], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    status = JSON.parse(r.stdout);
    if (status!.quorum.voters.every((v) => v.lag === '0')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status!;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
}

test('logline cluster start --nodes 3 prints the bootstrap list and controller ports; cluster status shows the quorum; SIGINT stops it', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-cli-cluster-'));
  let child: ChildProcess | undefined;
  try {
    const started = await startCli(['--nodes', '3'], dir);
    child = started.child;
    const out = started.out;
    const bootstrap = /bootstrap servers: (\S+)/.exec(out)![1]!;
    assert.equal(bootstrap.split(',').length, 3);
    const voters = /controller\.quorum\.voters=(\S+)/.exec(out)![1]!;
    assert.match(voters, /^1@127\.0\.0\.1:\d+,2@127\.0\.0\.1:\d+,3@127\.0\.0\.1:\d+$/);
    for (const id of [1, 2, 3]) assert.ok(existsSync(join(dir, `node-${id}`, 'meta.properties')), `node ${id} has its data directory`);

    // Asked of the last node, which may not lead: the status still comes from the leader.
    const last = bootstrap.split(',')[2]!;
    const status = await statusCaughtUp(last);
    assert.ok([1, 2, 3].includes(status.quorum.leaderId), `leader ${status.quorum.leaderId}`);
    assert.deepEqual(status.quorum.voters.map((v) => v.id).sort(), [1, 2, 3]);
    assert.deepEqual(status.quorum.voters.map((v) => v.lag), ['0', '0', '0']);
    assert.deepEqual(status.quorum.observers, []);
    assert.deepEqual(status.brokers.map((b) => b.id).sort(), [1, 2, 3]);
    const table = spawnSync(process.execPath, [BIN, 'cluster', 'status', '-b', last], { encoding: 'utf8', timeout: 20_000 });
    assert.match(table.stdout, new RegExp(`metadata quorum: leader ${status.quorum.leaderId}`));

    const info = spawnSync(process.execPath, [BIN, 'cluster', 'info', '-b', last], { encoding: 'utf8', timeout: 20_000 });
    assert.match(info.stdout, new RegExp(`metadata quorum: leader ${status.quorum.leaderId} .* voters 1,2,3`));
    await stop(child);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('logline cluster start --controllers 3 --brokers 2: controller-only voters 1-3, broker-only observers 4-5; status from a broker shows both', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-cli-split-'));
  let child: ChildProcess | undefined;
  try {
    const started = await startCli(['--controllers', '3', '--brokers', '2'], dir);
    child = started.child;
    assert.match(started.out, /3 controllers, 2 brokers/);
    const bootstrap = /bootstrap servers: (\S+)/.exec(started.out)![1]!;
    assert.equal(bootstrap.split(',').length, 2);
    const status = await statusCaughtUp(bootstrap.split(',')[1]!);
    assert.ok([1, 2, 3].includes(status.quorum.leaderId), `leader ${status.quorum.leaderId}`);
    assert.deepEqual(status.quorum.voters.map((v) => v.id).sort(), [1, 2, 3]);
    assert.deepEqual(status.quorum.observers.map((o) => o.id).sort(), [4, 5]);
    assert.deepEqual(status.brokers.map((b) => b.id).sort(), [4, 5]);
    const bad = spawnSync(process.execPath, [BIN, 'cluster', 'start', '--nodes', '3', '--brokers', '2'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--nodes: not with --controllers\/--brokers/);
    await stop(child);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
