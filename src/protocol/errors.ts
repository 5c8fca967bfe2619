// The protocol room's own error: anything malformed on the wire, or a value that a version of a
// message cannot carry. Handlers map it to CORRUPT_MESSAGE / INVALID_REQUEST or close the connection.

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}
