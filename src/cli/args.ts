// A small argument parser for `logline <noun> <verb> [--flag value] [--flag=value] [--bool]`.
// Repeatable flags collect into arrays. Usage errors throw UsageError (exit code 2).

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface FlagSpec {
  type: 'string' | 'boolean' | 'number';
  repeatable?: boolean;
  help: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | number | string[]>;
}

export function parseArgs(argv: string[], specs: Record<string, FlagSpec>): ParsedArgs {
  const positionals: string[] = [];
  const flags: ParsedArgs['flags'] = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') { positionals.push(arg); continue; }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown option --${name}`);
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if (spec.type === 'boolean') {
      flags[name] = value === undefined ? true : value !== 'false';
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    if (spec.type === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new UsageError(`--${name}: "${value}" is not a number`);
      flags[name] = n;
    } else if (spec.repeatable) {
      ((flags[name] ??= []) as string[]).push(value);
    } else {
      flags[name] = value;
    }
  }
  return { positionals, flags };
}

export function helpText(usage: string, summary: string, specs: Record<string, FlagSpec>): string {
  const lines = [`usage: ${usage}`, '', summary, ''];
  const names = Object.keys(specs);
  if (names.length) {
    lines.push('options:');
    const width = Math.max(...names.map((n) => n.length)) + 4;
    for (const n of names) {
      const s = specs[n]!;
      const left = `--${n}${s.type === 'boolean' ? '' : ' X'}`;
      lines.push(`  ${left.padEnd(width + 2)}${s.help}${s.repeatable ? ' (repeatable)' : ''}`);
    }
  }
  return lines.join('\n');
}
