// `npm run sim -- --seed N [--steps S]` replays one seed; on failure it prints the violation, then
// the shortest chaos schedule it finds that still reproduces it (delta debugging, minimize.ts) with
// the command that replays exactly that, and the trace of that shorter run.
// `npm run sim -- --seeds N [--start-seed S]` runs N seeds and exits 1 if any fails (the first
// few failures are minimised the same way).
// `--schedule '@120 crash n2 keep=0 restart=never;@300 propose n1 x2'` replays a seed with that
// schedule instead of drawing one; `--no-driver-crashes` turns off the crashes inside the driver;
// `--no-minimize` skips minimisation; `--bug ack-before-fsync` (test only) injects a known bug.
import { minimizeSeed } from './minimize.js';
import { formatChaosEvent, parseSchedule, runSeed, type ChaosEvent, type SimOptions, type SimResult } from './sim.js';

interface CliArgs {
  seed: number | undefined;
  seeds: number;
  startSeed: number;
  steps: number | undefined;
  chaosMs: number | undefined;
  verbose: boolean;
  schedule: ChaosEvent[] | undefined;
  driverCrashes: boolean;
  minimize: boolean;
  bug: SimOptions['bug'];
}

const minimizedFailuresMax = 3;

function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = {
    seed: undefined, seeds: 100, startSeed: 1, steps: undefined, chaosMs: undefined, verbose: false,
    schedule: undefined, driverCrashes: true, minimize: true, bug: undefined,
  };
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
      case '--schedule':
        try { args.schedule = parseSchedule(argv[++i] ?? ''); } catch (err) { usage((err as Error).message); }
        break;
      case '--no-driver-crashes': args.driverCrashes = false; break;
      case '--no-minimize': args.minimize = false; break;
      case '--bug':
        if (argv[++i] !== 'ack-before-fsync') usage('--bug takes ack-before-fsync');
        args.bug = 'ack-before-fsync';
        break;
      case '--help': usage(); break;
      default: usage(`unknown argument ${flag}`);
    }
  }
  return args;
}

function usage(error?: string): never {
  if (error !== undefined) console.error(error);
  console.error('usage: sim [--seed N | --seeds N [--start-seed S]] [--steps MAX] [--chaos-ms MS] [--verbose]\n'
    + '           [--schedule EVENTS] [--no-driver-crashes] [--no-minimize] [--bug ack-before-fsync]');
  process.exit(error === undefined ? 0 : 2);
}

function summary(r: SimResult): string {
  const s = r.stats;
  return `seed ${r.seed}: ${r.ok ? 'ok' : 'FAILED'} voters=${r.voters} observers=${r.observers} steps=${s.steps} `
    + `sim=${(s.simMs / 1000).toFixed(1)}s messages=${s.messages} committed=${s.committed} leaders=${s.leaders} `
    + `crashes=${s.crashes} snapshots=${s.snapshots} installs=${s.snapshotInstalls}`;
}

/** The command that replays a run; the schedule is quoted for a POSIX shell. */
export function replayCommand(seed: number, schedule: readonly ChaosEvent[], driverCrashes: boolean, args: CliArgs): string {
  const parts = ['npm run sim --', `--seed ${seed}`];
  if (args.chaosMs !== undefined) parts.push(`--chaos-ms ${args.chaosMs}`);
  if (args.bug !== undefined) parts.push(`--bug ${args.bug}`);
  if (!driverCrashes) parts.push('--no-driver-crashes');
  parts.push(`--schedule '${schedule.map(formatChaosEvent).join(';')}'`);
  return parts.join(' ');
}

function printFailure(r: SimResult, args: CliArgs): void {
  console.error(`\nseed ${r.seed} violated an invariant at step ${r.failedStep}: ${r.violation}`);
  if (!args.minimize) {
    console.error(`last events (replay: npm run sim -- --seed ${r.seed} --steps ${r.failedStep! + 1}):`);
    for (const line of r.trace) console.error(`  ${line}`);
    return;
  }
  const m = minimizeSeed({ seed: r.seed, chaosMs: args.chaosMs, bug: args.bug, schedule: args.schedule, driverCrashes: args.driverCrashes });
  if (m === undefined) return;
  console.error(`minimised: ${m.schedule.length} of ${m.originalEvents} chaos events${m.driverCrashes ? '' : ', no crashes inside the driver'} `
    + `still give "${m.result.violation}" (${m.runs} runs${m.complete ? '' : ', budget exhausted: shorter, not minimal'})`);
  console.error(`schedule:`);
  for (const e of m.schedule) console.error(`  ${formatChaosEvent(e)}`);
  console.error(`replay: ${replayCommand(r.seed, m.schedule, m.driverCrashes, args)}`);
  console.error(`trace of the minimised run (last ${m.result.trace.length} events):`);
  for (const line of m.result.trace) console.error(`  ${line}`);
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const opts: SimOptions = {
    seed: 0, maxSteps: args.steps, chaosMs: args.chaosMs, bug: args.bug, driverCrashes: args.driverCrashes,
    ...(args.schedule !== undefined ? { schedule: args.schedule } : {}),
  };
  if (args.seed !== undefined) {
    const r = runSeed({ ...opts, seed: args.seed, traceLength: 60 });
    console.log(summary(r));
    if (!r.ok) { printFailure(r, args); process.exit(1); }
    return;
  }
  const started = Date.now();
  let failed = 0;
  let steps = 0;
  let simMs = 0;
  for (let seed = args.startSeed; seed < args.startSeed + args.seeds; seed++) {
    const r = runSeed({ ...opts, seed, traceLength: 0 });
    steps += r.stats.steps;
    simMs += r.stats.simMs;
    if (args.verbose) console.log(summary(r));
    if (!r.ok) {
      failed++;
      console.error(`seed ${seed} FAILED at step ${r.failedStep}: ${r.violation}  (npm run sim -- --seed ${seed})`);
      if (failed <= minimizedFailuresMax && args.minimize) printFailure(runSeed({ ...opts, seed, traceLength: 60 }), args);
    }
  }
  const wallMs = Date.now() - started;
  console.log(`${args.seeds} seeds from ${args.startSeed}: ${args.seeds - failed} ok, ${failed} failed; `
    + `${steps} steps, ${(simMs / 1000).toFixed(0)} simulated s in ${(wallMs / 1000).toFixed(1)} s`);
  process.exit(failed === 0 ? 0 : 1);
}

main();
