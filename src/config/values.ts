// Converting a key's string form to its typed value and back, and checking it against the key's
// validator — the rules of Kafka's ConfigDef.parseType and its validators.
import type { ConfigKeyDef, JsTypeOf, Validator, ConfigType } from './types.js';
import { ConfigError } from './types.js';

const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);
const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);
/** Number(Long.MAX_VALUE) rounds up to 2^63; format it back as Kafka prints it. */
const LONG_MAX_AS_NUMBER = Number(LONG_MAX);

function fail(def: ConfigKeyDef, raw: string, rule: string): never {
  throw new ConfigError(`Invalid value ${JSON.stringify(raw)} for configuration ${def.name}: ${rule}`, def.name, raw);
}

function parseInteger(def: ConfigKeyDef, raw: string, min: bigint, max: bigint, what: string): number {
  if (!/^[+-]?\d+$/.test(raw)) fail(def, raw, `Expected value to be a ${what} number`);
  const n = BigInt(raw);
  if (n < min || n > max) fail(def, raw, `Not a number of type ${what.toUpperCase()}`);
  return Number(n);
}

/** Parses one raw (already unescaped) value; throws ConfigError naming the key, value and rule. */
export function parseValue<T extends ConfigType>(def: ConfigKeyDef<T>, raw: string): JsTypeOf[T] {
  const value = parseType(def, raw);
  checkValidator(def, raw, value);
  return value as JsTypeOf[T];
}

function parseType(def: ConfigKeyDef, raw: string): unknown {
  const trimmed = raw.trim();
  switch (def.type) {
    case 'boolean': {
      const lower = trimmed.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      return fail(def, raw, 'Expected value to be either true or false');
    }
    case 'short': return parseInteger(def, trimmed, -32768n, 32767n, '16-bit integer');
    case 'int': return parseInteger(def, trimmed, BigInt(INT_MIN), BigInt(INT_MAX), '32-bit integer');
    case 'long': return parseInteger(def, trimmed, LONG_MIN, LONG_MAX, '64-bit integer');
    case 'double': {
      const n = Number(trimmed);
      if (trimmed === '' || !Number.isFinite(n)) fail(def, raw, 'Expected value to be a double');
      return n;
    }
    case 'list':
      return trimmed === '' ? [] : trimmed.split(/\s*,\s*/).filter((s) => s !== '');
    case 'string':
    case 'class':
    case 'password':
      return trimmed;
  }
}

export function describeRule(v: Validator): string {
  switch (v.kind) {
    case 'atLeast': return `Value must be at least ${v.min}`;
    case 'between': return `Value must be between ${v.min} and ${v.max}`;
    case 'in': return `String must be one of: ${v.values.join(', ')}`;
    case 'validList': return `Each item must be one of: ${v.values.join(', ')}`;
    case 'nonEmptyString': return 'String must be non-empty';
    case 'custom': return v.rule;
  }
}

function checkValidator(def: ConfigKeyDef, raw: string, value: unknown): void {
  const v = def.validator;
  if (v === undefined) return;
  let ok: boolean;
  switch (v.kind) {
    case 'atLeast': ok = (value as number) >= v.min; break;
    case 'between': ok = (value as number) >= v.min && (value as number) <= v.max; break;
    case 'in': ok = v.caseInsensitive === true
      ? v.values.some((x) => x.toLowerCase() === String(value).toLowerCase())
      : v.values.includes(String(value));
      break;
    case 'validList': ok = (value as string[]).every((x) => v.values.includes(x)); break;
    case 'nonEmptyString': ok = String(value) !== ''; break;
    case 'custom': ok = v.check(value); break;
  }
  if (!ok) fail(def, raw, describeRule(v));
}

/** The string form Kafka reports for a typed value (ConfigDef.convertToString). */
export function formatValue(type: ConfigType, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'list') return (value as readonly string[]).join(',');
  if (type === 'long' && (value as number) >= LONG_MAX_AS_NUMBER) return LONG_MAX.toString();
  if (type === 'double') {
    const n = value as number;
    if (n === Number.MAX_VALUE) return '1.7976931348623157E308';
    return Number.isInteger(n) ? n.toFixed(1) : String(n);
  }
  return String(value);
}
