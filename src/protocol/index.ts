// The protocol room's door: primitives, the generated schemas and types, the generic codec,
// request/response headers and framing. See README.md for the int64 decision.
export { ProtocolError } from './errors.js';
export { Reader } from './reader.js';
export { Writer } from './writer.js';
export { inRange, type FieldSchema, type MessageSchema, type VersionRange, type UnknownTaggedField } from './schema.js';
export { messageSchemas } from './generated/messages.js';
export * from './generated/types.js';
export { ErrorCode, errorTable, type ErrorCodeName } from './generated/errors.js';
export {
  decodeMessage, encodeMessage, encodeToBuffer, decodeFromBuffer, defaultMessage, schemaOf, planFor, ZERO_UUID,
} from './codec.js';
export {
  apiInfo, allApis, isFlexible, requestHeaderVersion, responseHeaderVersion, decodeRequestHeader, decodeRequest,
  encodeRequestFrame, encodeResponseFrame, decodeResponse, peekCorrelationId,
  type ApiInfo, type RequestHeader, type DecodedRequest, type DecodedRequestHeader, type RequestOf, type ResponseOf,
} from './api.js';
export { FrameSplitter } from './framing.js';
export { errorName, isRetriable } from './error-codes.js';
