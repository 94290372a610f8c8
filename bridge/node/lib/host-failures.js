// What a guest's failure says in an error message: the request's failure as each entry's error, and the last
// lines of the guest's stderr, compact (one line) or indented.
import { BridgeError, ErrorCode, describe } from './protocol.js';

/**
 * A guest answered a batched request without a "results" list: the request failed as a whole, and is split to
 * find the entry it concerns, as for a line that cannot be read.
 */
export class WithoutResults extends BridgeError {
  constructor(kind, result) {
    super(ErrorCode.INTERNAL_ERROR, `the guest answered ${kind} without a "results" list (got ${describe(result?.results)})`);
    this.name = 'WithoutResults';
  }
}

/** The last few stderr lines on one line, for a per-entry error. */
export function compactTail(tail, { lines = 5, chars = 1000 } = {}) {
  const last = tail.split('\n').filter((line) => line.trim()).slice(-lines).join(' / ');
  if (!last) return '';
  return ` | stderr: ${last.length > chars ? `...${last.slice(-chars)}` : last}`;
}

/** The last lines of a stderr tail, indented, for an error message. */
export function formatTail(tail, { lines = 20, chars = 4000 } = {}) {
  let text = tail.trimEnd();
  if (!text) return '';
  text = text.split('\n').slice(-lines).join('\n');
  if (text.length > chars) text = `...${text.slice(-chars)}`;
  return `\n  guest stderr (last lines):\n    ${text.split('\n').join('\n    ')}`;
}

/** Why a whole request failed, as the error text of each of its entries. */
export function failureText(error) {
  if (!(error instanceof BridgeError)) return `the host failed: ${error?.message ?? error}`;
  if (error instanceof WithoutResults) return error.message;
  switch (error.code) {
    case ErrorCode.GUEST_EXITED:
      return `${error.message}${compactTail(error.data?.stderr_tail ?? '')}`;
    case ErrorCode.TIMEOUT:
    case ErrorCode.MESSAGE_TOO_LARGE:
      return error.message;
    case ErrorCode.METHOD_FAILED: {
      const type = error.data?.type;
      const named = typeof type === 'string' && !error.message.startsWith(type);
      return `the method failed: ${named ? `${type}: ` : ''}${error.message}`;
    }
    case ErrorCode.CANCELLED:
      return 'cancelled';
    default:
      return `the guest answered error ${error.code}: ${error.message}`;
  }
}
