/// <reference types="node" />
// The types of mt-eval-bridge's protocol (lib/protocol.js); index.d.ts exports them all.

/** The protocol this package speaks. */
export const PROTOCOL_VERSION: 'mt-eval-bridge/1';
/** Every version the Node guest accepts, most preferred first. */
export const SUPPORTED_VERSIONS: readonly string[];
/** Longest protocol line accepted by default (16 MiB). */
export const DEFAULT_MAX_LINE_BYTES: number;

/** The error codes of bridge/PROTOCOL.md. */
export const ErrorCode: Readonly<{
  PARSE_ERROR: -32700;
  INVALID_REQUEST: -32600;
  METHOD_NOT_FOUND: -32601;
  INVALID_PARAMS: -32602;
  INTERNAL_ERROR: -32603;
  CANCELLED: -32001;
  TIMEOUT: -32002;
  GUEST_EXITED: -32003;
  MESSAGE_TOO_LARGE: -32004;
  UNSUPPORTED_VERSION: -32005;
  NOT_INITIALIZED: -32006;
  METHOD_FAILED: -32007;
}>;

export type RequestId = number | string;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params: Record<string, unknown>;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: RequestId | null; result: unknown }
  | { jsonrpc: '2.0'; id: RequestId | null; error: JsonRpcError };

/** A protocol error carried as an exception. */
export class BridgeError extends Error {
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown);
}

export interface LineOverflow {
  /** The top-level id read from the line's first bytes; undefined when unreadable. */
  id: RequestId | null | undefined;
  /** Bytes of the line seen when it passed the limit. */
  bytes: number;
}

/**
 * Splits a byte stream into lines without "\n" (and without a trailing "\r"). A line longer than
 * maxLineBytes is never buffered: onOverflow reports it once, and it is skipped to its newline.
 * A Buffer given to onLine may share memory with the input; use it before returning.
 */
export class LineSplitter {
  constructor(options: {
    maxLineBytes?: number;
    onLine: (line: Buffer) => void;
    onOverflow?: (overflow: LineOverflow) => void;
  });
  readonly maxLineBytes: number;
  /** Bytes of the unfinished line held so far (never more than maxLineBytes). */
  readonly pendingBytes: number;
  push(chunk: Buffer): void;
  /** The stream ended: a last line without "\n" is still delivered. */
  end(): void;
}

/** The top-level "id" of a JSON object read from a (possibly cut) prefix; undefined if unknown. */
export function readMessageId(prefix: Buffer | string): RequestId | null | undefined;
/** Strict UTF-8 decoding; null when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null;
export function classify(message: unknown): 'request' | 'notification' | 'response' | 'invalid';
/** The message as one protocol line (JSON plus "\n"). */
export function encode(message: unknown): string;
export function request(id: RequestId, method: string, params?: Record<string, unknown>): JsonRpcRequest;
export function notification(method: string, params?: Record<string, unknown>): JsonRpcNotification;
export function resultResponse(id: RequestId | null, result: unknown): JsonRpcResponse;
export function errorResponse(id: RequestId | null | undefined, code: number, message: string, data?: unknown): JsonRpcResponse;
