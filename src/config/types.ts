// The shapes every configuration key is described with, and the ids Kafka puts on the wire for
// them (DescribeConfigsResponse.ConfigSource and ConfigType).

export type ConfigType = 'boolean' | 'short' | 'int' | 'long' | 'double' | 'string' | 'list' | 'class' | 'password';
export type Importance = 'high' | 'medium' | 'low';
/** read-only: restart needed; per-broker: settable for one broker only; cluster-wide: per broker or as cluster default. */
export type DynamicMode = 'read-only' | 'per-broker' | 'cluster-wide';

export type Validator =
  | { readonly kind: 'atLeast'; readonly min: number }
  | { readonly kind: 'between'; readonly min: number; readonly max: number }
  | { readonly kind: 'in'; readonly values: readonly string[]; readonly caseInsensitive?: boolean }
  | { readonly kind: 'validList'; readonly values: readonly string[] }
  | { readonly kind: 'nonEmptyString' }
  | { readonly kind: 'custom'; readonly rule: string; readonly check: (value: unknown) => boolean };

/** The JavaScript value a key of each type resolves to. Longs are numbers (see README: precision). */
export interface JsTypeOf {
  boolean: boolean; short: number; int: number; long: number; double: number;
  string: string; list: readonly string[]; class: string; password: string;
}

export interface ConfigKeyDef<T extends ConfigType = ConfigType, N extends boolean = boolean> {
  readonly name: string;
  readonly type: T;
  /** Kafka's default in its string form; null when Kafka has no default (the value is then null). */
  readonly defaultValue: N extends true ? null : string;
  readonly validator: Validator | undefined;
  readonly importance: Importance;
  readonly dynamic: DynamicMode;
  readonly doc: string;
  /** For topic keys: the primary broker key that supplies the default (ServerTopicConfigSynonyms). */
  readonly brokerSynonym?: string;
  /** Accepted for compatibility but not acted on by Logline. */
  readonly unused?: boolean;
}

export type ValueOf<D> = D extends ConfigKeyDef<infer T, infer N> ? (N extends true ? JsTypeOf[T] | null : JsTypeOf[T]) : never;

/** DescribeConfigsResponse.ConfigSource ids as Kafka 4.0 writes them. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const;
export type ConfigSourceId = (typeof ConfigSource)[keyof typeof ConfigSource];

/** DescribeConfigsResponse.ConfigType ids (v3+). */
export const ConfigTypeId = {
  UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9,
} as const;

export function configTypeId(type: ConfigType): number {
  switch (type) {
    case 'boolean': return ConfigTypeId.BOOLEAN;
    case 'string': return ConfigTypeId.STRING;
    case 'int': return ConfigTypeId.INT;
    case 'short': return ConfigTypeId.SHORT;
    case 'long': return ConfigTypeId.LONG;
    case 'double': return ConfigTypeId.DOUBLE;
    case 'list': return ConfigTypeId.LIST;
    case 'class': return ConfigTypeId.CLASS;
    case 'password': return ConfigTypeId.PASSWORD;
  }
}

/** A configuration the operator got wrong. Handlers map it to INVALID_CONFIG; the CLI prints it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(message: string, readonly key: string, readonly value?: string) {
    super(message);
  }
}

/** One rejected key in a CreateTopics / AlterConfigs style request. */
export interface ConfigProblem {
  readonly name: string;
  readonly errorCode: 'INVALID_CONFIG' | 'INVALID_REQUEST';
  readonly message: string;
}
