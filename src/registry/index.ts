// The registry room's door: the schema registry (issue 32). Formats and compatibility as pure
// functions so far.
export {
  parseSchema, AvroSchema, JsonSchema, ProtobufSchema, SchemaParseError, SCHEMA_TYPES, readerWriterIncompatibilities, JSON_COMPATIBLE_CHANGES, PROTOBUF_COMPATIBLE_CHANGES,
  type ParsedSchema, type ResolvedReference, type SchemaReference, type SchemaType, type AvroNode, type AvroIncompatibility, type JsonDifference, type ProtobufDifference,
} from './formats/index.js';
export { compatibilityMessages, COMPATIBILITY_LEVELS, DEFAULT_COMPATIBILITY, isCompatibilityLevel, type CompatibilityLevel, type PreviousVersion } from './compatibility.js';
