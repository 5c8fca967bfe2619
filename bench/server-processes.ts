// N combined (broker,controller) `logline server` processes on 127.0.0.1 sharing one
// controller.quorum.voters, for benchmarks that kill -9 a node: each its own data directory under
// one temporary root (formatted with one cluster id, as Kafka's `kafka-storage format` does), its
// own ports kept across restarts. Only processes started here are ever signalled, by PID.
// LOGLINE_BENCH_NODE_ARGS adds node options to each server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof";
// a profile is written only on a clean exit, so `close()` stops the nodes with SIGTERM first then).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../src/util/index.js';
import { NodeFileSystem, randomUuid, writeMetaProperties } from '../src/storage/index.js';

export interface ServerProcess {
  readonly id: number;
  readonly brokerPort: number;
  readonly controllerPort: number;
  readonly dir: string;
  child: ChildProcess | null;
  /** The last 20 KB of its output, for a failure report. */
  log: string;
}

export class ServerProcesses {
  private constructor(readonly root: string, readonly nodes: ServerProcess[], readonly voters: string, private readonly sets: Record<string, string>) {}

  /** Starts `n` nodes with `sets` as `--set key=value` (Kafka's keys) and resolves once every one listens. */
  static async start(n: number, sets: Record<string, string>, startTimeoutMs = 45_000): Promise<ServerProcesses> {
    const root = mkdtempSync(join(tmpdir(), 'logline-bench-procs-'));
    const clusterId = randomUuid();
    const nodes: ServerProcess[] = [];
    for (let id = 1; id <= n; id++) {
      const dir = join(root, `node-${id}`);
      writeMetaProperties(new NodeFileSystem(), dir, { nodeId: id, clusterId, directoryId: randomUuid() });
      const brokerPort = await freePort();
      const controllerPort = await freePort();
      nodes.push({ id, brokerPort, controllerPort, dir, child: null, log: '' });
    }
    const voters = nodes.map((x) => `${x.id}@127.0.0.1:${x.controllerPort}`).join(',');
    const cluster = new ServerProcesses(root, nodes, voters, sets);
    try {
      await Promise.all(nodes.map((x) => cluster.startNode(x, startTimeoutMs)));
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  get live(): ServerProcess[] { return this.nodes.filter((x) => x.child !== null); }

  /** Starts (or restarts) a node on its ports and data directory; resolves once its broker listener is up. */
  startNode(node: ServerProcess, timeoutMs = 45_000): Promise<void> {
    const bin = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));
    const nodeArgs = (process.env['LOGLINE_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
    const args = [
      ...nodeArgs, bin, 'server', '--node-id', String(node.id), '--data-dir', node.dir,
      '--listeners', `PLAINTEXT://127.0.0.1:${node.brokerPort},CONTROLLER://127.0.0.1:${node.controllerPort}`,
      '--advertised-listeners', `PLAINTEXT://127.0.0.1:${node.brokerPort}`,
      '--set', 'process.roles=broker,controller', '--set', 'controller.listener.names=CONTROLLER',
      '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', '--set', `controller.quorum.voters=${this.voters}`,
      '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0',
      ...Object.entries(this.sets).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    node.child = child;
    return new Promise((resolve, reject) => {
      let up = false;
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`node ${node.id} did not start in ${timeoutMs} ms: ${node.log.slice(-2000)}`)); }, timeoutMs);
      const onData = (d: Buffer) => {
        node.log = (node.log + d.toString()).slice(-20_000);
        if (!up && node.log.includes(`listening on PLAINTEXT://127.0.0.1:${node.brokerPort}`)) { up = true; clearTimeout(timer); resolve(); }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (node.child === child) node.child = null;
        if (!up) reject(new Error(`node ${node.id} exited (${code ?? signal}) before listening: ${node.log.slice(-2000)}`));
      });
    });
  }

  /** SIGKILL (kill -9) of a node this harness started; resolves once the process is gone. */
  kill9(node: ServerProcess): Promise<void> {
    const child = node.child;
    node.child = null;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      process.kill(child.pid!, 'SIGKILL');
    });
  }

  /** SIGTERM (a clean stop, which writes a --cpu-prof profile), SIGKILL after `graceMs`. */
  stop(node: ServerProcess, graceMs = 30_000): Promise<void> {
    const child = node.child;
    node.child = null;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), graceMs);
      child.once('exit', () => { clearTimeout(timer); resolve(); });
      process.kill(child.pid!, 'SIGTERM');
    });
  }

  /** Stops every node still running (by PID: kill -9, or SIGTERM when profiling) and removes the data directories. */
  async close(): Promise<void> {
    const profiling = (process.env['LOGLINE_BENCH_NODE_ARGS'] ?? '').includes('--cpu-prof');
    await Promise.all(this.nodes.map((x) => (profiling ? this.stop(x) : this.kill9(x))));
    rmSync(this.root, { recursive: true, force: true });
  }
}
