// The client's error for connection, timeout, protocol and authentication failures.
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(message: string, readonly code: 'CONNECTION' | 'TIMEOUT' | 'PROTOCOL' | 'UNSUPPORTED_VERSION' | 'AUTHENTICATION' = 'CONNECTION') {
    super(message);
  }
}
