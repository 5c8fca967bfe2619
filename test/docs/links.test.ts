// The documentation hangs together: every relative link in README.md and docs/*.md points at a file
// or folder of the repository, and a link to a heading (`page.md#heading`, `#heading`) at a heading
// that page has (GitHub's anchors). And the repository stands on its own: no file outside test/
// sends a reader to `../shared` (files beside the checkout that are not part of the project).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { docPages } from './pages.js';

/**
 * Pages another change adds: a link to one of them is reported while it is missing, not failed
 * (docs/architecture.md is written on another branch).
 */
const PENDING_PAGES = new Set(['docs/architecture.md']);

/** GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped, spaces to '-'. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings (outside code blocks), repeated ones numbered as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of withoutCode(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The text without fenced code blocks (a `#` there is a shell comment, a `[x](y)` is code). */
function withoutCode(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** Every link and image target of a Markdown text, outside code blocks. */
function linksOf(text: string): string[] {
  return [...withoutCode(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

test('every relative link in README.md and docs/*.md points at an existing file, and at an existing heading', (t) => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of docPages()) {
    for (const target of linksOf(page.text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;   // http:, https:, mailto:
      checked++;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const file = pathPart === '' ? page.path : normalize(join(dirname(page.path), decodeURIComponent(pathPart)));
      if (!existsSync(file)) {
        if (PENDING_PAGES.has(file)) t.diagnostic(`${page.path}: ${target} is not here yet (another change adds it)`);
        else problems.push(`${page.path}: ${target}: no such file ${file}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(file).isDirectory() || !file.endsWith('.md')) {
        problems.push(`${page.path}: ${target}: an anchor into ${file}, which is not a Markdown page`);
      } else if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
        problems.push(`${page.path}: ${target}: ${file} has no heading #${anchor}`);
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} relative links found`);
  assert.deepEqual(problems, []);
});

/** Every file of the repository outside test/ (and outside what is built or installed). */
function projectFiles(dir = '.'): string[] {
  const skip = new Set(['.git', 'node_modules', 'dist', 'build', 'test', 'test-artifacts', 'logline-data']);
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (dir === '.' && skip.has(name)) continue;
    if (name === 'node_modules') continue;
    const path = dir === '.' ? name : join(dir, name);
    const s = statSync(path);
    if (s.isDirectory()) out.push(...projectFiles(path));
    else if (s.isFile()) out.push(path);
  }
  return out;
}

test('no file outside test/ refers to ../shared', () => {
  const files = projectFiles();
  assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('src/')), files.slice(0, 5).join(','));
  const referring = files.filter((f) => readFileSync(f).includes('../shared'));
  assert.deepEqual(referring, []);
});
