// Confluent's REST errors: an HTTP status and an error code in the body
// (`{"error_code":40401,"message":"Subject 'x' not found."}`). The state machine throws them for
// bad input, and the REST door writes them as they are; nothing else maps errors.

export class RegistryError extends Error {
  constructor(readonly status: number, readonly errorCode: number, message: string) {
    super(message);
  }

  body(): { error_code: number; message: string } {
    return { error_code: this.errorCode, message: this.message };
  }
}

export const registryErrors = {
  subjectNotFound: (subject: string) => new RegistryError(404, 40401, `Subject '${subject}' not found.`),
  versionNotFound: (version: number | string) => new RegistryError(404, 40402, `Version ${version} not found.`),
  schemaNotFound: (what = 'Schema not found') => new RegistryError(404, 40403, what),
  subjectSoftDeleted: (subject: string) => new RegistryError(404, 40404, `Subject '${subject}' was soft deleted.Set permanent=true to delete permanently`),
  subjectNotSoftDeleted: (subject: string) => new RegistryError(404, 40405, `Subject '${subject}' was not deleted first before being permanently deleted`),
  versionSoftDeleted: (subject: string, version: number) => new RegistryError(404, 40406, `Subject '${subject}' Version ${version} was soft deleted.Set permanent=true to delete permanently`),
  versionNotSoftDeleted: (subject: string, version: number) => new RegistryError(404, 40407, `Subject '${subject}' Version ${version} was not deleted first before being permanently deleted`),
  subjectConfigNotFound: (subject: string) => new RegistryError(404, 40408, `Subject '${subject}' does not have subject-level compatibility configured`),
  subjectModeNotFound: (subject: string) => new RegistryError(404, 40409, `Subject '${subject}' does not have subject-level mode configured`),
  incompatible: (subject: string, messages: readonly string[]) => new RegistryError(409, 409,
    `Schema being registered is incompatible with an earlier schema for subject "${subject}", details: [${messages.join(', ')}]`),
  invalidSchema: (detail: string) => new RegistryError(422, 42201, detail.startsWith('Invalid schema') ? detail : `Invalid schema: ${detail}`),
  invalidVersion: (version: string) => new RegistryError(422, 42202,
    `The specified version '${version}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string "latest"`),
  invalidCompatibilityLevel: () => new RegistryError(422, 42203,
    'Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive'),
  invalidMode: () => new RegistryError(422, 42204, 'Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT'),
  operationNotPermitted: (message: string) => new RegistryError(422, 42205, message),
  referenceExists: (message: string) => new RegistryError(422, 42206, message),
  unprocessable: (message: string) => new RegistryError(422, 422, message),
  badRequest: (message: string) => new RegistryError(400, 400, message),
  storeError: (message: string) => new RegistryError(500, 50001, `Error while storing: ${message}`),
  timeout: (message: string) => new RegistryError(500, 50002, message),
  forwardingError: (message: string) => new RegistryError(500, 50003, `Error while forwarding the request to the leader: ${message}`),
  unauthorized: () => new RegistryError(401, 40101, 'Unauthorized'),
  forbidden: (principal: string, operation: string, resource: string) => new RegistryError(403, 40301, `User ${principal} is denied operation ${operation} on ${resource}`),
  notFound: () => new RegistryError(404, 404, 'HTTP 404 Not Found'),
  methodNotAllowed: () => new RegistryError(405, 405, 'HTTP 405 Method Not Allowed'),
  tooLarge: (max: number) => new RegistryError(413, 413, `Request body larger than ${max} bytes`),
  unsupportedMediaType: () => new RegistryError(415, 415, 'HTTP 415 Unsupported Media Type'),
} as const;
