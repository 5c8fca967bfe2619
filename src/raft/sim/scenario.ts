// Scenario files (etcd/raft's datadriven habit): a small text file of commands, each followed by
// `----` and the output it gave, replayed against the real core through the simulator's scripted
// mode (sim.ts: the same stores, driver steps and invariant checks as the random runs, with every
// choice made by a command). Nothing in a scenario depends on a random stream, so it replays the
// same events however the random runs' choices change; the output changes only when behaviour
// does, and then `rewriteScenario` writes the new output under the same commands.
//
//   # a comment (kept)
//   cluster voters=3
//   ----
//   n1 unattached e0 ...
//
//   tick 1000
//   ----
//   t=1000 tick n1 (unattached e0)
//   n1: prospective e0 ...
//
// Commands (node ids are numbers; `x` counts; the grammar is in README.md):
//   cluster voters=N [observers=N] [timeouts=1|0.2|0.05] [random=r1,r2,...]
//   tick MS                 time moves MS on; nodes tick at their deadlines; messages stay queued
//   run MS                  the same with every message delivered at once (a healthy network)
//   deliver [from=A] [to=B] [type=PREFIX] [count=N]   deliver queued messages, in send order
//   drop    [from=A] [to=B] [type=PREFIX] [count=N]   lose them instead
//   stabilize               deliver until nothing is queued (time stands still)
//   propose N [xK]          K values (v0, v1, ... in proposal order) proposed on node N
//   crash N [keep=K]        node N dies, its log keeps K of its unsynced operations (default 0)
//   restart N               node N starts from what it stored
//   partition A B|C         A and B can talk to each other, not to C (`partition` alone: none)
//   block A>B               messages from A to B are lost; `heal` ends partitions and blocks
//   snapshot N              node N snapshots what it applied
//   resign                  the leader resigns
//   add-voter N / remove-voter N   asked of the current leader (KIP-853)
//   status                  every node's state; `queue` the messages waiting
// After each command other than `status` and `queue`, the nodes whose state changed are printed
// as `nX: <state>`. `run` prints only those and lines other than ticks and message deliveries
// (delivered, refused by a node that is down, lost to a partition). A broken
// invariant prints `violation: ...` and ends the scenario (the commands after it are kept, with no
// output).
import { Simulation, type MessageFilter, type ScriptCommand, type ScriptSetup } from './sim.js';

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

interface Block {
  /** Comment and blank lines before the command, kept as they are. */
  readonly preamble: string[];
  readonly command: string;
  readonly output: string[];
}

/** Splits a scenario file into its blocks. */
export function parseScenario(text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let preamble: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '' || line.startsWith('#')) {
      preamble.push(line);
      continue;
    }
    if (lines[i + 1] !== '----') throw new ScenarioError(`line ${i + 1}: "${line}" must be followed by a ---- line`);
    const output: string[] = [];
    let j = i + 2;
    for (; j < lines.length && lines[j] !== ''; j++) output.push(lines[j]!);
    blocks.push({ preamble, command: line.trim(), output });
    preamble = [];
    i = j - 1;
  }
  // Trailing comments and blank lines belong to no command; they are dropped on rewrite except
  // comments, which are kept at the end.
  if (preamble.some((l) => l.startsWith('#'))) blocks.push({ preamble, command: '', output: [] });
  return blocks;
}

/** The file's text with each command's output replaced by what the commands give now. */
export function rewriteScenario(text: string): string {
  const blocks = parseScenario(text);
  const outputs = runScenario(blocks);
  const out: string[] = [];
  blocks.forEach((b, i) => {
    // One blank line between blocks; blank lines inside a run of comments stay.
    const preamble = [...b.preamble];
    while (preamble.length > 0 && preamble[0]!.trim() === '') preamble.shift();
    if (out.length > 0 && out[out.length - 1] !== '') out.push('');
    out.push(...preamble);
    if (b.command === '') return;
    out.push(b.command, '----', ...outputs[i]!, '');
  });
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n`;
}

/** Runs the blocks' commands; the output of each, in order. */
export function runScenario(blocks: readonly Block[]): string[][] {
  let sim: Simulation | undefined;
  let broken = false;
  const outputs: string[][] = [];
  for (const b of blocks) {
    if (b.command === '') { outputs.push([]); continue; }
    if (broken) { outputs.push(['(not run: an invariant broke above)']); continue; }
    const [verb, ...args] = b.command.split(/\s+/);
    if (verb === 'cluster') {
      if (sim !== undefined) throw new ScenarioError('cluster comes once, first');
      sim = new Simulation({ seed: 0, script: parseCluster(args) });
      outputs.push(sim.scriptNodes());
      continue;
    }
    if (sim === undefined) throw new ScenarioError(`"${b.command}" before cluster`);
    if (verb === 'status') { outputs.push(sim.scriptNodes()); continue; }
    if (verb === 'queue') { const q = sim.scriptQueue(); outputs.push(q.length === 0 ? ['(empty)'] : q); continue; }
    const before = sim.scriptNodes();
    const r = sim.scriptRun(parseCommand(verb!, args, b.command));
    const after = sim.scriptNodes();
    const lines = verb === 'run' ? r.lines.filter((l) => !/^(t=\d+ tick|deliver|refused|lost) /.test(l)) : r.lines;
    const changed = after.filter((l, i) => l !== before[i]).map((l) => l.replace(/^(n\d+) /, '$1: '));
    const out = [...lines, ...changed];
    if (r.violation !== undefined) {
      out.push(`violation: ${r.violation}`);
      broken = true;
    }
    outputs.push(out.length === 0 ? ['ok'] : out);
  }
  return outputs;
}

/**
 * Compares a scenario's recorded output with what it gives now: undefined when they agree, else a
 * description of the first difference.
 */
export function checkScenario(text: string): string | undefined {
  const blocks = parseScenario(text);
  const outputs = runScenario(blocks);
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.command === '') continue;
    const want = b.output.join('\n');
    const got = outputs[i]!.join('\n');
    if (want !== got) return `after "${b.command}":\n--- expected\n${want}\n--- got\n${got}`;
  }
  return undefined;
}

function parseCluster(args: readonly string[]): ScriptSetup {
  const kv = keyValues(args, 'cluster');
  const voters = int(kv.get('voters') ?? '3', 'voters');
  const observers = int(kv.get('observers') ?? '0', 'observers');
  const timeoutScale = Number(kv.get('timeouts') ?? '1');
  if (![1, 0.2, 0.05].includes(timeoutScale)) throw new ScenarioError('timeouts= is 1, 0.2 or 0.05');
  const random = (kv.get('random') ?? '').split(',').filter((r) => r !== '').map(Number);
  if (random.some((r) => !(r >= 0 && r < 1))) throw new ScenarioError('random= values are in [0, 1)');
  return { voters, observers, timeoutScale, random };
}

function parseCommand(verb: string, args: readonly string[], line: string): ScriptCommand {
  const atMs = 0;
  const node = (): number => int(args[0] ?? '', `${verb}'s node`);
  switch (verb) {
    case 'tick':
    case 'run': return { kind: 'tick', ms: int(args[0] ?? '', `${verb}'s milliseconds`), deliver: verb === 'run' };
    case 'deliver':
    case 'drop': return { kind: 'deliver', filter: parseFilter(args, line), drop: verb === 'drop' };
    case 'stabilize': return { kind: 'stabilize' };
    case 'propose': {
      const count = args[1] === undefined ? 1 : int(args[1].replace(/^x/, ''), 'propose count');
      return { atMs, kind: 'propose', node: node(), count };
    }
    case 'crash': {
      const keep = keyValues(args.slice(1), line).get('keep');
      return { atMs, kind: 'crash', node: node(), keep: keep === undefined ? 0 : int(keep, 'keep'), restartAfterMs: undefined };
    }
    case 'restart': return { atMs, kind: 'restart', node: node() };
    case 'partition': {
      const sides = args.join(' ').split('|');
      if (args.length > 0 && sides.length !== 2) throw new ScenarioError(`"${line}": partition A B|C`);
      return { atMs, kind: 'partition', side: args.length === 0 ? [] : sides[0]!.trim().split(/\s+/).map((n) => int(n, 'node')) };
    }
    case 'block': {
      const m = /^(\d+)>(\d+)$/.exec(args[0] ?? '');
      if (m === null) throw new ScenarioError(`"${line}": block A>B`);
      return { atMs, kind: 'block', from: Number(m[1]), to: Number(m[2]) };
    }
    case 'heal': return { atMs, kind: 'heal-network' };
    case 'snapshot': return { atMs, kind: 'snapshot', node: node() };
    case 'resign': return { atMs, kind: 'resign' };
    case 'add-voter':
    case 'remove-voter': return { atMs, kind: verb, node: node() };
    default: throw new ScenarioError(`unknown command "${line}"`);
  }
}

function parseFilter(args: readonly string[], line: string): MessageFilter {
  const kv = keyValues(args, line);
  const num = (k: string): number | undefined => (kv.has(k) ? int(kv.get(k)!, k) : undefined);
  return { from: num('from'), to: num('to'), type: kv.get('type'), count: num('count') };
}

function keyValues(args: readonly string[], line: string): Map<string, string> {
  const kv = new Map<string, string>();
  for (const a of args) {
    const m = /^([a-z]+)=(.+)$/.exec(a);
    if (m === null) throw new ScenarioError(`"${line}": expected key=value, got "${a}"`);
    kv.set(m[1]!, m[2]!);
  }
  return kv;
}

function int(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new ScenarioError(`${what} must be a non-negative integer, got "${text}"`);
  return n;
}
