// `npm run sim -- --seed N [--steps S]` replays one seed (printing its trace on failure);
// `npm run sim -- --seeds N [--start-seed S]` runs N seeds and exits 1 if any fails.
import { runSeed, type SimResult } from './sim.js';

interface CliArgs {
  seed: number | undefined;
  seeds: number;
  startSeed: number;
  steps: number | undefined;
  chaosMs: number | undefined;
  verbose: boolean;
}

function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { seed: undefined, seeds: 100, startSeed: 1, steps: undefined, chaosMs: undefined, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isSafeInteger(v) || v < 0) usage(`${flag} needs a non-negative integer`);
      return v;
    };
    switch (flag) {
      case '--seed': args.seed = value(); break;
      case '--seeds': args.seeds = value(); break;
      case '--start-seed': args.startSeed = value(); break;
      case '--steps': args.steps = value(); break;
      case '--chaos-ms': args.chaosMs = value(); break;
      case '--verbose': args.verbose = true; break;
      case '--help': usage(); break;
      default: usage(`unknown argument ${flag}`);
    }
  }
  return args;
}

function usage(error?: string): never {
  if (error !== undefined) console.error(error);
  console.error('usage: sim [--seed N | --seeds N [--start-seed S]] [--steps MAX] [--chaos-ms MS] [--verbose]');
  process.exit(error === undefined ? 0 : 2);
}

function summary(r: SimResult): string {
  const s = r.stats;
  return `seed ${r.seed}: ${r.ok ? 'ok' : 'FAILED'} voters=${r.voters} observers=${r.observers} steps=${s.steps} `
    + `sim=${(s.simMs / 1000).toFixed(1)}s messages=${s.messages} committed=${s.committed} leaders=${s.leaders} `
    + `crashes=${s.crashes} snapshots=${s.snapshots} installs=${s.snapshotInstalls}`;
}

function printFailure(r: SimResult): void {
  console.error(`\nseed ${r.seed} violated an invariant at step ${r.failedStep}: ${r.violation}`);
  console.error(`last events (replay: npm run sim -- --seed ${r.seed} --steps ${r.failedStep! + 1}):`);
  for (const line of r.trace) console.error(`  ${line}`);
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const opts = { maxSteps: args.steps, chaosMs: args.chaosMs };
  if (args.seed !== undefined) {
    const r = runSeed({ seed: args.seed, ...opts, traceLength: 60 });
    console.log(summary(r));
    if (!r.ok) { printFailure(r); process.exit(1); }
    return;
  }
  const started = Date.now();
  let failed = 0;
  let steps = 0;
  let simMs = 0;
  for (let seed = args.startSeed; seed < args.startSeed + args.seeds; seed++) {
    const r = runSeed({ seed, ...opts, traceLength: 0 });
    steps += r.stats.steps;
    simMs += r.stats.simMs;
    if (args.verbose) console.log(summary(r));
    if (!r.ok) {
      failed++;
      console.error(`seed ${seed} FAILED at step ${r.failedStep}: ${r.violation}  (npm run sim -- --seed ${seed})`);
    }
  }
  const wallMs = Date.now() - started;
  console.log(`${args.seeds} seeds from ${args.startSeed}: ${args.seeds - failed} ok, ${failed} failed; `
    + `${steps} steps, ${(simMs / 1000).toFixed(0)} simulated s in ${(wallMs / 1000).toFixed(1)} s`);
  process.exit(failed === 0 ? 0 : 1);
}

main();
