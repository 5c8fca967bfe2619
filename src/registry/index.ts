// The registry room's door: the schema registry (issue 32). Formats and compatibility as pure
// functions, the state machine over `_schemas` and its operations, the service that replays and
// writes it on a node, the Confluent REST door and its HTTP listener. Only src/node wires it.
export {
  parseSchema, AvroSchema, JsonSchema, ProtobufSchema, SchemaParseError, SCHEMA_TYPES, readerWriterIncompatibilities, JSON_COMPATIBLE_CHANGES, PROTOBUF_COMPATIBLE_CHANGES,
  type ParsedSchema, type ResolvedReference, type SchemaReference, type SchemaType, type AvroNode, type AvroIncompatibility, type JsonDifference, type ProtobufDifference,
} from './formats/index.js';
export { compatibilityMessages, COMPATIBILITY_LEVELS, DEFAULT_COMPATIBILITY, isCompatibilityLevel, type CompatibilityLevel, type PreviousVersion } from './compatibility.js';
export { RegistryError, registryErrors } from './errors.js';
export { SCHEMAS_TOPIC, encodeRegistryRecord, decodeRegistryRecord, type RegistryRecord, type SchemaValue } from './records.js';
export { RegistryState, MODES, type Mode, type SubjectNameStrategy, type SchemaRequest, type VersionView, type OperationResult } from './state.js';
export { register, unchangedRegister, deleteVersion, deleteSubject, setConfig, deleteConfig, setMode, deleteMode } from './operations.js';
export { RegistryService, type SchemasLog, type RegistryServiceOptions } from './service.js';
export { RegistryRest, REGISTRY_CONTENT_TYPE, FORWARDED_HEADER, OFFSET_HEADER, EPOCH_HEADER, type RestRequest, type RestResponse, type WriterUrl } from './rest.js';
export { startRegistryListener, type RegistryListener, type RegistryListenerSecurity } from './server.js';
export { RegistryCaller, subjectTarget, globalTarget, type Access, type AclDecision, type AclTarget } from './access.js';
