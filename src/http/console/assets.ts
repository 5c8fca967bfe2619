// The web console's static files: hand-written HTML, CSS and browser JavaScript (no framework, no
// build step, nothing fetched from outside), shipped in the package next to this module's source
// and read once into memory. The console is a single page; its views live behind #/ routes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

/** Only our own files, scripts and styles; the console's data comes from /v1 on the same origin. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Compiled, this module runs from dist/src/http/console/; the files stay in src/http/console/.
const DIRS = [new URL('./', import.meta.url), new URL('../../../../src/http/console/', import.meta.url)];

const cache = new Map<string, Buffer>();

function load(name: string): Buffer | null {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  for (const dir of DIRS) {
    try {
      const bytes = readFileSync(fileURLToPath(new URL(name, dir)));
      cache.set(name, bytes);
      return bytes;
    } catch { /* the next place */ }
  }
  return null;
}

export function consoleAsset(name: string): { status: number; text: Buffer | string; contentType: string; headers?: Record<string, string> } | { status: number; json: unknown } {
  const type = TYPES[name];
  const bytes = type === undefined ? null : load(name);
  if (type === undefined || bytes === null) return { status: 404, json: { error: 'not found', detail: `/console/${name}` } };
  return { status: 200, text: bytes, contentType: type, headers: { 'content-security-policy': CSP } };
}
