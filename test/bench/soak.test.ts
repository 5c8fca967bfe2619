// `npm run bench:soak` at smoke size (LOGLINE_SOAK_SMOKE_SECONDS, 20 by default; the 30-minute
// soak is run by hand, see bench/README.md): the bench runs as a user runs it, as its own process,
// and its JSON report has what a reader of a soak looks at: for every interval each node's RSS and
// open file descriptors and the produce latency, the faults injected, load that kept being
// acknowledged and consumed, and a flatness verdict with a check per node. Whether the verdict is
// "flat" is not asserted: a 20-second run is too short for thirds to mean anything.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SECONDS = Number(process.env['LOGLINE_SOAK_SMOKE_SECONDS'] ?? 20);
const BENCH = fileURLToPath(new URL('../../bench/soak.js', import.meta.url));
let child: ChildProcess | null = null;

after(async () => {
  // The bench stops its nodes on SIGTERM; SIGKILL only if it does not exit.
  if (child !== null && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child?.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
});

interface Report {
  seconds: number;
  totals: { acked: number; consumed: number; shareAccepted: number; txnCommitted: number; faults: string[] };
  verdict: { ok: boolean; checks: { what: string; ok: boolean }[] };
  samples: { tS: number; nodes: { id: number; rssMiB: number | null; fds: number | null }[]; produce: { acked: number; p50Ms: number; p99Ms: number } }[];
}

test(`bench:soak for ${SECONDS} s with a kill and a pause: a sample per interval with every node's RSS, fds and produce latency, and a verdict`, { timeout: 150_000 }, async () => {
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child = spawn(process.execPath, [BENCH, '--seconds', String(SECONDS), '--interval-seconds', '2', '--fault-interval-seconds', '4', '--fault-seconds', '2', '--rate', '200'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => { stdout += d; });
    child.stderr!.on('data', (d) => { stderr = (stderr + d).slice(-20_000); });
    // Bounded: past this the after hook stops it.
    const timer = setTimeout(() => child?.kill('SIGTERM'), 120_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
  assert.ok(out.code === 0 || out.code === 1, `exit ${out.code}: ${out.stderr}`);
  const report = JSON.parse(out.stdout) as Report;
  assert.equal(report.seconds, SECONDS);
  assert.ok(report.samples.length >= SECONDS / 2 - 1, `${report.samples.length} samples`);
  for (const s of report.samples) {
    assert.deepEqual(s.nodes.map((n) => n.id), [1, 2, 3]);
    const up = s.nodes.filter((n) => n.rssMiB !== null);
    assert.ok(up.length >= 2, `at most one node down at a time, at ${s.tS} s`);
    for (const n of up) assert.ok(n.rssMiB! > 0 && n.fds! > 0, `node ${n.id} at ${s.tS} s: ${n.rssMiB} MiB, ${n.fds} fds`);
  }
  // A sample taken just after a restart finds a process still starting (CI once saw 21 MiB and 5
  // fds); each node's largest sample is a running server's.
  for (const id of [1, 2, 3]) {
    const seen = report.samples.flatMap((s) => s.nodes.filter((n) => n.id === id && n.rssMiB !== null));
    assert.ok(seen.some((n) => n.rssMiB! > 10 && n.fds! > 5), `node ${id}: ${seen.map((n) => `${n.rssMiB} MiB ${n.fds} fds`).join(', ')}`);
  }
  assert.ok(report.totals.faults.some((f) => f.startsWith('kill') || f.startsWith('pause')), `faults: ${report.totals.faults.join(', ')}`);
  const acking = report.samples.filter((s) => s.produce.acked > 0);
  assert.ok(acking.length >= report.samples.length / 2, `records were acknowledged in most intervals: ${report.samples.map((s) => s.produce.acked).join(' ')}`);
  for (const s of acking) assert.ok(s.produce.p99Ms >= s.produce.p50Ms && s.produce.p50Ms > 0, JSON.stringify(s.produce));
  assert.ok(report.totals.acked > 0 && report.totals.consumed > 0 && report.totals.shareAccepted > 0 && report.totals.txnCommitted > 0, JSON.stringify(report.totals));
  const whats = report.verdict.checks.map((c) => c.what);
  for (const id of [1, 2, 3]) assert.ok(whats.includes(`node ${id} RSS MiB (median)`) && whats.includes(`node ${id} open fds (median)`), whats.join('; '));
  assert.equal(out.code, report.verdict.ok ? 0 : 1, 'the exit code is the verdict');
});
