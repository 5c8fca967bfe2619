// Builds the project's one native addon, build/crc32c.node (src/records/native/crc32c.c), with the
// system's C compiler against Node's own Node-API headers. Run by `npm ci`/`npm install` (the
// `prepare` script). It never fails the install: without a compiler, headers or an x86-64 CPU,
// src/records/crc32c.ts uses @node-rs/crc32 instead, and this says so.
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src/records/native/crc32c.c');
const output = join(root, 'build/crc32c.node');

function skip(reason) {
  console.warn(`build-native: not building build/crc32c.node (${reason}); CRC32C falls back to @node-rs/crc32`);
  process.exit(0);
}

// Up to date: nothing to do (the test script runs this too).
if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs && !process.argv.includes('--force')) process.exit(0);

if (process.arch !== 'x64') skip(`the addon's fast path is x86-64 only; this is ${process.arch}`);
if (process.platform === 'win32') skip('no build recipe for Windows');

// Where node-gyp would look: npm's configured nodedir, then the include dir beside the node binary.
const candidates = [
  process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include/node'),
  resolve(dirname(process.execPath), '../include/node'),
  '/usr/include/node',
  '/usr/local/include/node',
].filter(Boolean);
const headers = candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
if (headers === undefined) skip(`node_api.h not found in ${candidates.join(', ')}`);

const compiler = process.env.CC || 'cc';
mkdirSync(dirname(output), { recursive: true });
const partial = `${output}.${process.pid}.tmp`;
const flags = ['-O2', '-fPIC', '-shared', '-std=c11', '-Wall', '-Wextra', '-DNODE_GYP_MODULE_NAME=logline_crc32c', `-I${headers}`];
// macOS resolves Node-API symbols from the host process only when told to.
if (process.platform === 'darwin') flags.push('-undefined', 'dynamic_lookup');
const result = spawnSync(compiler, [...flags, source, '-o', partial], { stdio: ['ignore', 'inherit', 'inherit'] });
if (result.error !== undefined || result.status !== 0) {
  rmSync(partial, { force: true });
  skip(`${compiler} failed: ${result.error?.message ?? `exit ${result.status}`}`);
}
renameSync(partial, output); // whole or not at all: a half-written .node would fail to load
console.log(`build-native: built build/crc32c.node with ${compiler} (headers ${headers})`);
