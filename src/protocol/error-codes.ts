import { errorTable } from './generated/errors.js';

export function errorName(code: number): string {
  return errorTable.get(code)?.[0] ?? `UNKNOWN_ERROR_CODE_${code}`;
}

export function isRetriable(code: number): boolean {
  return errorTable.get(code)?.[1] ?? false;
}
