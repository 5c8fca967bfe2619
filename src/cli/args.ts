// A small argument parser for `logline <noun> <verb> [--flag value] [--flag=value] [--bool] [-b value]`.
// Repeatable flags collect into arrays. Any argument that looks like an option but is not one is
// refused (a typo must not become a positional and send the command somewhere else); `--` ends the
// options. Usage errors throw UsageError (exit code 2).

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface FlagSpec {
  type: 'string' | 'boolean' | 'number';
  repeatable?: boolean;
  /** A one-letter form, e.g. 'b' for `-b host:port` (as kcat spells it). */
  short?: string;
  help: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | number | string[]>;
}

/** The long name of the flag `arg` names with its inline value, or a UsageError. */
function resolve(arg: string, specs: Record<string, FlagSpec>): { name: string; spec: FlagSpec; shown: string; inline: string | undefined } {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (!spec) throw new UsageError(`unknown option --${name}`);
    return { name, spec, shown: `--${name}`, inline: eq < 0 ? undefined : arg.slice(eq + 1) };
  }
  // `-b value`, `-bvalue` or `-b=value` (getopt's forms, which kcat users type).
  const letter = arg[1]!;
  const name = Object.keys(specs).find((n) => specs[n]!.short === letter);
  if (name === undefined) throw new UsageError(`unknown option -${letter}`);
  const spec = specs[name]!;
  const rest = arg.slice(2);
  if (spec.type === 'boolean' && rest !== '') throw new UsageError(`unknown option ${arg} (-${letter} takes no value)`);
  return { name, spec, shown: `-${letter}`, inline: rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest };
}

export function parseArgs(argv: string[], specs: Record<string, FlagSpec>): ParsedArgs {
  const positionals: string[] = [];
  const flags: ParsedArgs['flags'] = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') { positionals.push(...argv.slice(i + 1)); break; }
    if (!arg.startsWith('-') || arg === '-') { positionals.push(arg); continue; }
    const { name, spec, shown, inline } = resolve(arg, specs);
    let value = inline;
    if (spec.type === 'boolean') {
      flags[name] = value === undefined ? true : value !== 'false';
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`${shown} needs a value`);
    }
    if (spec.type === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new UsageError(`${shown}: "${value}" is not a number`);
      flags[name] = n;
    } else if (spec.repeatable) {
      ((flags[name] ??= []) as string[]).push(value);
    } else {
      flags[name] = value;
    }
  }
  return { positionals, flags };
}

/**
 * A help table: each name, then its text in a column that starts two spaces after the longest
 * name, so no name runs into its text.
 */
export function helpColumns(rows: readonly (readonly [name: string, text: string])[]): string[] {
  const width = Math.max(0, ...rows.map(([name]) => name.length)) + 2;
  return rows.map(([name, text]) => `  ${name.padEnd(width)}${text}`);
}

export function helpText(usage: string, summary: string, specs: Record<string, FlagSpec>): string {
  const lines = [`usage: ${usage}`, '', summary, ''];
  const names = Object.keys(specs);
  if (names.length) {
    lines.push('options:');
    // Long names line up whether or not an option also has a short form.
    const shortColumn = names.some((n) => specs[n]!.short) ? '    ' : '';
    lines.push(...helpColumns(names.map((n) => {
      const s = specs[n]!;
      return [`${s.short ? `-${s.short}, ` : shortColumn}--${n}${s.type === 'boolean' ? '' : ' X'}`, `${s.help}${s.repeatable ? ' (repeatable)' : ''}`];
    })));
  }
  return lines.join('\n');
}
