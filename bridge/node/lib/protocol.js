import { isUtf8 } from 'node:buffer';

// Wire-level pieces of mt-eval-bridge/1 shared by the guest and the host: the version, the error
// codes, a bounded line splitter for byte streams, and builders for the JSON-RPC messages.

export const PROTOCOL_VERSION = 'mt-eval-bridge/1';
export const SUPPORTED_VERSIONS = Object.freeze([PROTOCOL_VERSION]);
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * "the 16777216-byte line limit" (the protocol's), or, for a limit a host set lower (maxLineBytes), that it is this
 * host's own and how to raise it: a line over it breaks no rule of the protocol.
 */
/** A line's length in words: `N bytes`, or `N+ bytes` when only its first N bytes were seen. */
export function lineBytes(bytes, whole) {
  return `${bytes}${whole ? '' : '+'} bytes`;
}

export function lineLimit(limit) {
  if (limit >= DEFAULT_MAX_LINE_BYTES) return `the ${limit}-byte line limit`;
  return `this host's ${limit}-byte line limit (its maxLineBytes option; the protocol allows ${DEFAULT_MAX_LINE_BYTES}`
    + ' bytes: raise maxLineBytes to take longer lines)';
}

export const ErrorCode = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  CANCELLED: -32001,
  TIMEOUT: -32002,
  GUEST_EXITED: -32003,
  MESSAGE_TOO_LARGE: -32004,
  UNSUPPORTED_VERSION: -32005,
  NOT_INITIALIZED: -32006,
  METHOD_FAILED: -32007,
});

// How much of an oversized line is kept to look for its id.
const ID_PREFIX_BYTES = 4096;

function skipSpace(text, i) {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  return i;
}

// Index just past the JSON string starting at text[i] (a quote), or -1 if it does not end in text.
function stringEnd(text, i) {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/**
 * The top-level "id" of a JSON object, read from the first bytes of a line that may be cut short.
 * Keys of nested objects (an entry's "id", say) are skipped. Returns undefined when it cannot tell.
 */
export function readMessageId(prefix) {
  const text = typeof prefix === 'string' ? prefix : prefix.toString('utf8');
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  let depth = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end === -1) return undefined;
      const after = skipSpace(text, end);
      if (depth === 1 && text[after] === ':' && text.slice(i, end) === '"id"') {
        const v = skipSpace(text, after + 1);
        if (text[v] === '"') {
          const valueEnd = stringEnd(text, v);
          return valueEnd === -1 ? undefined : JSON.parse(text.slice(v, valueEnd));
        }
        const number = /^-?\d+(?=\s*[,}])/.exec(text.slice(v, v + 40));
        if (number) return Number(number[0]);
        return /^null\b/.test(text.slice(v, v + 5)) ? null : undefined;
      }
      i = end;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    i++;
  }
  return undefined;
}

/**
 * Splits a byte stream into lines (Buffers, without "\n" or a trailing "\r"). A line longer than
 * maxLineBytes is never buffered: as soon as it passes the limit, onOverflow({id, bytes, whole}) reports
 * it (id read from its first bytes, undefined if unreadable; bytes its length when whole, the line's end
 * having been seen, else the bytes seen so far) and the rest is discarded up to the next newline. A line handed to onLine may share memory with the input: use it before returning.
 */
export class LineSplitter {
  constructor({ maxLineBytes = DEFAULT_MAX_LINE_BYTES, onLine, onOverflow }) {
    this.maxLineBytes = maxLineBytes;
    this.onLine = onLine;
    this.onOverflow = onOverflow;
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
  }

  push(chunk) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.discarding) {
        if (newline !== -1) this.discarding = false;
      } else if (this.pendingBytes + (end - start) > this.maxLineBytes) {
        this.#overflow(chunk.subarray(start, Math.min(end, start + ID_PREFIX_BYTES)), end - start, newline !== -1);
        this.discarding = newline === -1;
      } else if (newline === -1) {
        this.pending.push(chunk.subarray(start));
        this.pendingBytes += end - start;
      } else {
        const piece = chunk.subarray(start, end);
        const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
        this.pending = [];
        this.pendingBytes = 0;
        this.#emit(line);
      }
      if (newline === -1) break;
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without "\n" still counts. */
  end() {
    if (this.pendingBytes > 0) this.#emit(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
  }

  #emit(line) {
    const last = line.length - 1;
    this.onLine(last >= 0 && line[last] === 13 ? line.subarray(0, last) : line);
  }

  #overflow(piece, pieceBytes, whole) {
    const prefix = this.pending.length === 0 ? piece
      : Buffer.concat([...this.pending, piece]).subarray(0, ID_PREFIX_BYTES);
    const bytes = this.pendingBytes + pieceBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.onOverflow?.({ id: readMessageId(prefix), bytes, whole });
  }
}

/** Decode a line as strict UTF-8; null when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes) {
  // isUtf8 is a native check; toString then decodes without a second validation pass.
  return isUtf8(bytes) ? bytes.toString('utf8') : null;
}

/** A value in a few words, for protocol messages ("nothing", "a list", "\"text\""). */
export function describe(value) {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = typeof value === 'bigint' ? `${value}n` : JSON.stringify(value) ?? String(value); // (JSON has no BigInt)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An id is a string or an integer JSON holds exactly (PROTOCOL.md, "Integers"). */
export function isValidId(id) {
  return typeof id === 'string' || Number.isSafeInteger(id);
}

/** The kind of a parsed message: 'request', 'notification', 'response' or 'invalid'. */
export function classify(message) {
  if (!isPlainObject(message) || message.jsonrpc !== '2.0') return 'invalid';
  if (typeof message.method === 'string') {
    if (!('id' in message)) return 'notification';
    return isValidId(message.id) ? 'request' : 'invalid';
  }
  if ('id' in message && ('result' in message) !== ('error' in message)) return 'response';
  return 'invalid';
}

/** One protocol line: the message as JSON plus "\n". */
export function encode(message) {
  return `${JSON.stringify(message)}\n`;
}

export function request(id, method, params = {}) {
  return { jsonrpc: '2.0', id, method, params };
}

/** Params already encoded as JSON text: a request line is built around them instead of encoding them again. */
export class EncodedParams {
  constructor(text) {
    this.text = text;
  }
}

/** The line of request `id`: `encode(request(id, method, params))`, with EncodedParams taken as they are. */
export function requestLine(id, method, params) {
  if (!(params instanceof EncodedParams)) return encode(request(id, method, params));
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":${params.text}}\n`;
}

export function notification(method, params = {}) {
  return { jsonrpc: '2.0', method, params };
}

export function resultResponse(id, result) {
  return { jsonrpc: '2.0', id, result };
}

export function errorResponse(id, code, message, data) {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id: id === undefined ? null : id, error };
}

/** An Error carrying a protocol error code (and optional data) from one side to the other. */
export class BridgeError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}
