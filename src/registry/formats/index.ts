// The three formats behind one function: parse a schema of a given type, with its references.
import { AvroSchema } from './avro.js';
import { JsonSchema } from './json-schema.js';
import { ProtobufSchema } from './protobuf.js';
import { SchemaParseError, type ParsedSchema, type ResolvedReference, type SchemaType } from './schema.js';

export { AvroSchema, readerWriterIncompatibilities, type AvroNode, type AvroIncompatibility } from './avro.js';
export { JsonSchema, JSON_COMPATIBLE_CHANGES, type JsonDifference } from './json-schema.js';
export { ProtobufSchema, PROTOBUF_COMPATIBLE_CHANGES, type ProtobufDifference } from './protobuf.js';
export { SchemaParseError, SCHEMA_TYPES, type ParsedSchema, type ResolvedReference, type SchemaReference, type SchemaType } from './schema.js';

/** Parses `text` as a `schemaType` schema; throws SchemaParseError when it is not one. */
export function parseSchema(schemaType: SchemaType, text: string, references: readonly ResolvedReference[] = []): ParsedSchema {
  switch (schemaType) {
    case 'AVRO': return AvroSchema.parse(text, references);
    case 'JSON': return JsonSchema.parse(text, references);
    case 'PROTOBUF': return ProtobufSchema.parse(text, references);
    default: throw new SchemaParseError(`Unknown schema type ${String(schemaType)}`);
  }
}
