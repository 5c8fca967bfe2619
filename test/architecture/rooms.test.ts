// The rooms of src/ and their doors, as docs/architecture.md describes them: a room is a top-level
// folder of src/ (its sub-folders, such as src/raft/core or src/coordinator/group, are parts of it,
// not rooms: they have no doors and the room's files import them directly); its `index.ts` is its
// door. Checked from the import statements of every src/**/*.ts file:
//   1. an import that leaves a room goes to another room's door;
//   2. a room imports only rooms listed before it in LAYERS (the order of docs/architecture.md's
//      table, lowest first): no upward import;
//   3. no file-level import cycle anywhere in src, `import type` included.
// The package door, src/index.ts, counts as a unit of its own (`index`), between node and cli.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Lowest first: a room may import only rooms listed before it. */
export const LAYERS: readonly string[] = [
  'util', 'config', 'protocol', 'records', 'storage', 'tiered', 'raft', 'metadata', 'controller', 'replication', 'coordinator',
  'security', 'client', 'verify', 'network', 'broker', 'registry', 'mirror', 'link', 'http', 'node', 'index', 'cli',
];

/**
 * Imports allowed to break rule 1 or 2, each with its reason. None today; an entry that no import
 * needs any more fails the test, so the list cannot outlive its reasons.
 */
const EXCEPTIONS: readonly { from: string; to: string; why: string }[] = [];

/** Parts of a room that stay below the rest of it: they import nothing from their room outside themselves. */
const ROOM_CORES: readonly { part: string; why: string }[] = [
  { part: 'raft/core', why: 'the pure Raft state machine: no driver, store, transport or simulator' },
  { part: 'coordinator/runtime', why: 'the coordinator runtime knows no group or transaction state' },
  { part: 'verify/check', why: 'the checker is a pure function of a history: no client, no clock, no processes' },
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const src = join(root, 'src');

interface Edge { from: string; to: string; specifier: string }

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `import ... from '...'`, `export ... from '...'`, `import '...'` and `import('...')` (type positions too). */
const IMPORT_RE = /\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

function edgesOf(file: string): Edge[] {
  const text = readFileSync(file, 'utf8');
  const edges: Edge[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const specifier = m[1] ?? m[2]!;
    if (!specifier.startsWith('.')) continue;
    const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
    assert.ok(existsSync(target), `${rel(file)} imports ${specifier}, which is no file in src (the import regex needs a look)`);
    edges.push({ from: rel(file), to: rel(target), specifier });
  }
  return edges;
}

/** Path relative to src/, with forward slashes. */
function rel(path: string): string {
  return relative(src, path).split(sep).join('/');
}

/** The room of a file: its top-level folder, or `index` for the package door. */
function roomOf(file: string): string {
  const slash = file.indexOf('/');
  return slash < 0 ? file.replace(/\.ts$/, '') : file.slice(0, slash);
}

const isDoor = (file: string): boolean => file === 'index.ts' || /^[^/]+\/index\.ts$/.test(file);
const excepted = (e: Edge): boolean => EXCEPTIONS.some((x) => x.from === e.from && x.to === e.to);

const files = sourceFiles(src);
const edges = files.flatMap(edgesOf);
const crossing = edges.filter((e) => roomOf(e.from) !== roomOf(e.to));

test('every folder of src is a room in LAYERS with a door, and every room in LAYERS exists', () => {
  const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory()).sort();
  assert.deepEqual(folders.filter((f) => !LAYERS.includes(f)), [], 'rooms missing from LAYERS (and from docs/architecture.md)');
  assert.deepEqual(LAYERS.filter((r) => r !== 'index' && !folders.includes(r)), [], 'LAYERS names rooms that do not exist');
  assert.deepEqual(folders.filter((f) => !existsSync(join(src, f, 'index.ts'))), [], 'rooms without a door (index.ts)');
});

test('an import that leaves its room goes to the other room\'s door (index.ts)', () => {
  const through = crossing.filter((e) => !isDoor(e.to) && !excepted(e)).map((e) => `${e.from} -> ${e.to}`);
  assert.deepEqual(through, [], 'import the room\'s index.ts instead, and export what is needed there');
});

test('a room imports only rooms listed before it in LAYERS: no import runs up the layers', () => {
  const upward = crossing.filter((e) => LAYERS.indexOf(roomOf(e.to)) >= LAYERS.indexOf(roomOf(e.from)) && !excepted(e))
    .map((e) => `${e.from} (${roomOf(e.from)}) -> ${e.to} (${roomOf(e.to)})`);
  assert.deepEqual(upward, [], `imports that run up the order ${LAYERS.join(' < ')}`);
});

test('the node room is imported only by the CLI and the package door', () => {
  const importers = [...new Set(crossing.filter((e) => roomOf(e.to) === 'node').map((e) => roomOf(e.from)))].sort();
  assert.deepEqual(importers.filter((r) => r !== 'cli' && r !== 'index'), []);
});

test('the cores of rooms import nothing else from their room', () => {
  for (const { part, why } of ROOM_CORES) {
    const room = part.slice(0, part.indexOf('/'));
    const out = edges.filter((e) => e.from.startsWith(`${part}/`) && roomOf(e.to) === room && !e.to.startsWith(`${part}/`));
    assert.deepEqual(out.map((e) => `${e.from} -> ${e.to}`), [], `${part}: ${why}`);
  }
});

test('no file-level import cycle in src (import type included)', () => {
  const next = new Map<string, string[]>(files.map((f) => [rel(f), []]));
  for (const e of edges) next.get(e.from)!.push(e.to);
  // Tarjan's strongly connected components: a component of more than one file is a cycle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || next.get(v)!.includes(v)) cycles.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  assert.deepEqual(cycles, []);
});

test('every exception is still needed', () => {
  const unused = EXCEPTIONS.filter((x) => !edges.some((e) => e.from === x.from && e.to === x.to));
  assert.deepEqual(unused, []);
});

test('docs/architecture.md lists the rooms in the order of LAYERS', () => {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  // The layer table's rows: "| `src/util/` | ..." and "| `src/index.ts` | ..." for the package door.
  const rows = [...doc.matchAll(/^\|\s*`src\/([a-z-]+)(?:\/|\.ts)`\s*\|/gm)].map((m) => m[1]!);
  assert.deepEqual(rows, LAYERS);
});
