// Test hosts in network namespaces on a private bridge, for tests that cut links (the kernel here
// has no netem; blackhole routes cut cleanly). The root namespace is the bridge's .1 and reaches
// every host, so the test process and its clients are never cut; host `id` is namespace
// `<prefix>n<id>` at `<net>.(10 + id)`. Each test takes its own prefix and /24 so that two of them
// can run at once. Needs root and `ip netns`.
import assert from 'node:assert/strict';
import { clusterNodeProcesses, runProcess, type ClusterNodeProcess } from './process-helpers.js';

/** Runs `ip ARGS`, failing the test with its output when it fails (unless `allowFailure`). */
async function ip(args: string[], allowFailure = false): Promise<void> {
  const r = await runProcess('ip', args, null, 10_000);
  if (!allowFailure) assert.equal(r.code, 0, `ip ${args.join(' ')}: ${r.stderr}`);
}

/** Why namespace tests cannot run here, or false. */
export async function netnsSkip(): Promise<string | false> {
  if (process.getuid?.() !== 0) return 'network cuts need root (ip netns)';
  const r = await runProcess('ip', ['netns', 'list']);
  return r.code === 0 ? false : `ip netns is unavailable: ${r.stderr.trim()}`;
}

export class NetnsLab {
  /** `prefix`: a few letters naming this test's devices; `net`: the first three octets of its /24. */
  constructor(private readonly prefix: string, private readonly net: string) {}

  nsOf(id: number): string { return `${this.prefix}n${id}`; }
  ipOf(id: number): string { return `${this.net}.${10 + id}`; }

  /** Three cluster nodes on host `host`, on fixed ports there (each host has its own address), and their voters. */
  async clusterOn(host: number, clusterId: string): Promise<{ nodes: ClusterNodeProcess[]; voters: string }> {
    const { nodes } = await clusterNodeProcesses(3, clusterId);
    nodes.forEach((n, i) => Object.assign(n, { host: this.ipOf(host), netns: this.nsOf(host), brokerPort: 9092 + 2 * i, controllerPort: 9093 + 2 * i }));
    return { nodes, voters: nodes.map((n) => `${n.id}@${n.host}:${n.controllerPort}`).join(',') };
  }
  private get bridge(): string { return `${this.prefix}br`; }
  private vethOf(id: number): string { return `${this.prefix}v${id}`; }

  /** The bridge with the root namespace at .1 and one namespace per host. */
  async up(ids: number[]): Promise<void> {
    await ip(['link', 'add', this.bridge, 'type', 'bridge']);
    await ip(['addr', 'add', `${this.net}.1/24`, 'dev', this.bridge]);
    await ip(['link', 'set', this.bridge, 'up']);
    for (const id of ids) {
      await ip(['netns', 'add', this.nsOf(id)]);
      await ip(['link', 'add', this.vethOf(id), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.nsOf(id)]);
      await ip(['link', 'set', this.vethOf(id), 'master', this.bridge, 'up']);
      await ip(['-n', this.nsOf(id), 'addr', 'add', `${this.ipOf(id)}/24`, 'dev', 'eth0']);
      await ip(['-n', this.nsOf(id), 'link', 'set', 'eth0', 'up']);
      await ip(['-n', this.nsOf(id), 'link', 'set', 'lo', 'up']);
    }
  }

  /** Removes the namespaces and the bridge, whatever of them exists (also leftovers of a killed run). */
  async down(ids: number[]): Promise<void> {
    // The veth pair goes first and explicitly: a namespace's own devices are destroyed asynchronously
    // after `netns del`, which would make the next `up` find its peer still there.
    for (const id of ids) await ip(['link', 'del', this.vethOf(id)], true);
    for (const id of ids) await ip(['netns', 'del', this.nsOf(id)], true);
    await ip(['link', 'del', this.bridge], true);
  }

  /** Drops all traffic between host `a` and every host in `others`, both ways; the root namespace still reaches all. */
  async cut(a: number, others: number[]): Promise<void> {
    for (const b of others) {
      await ip(['-n', this.nsOf(a), 'route', 'replace', 'blackhole', `${this.ipOf(b)}/32`]);
      await ip(['-n', this.nsOf(b), 'route', 'replace', 'blackhole', `${this.ipOf(a)}/32`]);
    }
  }

  async heal(ids: number[]): Promise<void> {
    for (const a of ids) for (const b of ids) if (a !== b) await ip(['-n', this.nsOf(a), 'route', 'del', 'blackhole', `${this.ipOf(b)}/32`], true);
  }
}
