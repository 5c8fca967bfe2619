// Builds the project's native addons with the system's C compiler against Node's own headers
// (Node-API, and the OpenSSL inside Node, whose symbols the node binary exports):
// - build/crc32c.node (src/records/native/crc32c.c): without it src/records/crc32c.ts uses
//   @node-rs/crc32 (and on CPUs other than x86-64 it is not built);
// - build/tls-session.node (src/security/native/tls-session.c): without it TLS listeners use
//   node:tls (src/security/native-tls.ts).
// Run by `npm ci`/`npm install` (the `prepare` script) and by `npm test`. It never fails the
// install: an addon that cannot be built is left out, and this says so.
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
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

// Where node-gyp would look: npm's configured nodedir, then the include dir beside the node binary.
const candidates = [
  process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include/node'),
  resolve(dirname(process.execPath), '../include/node'),
  '/usr/include/node',
  '/usr/local/include/node',
].filter(Boolean);
const headers = candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
const compiler = process.env.CC || 'cc';

for (const addon of addons) {
  const source = join(root, addon.source);
  const output = join(root, `build/${addon.name}.node`);
  const skip = (reason) => console.warn(`build-native: not building build/${addon.name}.node (${reason}); ${addon.fallback}`);
  // Up to date: nothing to do (the test script runs this too).
  if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs && !process.argv.includes('--force')) continue;
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
  console.log(`build-native: built build/${addon.name}.node with ${compiler} (headers ${headers})`);
}
