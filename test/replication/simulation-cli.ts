// The replication simulation's soak command: runs seeds and lists every failing one, the first
// with its trace. `node dist/test/replication/simulation-cli.js --seeds 10000 [--from 1]`, or one
// seed: `--seed 42 [--trace]`; `--bug hw-from-one-follower` runs with a deliberate bug.
// `--power-loss` adds one all-nodes power loss per seed; `--flush-messages 1` (or `none`) sets the
// topic's flush.messages instead of drawing it per seed.
import { describeReplicationFailure, runReplicationSeed, type ReplicationBug, type ReplicationSimResult } from './simulation.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const one = arg('seed');
  const from = Number(arg('from') ?? 1);
  const count = Number(arg('seeds') ?? 100);
  const bug = arg('bug') as ReplicationBug | undefined;
  const powerLoss = process.argv.includes('--power-loss');
  const flushArg = arg('flush-messages');
  const flushMessages = flushArg === undefined ? undefined : flushArg === 'none' ? Number.MAX_SAFE_INTEGER : Number(flushArg);
  const seeds = one !== undefined ? [Number(one)] : Array.from({ length: count }, (_, i) => from + i);
  const failed: ReplicationSimResult[] = [];
  const total: Record<string, number> = {};
  const started = Date.now();
  for (const seed of seeds) {
    const r = await runReplicationSeed({ seed, ...(bug ? { bug } : {}), ...(powerLoss ? { allNodesPowerLoss: true } : {}), ...(flushMessages !== undefined ? { flushMessages } : {}) });
    for (const [k, v] of Object.entries(r.stats)) total[k] = (total[k] ?? 0) + v;
    if (!r.ok) {
      failed.push(r);
      console.log(`seed ${seed}: ${r.violation}`);
    }
    if (one === undefined && seeds.length >= 100 && (seed - from + 1) % 500 === 0) {
      console.error(`${seed - from + 1}/${seeds.length} seeds, ${failed.length} failed, ${Math.round((Date.now() - started) / 1000)} s`);
    }
  }
  console.log(`replication simulation: ${seeds.length} seeds (${seeds[0]}..${seeds.at(-1)}${bug ? `, bug ${bug}` : ''}${powerLoss ? ', all-nodes power loss' : ''}${flushArg !== undefined ? `, flush.messages ${flushArg}` : ''}) in ${Date.now() - started} ms, ${failed.length} failed`);
  console.log(JSON.stringify(total));
  if (failed.length > 0) {
    console.log(`failing seeds: ${failed.map((r) => r.seed).join(',')}`);
    if (one !== undefined || process.argv.includes('--trace') || bug === undefined) console.log(describeReplicationFailure(failed[0]!));
    process.exitCode = 1;
  }
}

await main();
