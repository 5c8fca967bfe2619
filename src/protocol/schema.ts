// The shape of the generated schema table (src/protocol/generated/messages.ts).

/** Inclusive version range; 0x7fff stands for "and every later version". */
export type VersionRange = readonly [number, number];

export interface FieldSchema {
  readonly name: string;
  /** Kafka's type string: int32, string, []int32, []SomeStruct, SomeStruct, records, ... */
  readonly type: string;
  readonly versions: VersionRange | null;
  readonly nullable?: VersionRange;
  readonly tagged?: VersionRange;
  readonly tag?: number;
  /** Field-level override of the message's flexible versions (RequestHeader's ClientId). */
  readonly flexible?: VersionRange | null;
  readonly default?: string;
  readonly ignorable?: boolean;
  readonly mapKey?: boolean;
  /** Name of the struct in the message's `structs` when the type is a struct or array of one. */
  readonly struct?: string;
}

export interface MessageSchema {
  readonly name: string;
  readonly kind: string;
  readonly folder: string;
  readonly apiKey?: number;
  readonly validVersions: VersionRange | null;
  readonly flexibleVersions: VersionRange | null;
  readonly deprecatedVersions?: VersionRange;
  readonly latestVersionUnstable?: boolean;
  readonly fields: readonly FieldSchema[];
  readonly structs: Readonly<Record<string, readonly FieldSchema[]>>;
}

export interface UnknownTaggedField {
  tag: number;
  data: Buffer;
}

export const inRange = (r: VersionRange | null | undefined, v: number): boolean =>
  r !== null && r !== undefined && v >= r[0] && v <= r[1];
