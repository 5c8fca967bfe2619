// Help tables as a user reads them in a terminal: `logline --help` lists the commands and every
// `logline <noun> [verb] --help` its options, each name then its text in one column, with no name
// running into its text ("transactionslist, describe ..." was issue 30).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runProcess } from '../broker/process-helpers.js';
import { main } from '../../src/cli/index.js';

const cli = (args: string[]) => runProcess(process.execPath, ['bin/logline.js', ...args], null, 30_000, { LOGLINE_BOOTSTRAP_SERVERS: '' });

/** `logline ...args` in this process (one CLI load for the dozens of helps), its exit code and what it printed. */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => { out.push(a.join(' ')); };
  console.error = (...a: unknown[]) => { err.push(a.join(' ')); };
  try {
    return { code: await main(args), stdout: out.join('\n') + '\n', stderr: err.join('\n') };
  } finally {
    Object.assign(console, { log, error });
  }
}

/** A table's rows: the lines after `heading` up to a blank line. */
function tableRows(help: string, heading: string): string[] {
  const lines = help.split('\n');
  const at = lines.indexOf(heading);
  if (at < 0) return [];
  const end = lines.indexOf('', at);
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

/**
 * Each row as [name, text]: the name (words with single spaces, indented), two or more spaces,
 * then the text, which starts in the same column on every row. Asserts the layout.
 */
function columns(help: string, heading: string, what: string): [string, string][] {
  const rows = tableRows(help, heading);
  assert.ok(rows.length > 0, `${what}: a "${heading}" table`);
  const parsed = rows.map((row) => {
    const m = /^( {2} *\S+(?: \S+)*) {2,}(\S.*)$/.exec(row);
    assert.ok(m, `${what}: the name runs into its text in ${JSON.stringify(row)}`);
    return { name: m[1]!.trim(), text: m[2]!, column: row.length - m[2]!.length };
  });
  assert.equal(new Set(parsed.map((r) => r.column)).size, 1, `${what}: texts start in one column:\n${rows.join('\n')}`);
  return parsed.map((r) => [r.name, r.text]);
}

test('logline --help and every noun\'s and verb\'s --help: each name is followed by its text in one column, never run into it', { timeout: 120_000 }, async () => {
  const top = await cli(['--help']);
  assert.equal(top.code, 0, top.stderr);
  const nouns = columns(top.stdout, 'commands:', 'logline --help').map(([name]) => name);
  for (const noun of ['server', 'topic', 'transactions', 'cluster', 'version']) assert.ok(nouns.includes(noun), `${noun} is listed`);
  for (const name of nouns) assert.match(name, /^[a-z][a-z-]*$/, 'a command name, alone');

  const verbs: string[][] = [];
  for (const noun of nouns.filter((n) => n !== 'version')) {
    const r = await inProcess([noun, '--help']);
    assert.equal(r.code, 0, `${noun} --help: ${r.stderr}`);
    for (const [name, text] of columns(r.stdout, 'options:', `logline ${noun} --help`)) {
      assert.match(name, /^(-[a-zA-Z], )?--[a-z-]+( X)?$/, `${noun}: option ${name}`);
      assert.doesNotMatch(text, /\(repeatable\).*\(repeatable\)/, `${noun}: ${name} says it once`);
    }
    // The verbs its usage line names (`<list|describe>` or `info|status`), each of which may have a help of its own.
    const listed = new RegExp(`^usage: logline ${noun} <?([a-z][a-z|-]*)>?`, 'm').exec(r.stdout)?.[1];
    for (const verb of listed?.split('|') ?? []) verbs.push([noun, verb]);
  }
  // Verbs whose help is their own and is only named in the noun's summary.
  verbs.push(['cluster', 'start'], ['cluster', 'elect-leaders']);
  assert.ok(verbs.length > 20, `${verbs.length} verbs`);
  for (const [noun, verb] of verbs) {
    const r = await inProcess([noun!, verb!, '--help']);
    assert.equal(r.code, 0, `${noun} ${verb} --help: ${r.stderr}`);
    columns(r.stdout, 'options:', `logline ${noun} ${verb} --help`);
  }
});
