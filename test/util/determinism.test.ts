// The state-machine rooms are deterministic (DESIGN.md §1): the Raft core, the controller, the
// coordinators and metadata take time, randomness and I/O as inputs, so that a seeded simulation
// or a scenario file replays them exactly. This scans their source, with comments and string
// literals stripped, for reads of the clock, timers, ambient randomness and async code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled to dist/test/util/; the sources stay in the tree.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const scanned = ['src/raft/core', 'src/controller', 'src/coordinator', 'src/metadata'];

const forbidden: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ['Date.now', /\bDate\s*\.\s*now\b/],
  ['new Date(', /\bnew\s+Date\s*\(/],
  ['performance.now', /\bperformance\s*\.\s*now\b/],
  ['setTimeout', /\bsetTimeout\b/],
  ['setInterval', /\bsetInterval\b/],
  ['setImmediate', /\bsetImmediate\b/],
  ['process.hrtime', /\bprocess\s*\.\s*hrtime\b/],
  ['Math.random', /\bMath\s*\.\s*random\b/],
  ['crypto.random*', /\bcrypto\s*\.\s*(random\w*|getRandomValues)\b/],
  // The same functions imported by name from node:crypto.
  ['crypto.random*', /\b(randomUUID|randomBytes|randomInt|randomFill|randomFillSync|getRandomValues)\s*\(/],
  ['await', /\bawait\b/],
  ['async', /\basync\b/],
];

/**
 * Exceptions, by file and by what they may use. The coordinators' runtimes are their drivers
 * (DESIGN.md §1: "runtime/: the only async code"): they await appends to the log and replay it on
 * load, but take the time from the injected clock and schedule through the injected scheduler, so
 * only async/await is allowed there, and nothing else.
 */
const allowed: ReadonlyArray<{ file: string; names: readonly string[]; reason: string }> = [
  { file: 'src/coordinator/runtime/runtime.ts', names: ['async', 'await'], reason: 'the shard runtime is the coordinators\' driver: loads a partition by replaying it and awaits each append before replies' },
  { file: 'src/coordinator/runtime/partition-log.ts', names: ['async', 'await'], reason: 'the CoordinatorLog port over the replica manager (produce and read are I/O)' },
  { file: 'src/coordinator/txn/markers.ts', names: ['async', 'await'], reason: 'the marker channel: sends WriteTxnMarkers (I/O) and retries through the injected scheduler' },
  { file: 'src/coordinator/txn/service.ts', names: ['async', 'await'], reason: 'request glue above the shards: InitProducerId awaits a producer-id block from the controller' },
  { file: 'src/coordinator/share/partition-manager.ts', names: ['async', 'await'], reason: 'the share-partitions\' driver: awaits the share coordinator\'s reads and writes and the log reads around the synchronous SharePartition state machine; time comes from the injected clock and scheduler' },
];

/**
 * The text with comments, string literals, template literal text and regular expression literals
 * replaced by spaces (line breaks kept, so line numbers stay). Code inside `${...}` stays.
 */
export function stripCommentsAndStrings(src: string): string {
  const out: string[] = [];
  // Open template literals and the brace depth inside each `${`.
  const templates: number[] = [];
  let depth = 0;
  let prev = ''; // last significant character of code, for telling a regex from a division
  let prevWord = '';
  const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
  let i = 0;
  const n = src.length;
  const readTemplateText = (): void => {
    // From inside a template literal to its end or the next `${`.
    const start = i;
    while (i < n) {
      const c = src[i]!;
      if (c === '\\') { i += 2; continue; }
      if (c === '`') { i++; out.push(blank(src.slice(start, i))); templates.pop(); prev = ')'; return; }
      if (c === '$' && src[i + 1] === '{') { i += 2; out.push(blank(src.slice(start, i))); depth++; templates[templates.length - 1] = depth; prev = '('; return; }
      i++;
    }
    out.push(blank(src.slice(start)));
  };
  while (i < n) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out.push(blank(src.slice(i, stop)));
      i = stop;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      out.push(blank(src.slice(i, stop)));
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      const start = i++;
      while (i < n && src[i] !== c && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
      i++;
      out.push(blank(src.slice(start, i)));
      prev = ')';
      continue;
    }
    if (c === '`') {
      out.push(' ');
      i++;
      templates.push(-1);
      readTemplateText();
      continue;
    }
    if (c === '/' && (prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev) || /^(return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/.test(prevWord))) {
      const start = i++;
      let inClass = false;
      while (i < n && src[i] !== '\n') {
        const d = src[i]!;
        if (d === '\\') { i += 2; continue; }
        if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
        i++;
      }
      i++;
      while (i < n && /[a-z]/i.test(src[i]!)) i++;
      out.push(blank(src.slice(start, i)));
      prev = ')';
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') {
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        depth--;
        out.push(' ');
        i++;
        readTemplateText();
        continue;
      }
      depth--;
    }
    out.push(c);
    if (/[A-Za-z0-9_$]/.test(c)) {
      prevWord = /[A-Za-z0-9_$]/.test(prev) ? prevWord + c : c;
      prev = c;
    } else if (!/\s/.test(c)) {
      prev = c;
      prevWord = '';
    }
    i++;
  }
  return out.join('');
}

/** `file:line what` for every forbidden use in the text, minus what `allowedNames` permits. */
export function violations(file: string, src: string, allowedNames: readonly string[] = []): string[] {
  const found: string[] = [];
  stripCommentsAndStrings(src).split('\n').forEach((line, i) => {
    const names = new Set(forbidden.filter(([name, pattern]) => !allowedNames.includes(name) && pattern.test(line)).map(([name]) => name));
    for (const name of names) found.push(`${file}:${i + 1} ${name}`);
  });
  return found;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

test('state-machine rooms read no clock, timer or ambient randomness, and have no async code', () => {
  const found: string[] = [];
  let files = 0;
  for (const dir of scanned) {
    for (const path of sourceFiles(join(root, dir))) {
      const file = relative(root, path).split('\\').join('/');
      const exception = allowed.find((a) => a.file === file);
      found.push(...violations(file, readFileSync(path, 'utf8'), exception?.names));
      files++;
    }
  }
  assert.ok(files > 30, `only ${files} files scanned under ${root}`);
  assert.deepEqual(found, []);
});

test('every allow-list entry names a file that exists and still needs it', () => {
  for (const a of allowed) {
    const src = readFileSync(join(root, a.file), 'utf8');
    assert.ok(a.reason.length > 0);
    assert.notDeepEqual(violations(a.file, src), [], `${a.file} no longer needs its exception`);
  }
});

test('the scan finds a planted violation and ignores comments, strings and regular expressions', () => {
  const planted = [
    'export function f(nowMs: number): number {',
    '  // Date.now() is not called here; the caller passes nowMs. setTimeout too.',
    "  const s = 'Math.random() ' + \"await\" + `async ${nowMs} setInterval`;",
    '  const r = /Date\\.now/.test(s) ? 1 / 2 : 2 / 1;',
    '  /* performance.now() */',
    '  return nowMs + r + s.length;',
    '}',
  ].join('\n');
  assert.deepEqual(violations('clean.ts', planted), []);
  assert.deepEqual(violations('a.ts', 'const t = Date.now();'), ['a.ts:1 Date.now']);
  assert.deepEqual(violations('b.ts', 'x\nconst t = `${Math.random()}`;'), ['b.ts:2 Math.random']);
  assert.deepEqual(violations('c.ts', 'async function g() { await h(); }'), ['c.ts:1 await', 'c.ts:1 async']);
  assert.deepEqual(violations('d.ts', "import { randomUUID } from 'node:crypto';\nconst id = randomUUID();"), ['d.ts:2 crypto.random*']);
  assert.deepEqual(violations('e.ts', 'const d = new Date(0); setImmediate(f); process.hrtime.bigint();'),
    ['e.ts:1 new Date(', 'e.ts:1 setImmediate', 'e.ts:1 process.hrtime']);
  assert.deepEqual(violations('f.ts', 'const ms = crypto.randomInt(3);'), ['f.ts:1 crypto.random*']);
});
