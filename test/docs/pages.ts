// The documentation as the doc tests read it: README.md and docs/*.md, the sections of them marked
// for a test to run, and the commands in them with the output each page shows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Page { path: string; text: string }

/** README.md, then every docs/*.md, by path from the repository root. */
export function docPages(): Page[] {
  const docs = existsSync('docs') ? readdirSync('docs').filter((n) => n.endsWith('.md')).sort().map((n) => join('docs', n)) : [];
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(path, 'utf8') }));
}

export interface Step { command: string; expected: string }

export interface Section {
  page: string;
  /** The nearest heading above the section's begin marker. */
  heading: string;
  /** Its ```sh blocks, joined. */
  setup: string;
  /** Each `$ command` of its ```console blocks, with the lines shown under it. */
  steps: Step[];
}

/** The `$ command` lines of ```console blocks in `text`, each with the output shown under it. */
export function consoleSteps(text: string): Step[] {
  const steps: Step[] = [];
  for (const b of text.matchAll(/```console\n([\s\S]*?)```/g)) {
    for (const line of b[1]!.split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: '' });
      else if (steps.length > 0 && (line !== '' || steps.at(-1)!.expected !== '')) steps.at(-1)!.expected += `${line}\n`;
    }
  }
  return steps;
}

/** Every section between `<!-- NAME: begin ... -->` and `<!-- NAME: end -->`, each marker on a line of its own, in the pages. */
export function markedSections(name: string, pages: Page[] = docPages()): Section[] {
  const out: Section[] = [];
  for (const { path, text } of pages) {
    const begins = [...text.matchAll(new RegExp(`^<!-- ${name}: begin.*-->$`, 'gm'))];
    const ends = [...text.matchAll(new RegExp(`^<!-- ${name}: end -->$`, 'gm'))];
    if (begins.length !== ends.length) throw new Error(`${path}: ${begins.length} ${name} begin markers, ${ends.length} end markers`);
    begins.forEach((b, i) => {
      const begin = b.index!;
      const end = ends[i]!.index!;
      if (end < begin || (i + 1 < begins.length && begins[i + 1]!.index! < end)) throw new Error(`${path}: ${name} markers out of order`);
      const section = text.slice(begin, end);
      // Headings outside code blocks (where `# ...` is a shell comment).
      const headings = [...text.slice(0, begin).replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').matchAll(/^#+ (.*)$/gm)];
      out.push({
        page: path, heading: headings.at(-1)?.[1] ?? path,
        setup: [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).join('\n'),
        steps: consoleSteps(section),
      });
    });
  }
  return out;
}

/**
 * Output as compared: runs of spaces collapsed (column widths follow the content), the topic id
 * left out, and the ISR and OFFLINE columns of a partition table sorted.
 */
export function normalize(text: string): string {
  let sortedColumns: number[] = [];
  return text.trim().split('\n').map((line) => {
    const tokens = line.trim().split(/\s+/);
    if (tokens.includes('PARTITION') && tokens.includes('ISR')) {
      sortedColumns = ['ISR', 'OFFLINE'].map((c) => tokens.indexOf(c)).filter((i) => i >= 0);
      return tokens.join(' ');
    }
    if (line.trim() === '') { sortedColumns = []; return ''; }
    for (const i of sortedColumns) {
      if (tokens[i] !== undefined && /^\d+(,\d+)*$/.test(tokens[i]!)) tokens[i] = tokens[i]!.split(',').map(Number).sort((a, b) => a - b).join(',');
    }
    return tokens.join(' ').replace(/^topic (\S+) id \S+$/, 'topic $1 id <id>');
  }).join('\n');
}
