// Java .properties text, read by the rules of java.util.Properties.load: comment lines start with
// '#' or '!', a key ends at the first unescaped '=', ':' or whitespace, a line ending in an odd
// number of backslashes continues on the next (whose leading whitespace is dropped), and \t \n \r
// \f \uXXXX escapes are decoded. Values keep trailing whitespace, as in Java; typed parsing trims.
import { ConfigError } from './types.js';

const WHITESPACE = new Set([' ', '\t', '\f']);

/** Splits text into logical lines: continuations joined, comments and blank lines dropped. */
function logicalLines(text: string): string[] {
  const physical = text.split(/\r\n|\r|\n/);
  const out: string[] = [];
  let pending: string | null = null;
  for (const raw of physical) {
    let line = raw;
    let i = 0;
    while (i < line.length && WHITESPACE.has(line[i]!)) i++;
    line = line.slice(i);
    if (pending === null && (line === '' || line[0] === '#' || line[0] === '!')) continue;
    let slashes = 0;
    for (let j = line.length - 1; j >= 0 && line[j] === '\\'; j--) slashes++;
    const continues = slashes % 2 === 1;
    const body = continues ? line.slice(0, -1) : line;
    pending = pending === null ? body : pending + body;
    if (!continues) { out.push(pending); pending = null; }
  }
  if (pending !== null) out.push(pending);
  return out;
}

function unescape(s: string, lineNo: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') { out += c; continue; }
    const n = s[++i];
    if (n === undefined) break;
    if (n === 'u') {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new ConfigError(`Malformed \\uxxxx escape in properties line ${JSON.stringify(lineNo)}`, lineNo);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else {
      out += n === 't' ? '\t' : n === 'n' ? '\n' : n === 'r' ? '\r' : n === 'f' ? '\f' : n;
    }
  }
  return out;
}

function splitLine(line: string): [string, string] {
  let i = 0;
  let escaped = false;
  for (; i < line.length; i++) {
    const c = line[i]!;
    if (escaped) { escaped = false; continue; }
    if (c === '\\') { escaped = true; continue; }
    if (c === '=' || c === ':' || WHITESPACE.has(c)) break;
  }
  const key = line.slice(0, i);
  let j = i;
  while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  if (j < line.length && (line[j] === '=' || line[j] === ':')) j++;
  while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  return [key, line.slice(j)];
}

/** Parses properties text; a repeated key keeps its last value, as Java does. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of logicalLines(text)) {
    const [k, v] = splitLine(line);
    out.set(unescape(k, line), unescape(v, line));
  }
  return out;
}

function escape(s: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const code = c.charCodeAt(0);
    if (c === '\\') out += '\\\\';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if (c === ' ' && (isKey || i === 0)) out += '\\ ';
    else if ('=:#!'.includes(c) && (isKey || i === 0)) out += '\\' + c;
    else if (code < 0x20 || code > 0x7e) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += c;
  }
  return out;
}

/** Writes properties text that parseProperties (and Java) reads back to the same map. */
export function serializeProperties(props: ReadonlyMap<string, string> | Readonly<Record<string, string>>): string {
  const entries = props instanceof Map ? [...props] : Object.entries(props);
  return entries.map(([k, v]) => `${escape(k, true)}=${escape(v, false)}\n`).join('');
}
