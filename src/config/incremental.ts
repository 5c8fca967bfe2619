// IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT applied to a resource's stored config
// map, with Kafka's rules (ConfigAdminManager): APPEND/SUBTRACT only on list keys and starting from
// the key's default when unset, no key twice in one request, read-only broker keys refused.
import { keyOf, type ConfigKind } from './table.js';
import { ConfigError, type ConfigKeyDef, type ConfigProblem } from './types.js';
import { parseValue } from './values.js';
import { unknownKeyMessage } from './suggest.js';
import { validateTopicConfigs } from './topic.js';

export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
export interface AlterConfigOpInput { readonly name: string; readonly op: number; readonly value: string | null }
export type IncrementalResult =
  | { readonly ok: true; readonly configs: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly errors: readonly ConfigProblem[] };

const OP_NAMES = ['set', 'delete', 'append', 'subtract'];

function splitList(s: string): string[] {
  return s.trim() === '' ? [] : s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

export interface IncrementalOptions {
  /** For broker resources: one broker (resource name = its id) or the cluster default (empty name). */
  readonly brokerScope?: 'broker' | 'cluster-default';
}

function checkOp(o: AlterConfigOpInput, kind: ConfigKind, options: IncrementalOptions): ConfigKeyDef | ConfigProblem {
  const def = keyOf(kind, o.name);
  const bad = (errorCode: ConfigProblem['errorCode'], message: string): ConfigProblem => ({ name: o.name, errorCode, message });
  if (def === undefined) return bad('INVALID_CONFIG', unknownKeyMessage(o.name, kind));
  if (!Number.isInteger(o.op) || o.op < 0 || o.op > 3) return bad('INVALID_REQUEST', `Unknown config operation ${o.op} for ${o.name}`);
  if (kind === 'broker' && def.dynamic === 'read-only') return bad('INVALID_CONFIG', `Cannot update these configs dynamically: ${o.name}`);
  if (kind === 'broker' && def.dynamic === 'per-broker' && options.brokerScope === 'cluster-default') {
    return bad('INVALID_CONFIG', `Cannot update these configs at default cluster level, broker id must be specified: ${o.name}`);
  }
  if ((o.op === AlterConfigOp.APPEND || o.op === AlterConfigOp.SUBTRACT) && def.type !== 'list') {
    return bad('INVALID_CONFIG', `Config value ${OP_NAMES[o.op]} is not allowed for config key: ${o.name}`);
  }
  if (o.op !== AlterConfigOp.DELETE && o.value === null) return bad('INVALID_CONFIG', `Null value not supported for ${OP_NAMES[o.op]} of ${o.name}`);
  return def;
}

/** Applies the ops to a copy of `current`; either every op applies or none does. */
export function applyIncrementalOps(
  current: ReadonlyMap<string, string>, ops: readonly AlterConfigOpInput[], kind: ConfigKind,
  options: IncrementalOptions = {},
): IncrementalResult {
  const seen = new Set<string>();
  const errors: ConfigProblem[] = [];
  for (const o of ops) {
    if (seen.has(o.name)) errors.push({ name: o.name, errorCode: 'INVALID_REQUEST', message: `Error due to duplicate config keys: ${o.name}` });
    seen.add(o.name);
  }
  if (errors.length > 0) return { ok: false, errors };
  const next = new Map(current);
  for (const o of ops) {
    const def = checkOp(o, kind, options);
    if ('errorCode' in def) { errors.push(def); continue; }
    const old = next.get(o.name) ?? def.defaultValue ?? '';
    switch (o.op) {
      case AlterConfigOp.SET: next.set(o.name, o.value!); break;
      case AlterConfigOp.DELETE: next.delete(o.name); break;
      case AlterConfigOp.APPEND: {
        const list = splitList(old);
        for (const item of splitList(o.value!)) if (!list.includes(item)) list.push(item);
        next.set(o.name, list.join(','));
        break;
      }
      case AlterConfigOp.SUBTRACT: {
        const remove = new Set(splitList(o.value!));
        next.set(o.name, splitList(old).filter((x) => !remove.has(x)).join(','));
        break;
      }
    }
    if (next.has(o.name)) {
      try { parseValue(def, next.get(o.name)!); } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        errors.push({ name: o.name, errorCode: 'INVALID_CONFIG', message: e.message });
      }
    }
  }
  if (errors.length === 0 && kind === 'topic') errors.push(...validateTopicConfigs(next));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, configs: next };
}
