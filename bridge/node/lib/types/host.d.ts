/// <reference types="node" />
// The types of mt-eval-bridge's host (lib/host.js); index.d.ts exports them all.

import type { Capabilities, CorpusEntry, RunConfig } from '../generated/contract.js';
import type { DecisionConfig, DecisionResult, DecisionRow } from './decisions.js';
import type { ResultNotes, TranslationResult } from './records.js';

export interface Logger {
  debug?(message: string): void;
  info?(message: string): void;
  warn?(message: string): void;
  error?(message: string): void;
}

/** startGuest's options; null is the same as leaving one out (its default). */
export interface StartGuestOptions {
  cwd?: string | null;
  env?: NodeJS.ProcessEnv | null;
  /** How long initialize may take, in ms (default 30 000). */
  startTimeoutMs?: number | null;
  /** How long a request may go without an answer or progress, in ms (default 120 000). */
  requestTimeoutMs?: number | null;
  /** How long a request may take whatever progress it reports, in ms (default 600 000). */
  hardTimeoutMs?: number | null;
  /** Longest line read from (and written to) the guest (default 16 MiB). */
  maxLineBytes?: number | null;
  /** Restarts allowed within a sliding window (default 3 per 60 000 ms). */
  restartBudget?: { restarts?: number | null; windowMs?: number | null } | null;
  /** Entries per request at most, on top of the guest's max_batch (default: no extra limit). */
  batchSize?: number | null;
  /** How long each shutdown step waits, in ms (default 2 000). */
  closeStepMs?: number | null;
  /**
   * How long a guest may take to answer the cancel of a timed-out request, in ms (default 2 000); one
   * that does not is not reading its input (its event loop is blocked) and is killed and replaced.
   */
  cancelGraceMs?: number | null;
  /** Once aborted, a start still under way is abandoned: the process is ended and startGuest rejects. */
  signal?: AbortSignal | null;
  /**
   * Sent with initialize, and used by translate() and decide() when given no config. One that does not fit (not an
   * object, a field unknown or out of range) fails the start with the TypeError translate() would throw, before the
   * guest is spawned; one without the language pair fits a guest that decides (as decide() takes it), and fails the
   * start of a guest that only translates once it has said so at initialize (the guest is then closed).
   */
  config?: RunConfig | Partial<DecisionConfig> | null;
  /** Entry fields the guest must not see, besides GOLD_FIELDS (reference, references and their aliases: always removed). */
  goldFields?: readonly string[] | null;
  /** How far from 1 decide()'s distributions may sum (default 1e-3); never renormalised. */
  tolerance?: number | null;
  /**
   * Receives the guest's stderr lines (info), log notifications, and warnings about skipped
   * lines, dropped results and restarts. Default: warnings and errors to process.stderr.
   */
  logger?: Logger | null;
}

/**
 * The guest's answer to initialize, as it sent it (bridge/schemas/bridge-initialize-result.schema.json): a guest may
 * leave out card, capabilities, guest (or send null) and implements (["translate"] when absent); the capabilities with
 * the protocol's defaults filled in are HostedGuest.capabilities.
 */
export interface InitializeResult {
  protocol_version: string;
  method: { name: string; method_id: string; [field: string]: unknown };
  card?: Record<string, unknown> | null;
  capabilities?: Partial<Capabilities>;
  guest?: { name: string; version: string; runtime?: string; [field: string]: unknown } | null;
  implements?: string[];
  [field: string]: unknown;
}

/** A guest process as the host sees it (startGuest returns one): translate and decide through it, close it. */
export interface HostedGuest {
  /** The latest initialize result (it changes when the guest is restarted). */
  readonly info: InitializeResult;
  /** The declared capabilities with the protocol's defaults filled in. */
  readonly capabilities: Required<Capabilities>;
  /** How many times the guest has been restarted. */
  readonly restarts: number;
  /** pid of the current guest process, which is also its process group id. */
  readonly pid: number | null;
  /** The last lines (at most ~64 KiB / 50 lines) the current guest process wrote to stderr. */
  readonly stderrTail: string;
  /**
   * One full result per entry, in entry order (config absent or null: options.config). Never rejects because of
   * the guest: failures (exit, timeout, bad lines, a raising method, the crash-loop budget) become per-entry errors.
   * Rejects with TypeError for invalid entries (duplicate ids, say), a missing config, or a config
   * given here that does not fit (`invalid config: $.field: …`, as options.config at the start): nothing
   * is sent and the guest serves the next call. Rejects with Error after close().
   */
  translate(entries: readonly CorpusEntry[], config?: RunConfig | null): Promise<TranslationResult[]>;
  /**
   * One checked decision per row, in row order; failures become row errors, answers that break the
   * rules become question errors. A guest that does not implement decide fails every row. Rejects
   * with TypeError for invalid rows or a config given here that does not fit, as translate().
   */
  decide(rows: readonly DecisionRow[], config?: Partial<DecisionConfig> | null): Promise<DecisionResult[]>;
  /** The method's card, asked of the guest (only what the method itself reports). */
  methodCard(): Promise<Record<string, unknown> | null>;
  /** What was changed to accept the guest's results, for the life of this host. */
  readonly resultNotes: ResultNotes;
  /**
   * shutdown request → end stdin → SIGTERM → SIGKILL to the process group, each step waiting at
   * most closeStepMs. Resolves once nothing the guest started is running; never rejects.
   */
  close(): Promise<void>;
}

/** startGuest could not bring the guest up; the message says why and quotes its stderr. */
export class GuestStartError extends Error {
  readonly stderrTail: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The code of a program that could not be started at all ("ENOENT", "EACCES"), else null. */
  readonly spawnError: string | null;
  constructor(message: string, details?: {
    stderrTail?: string; exitCode?: number | null; signal?: NodeJS.Signals | null; spawnError?: string | null; cause?: unknown;
  });
}

/**
 * Spawn a guest (argv) in its own process group and initialize it. Rejects with GuestStartError
 * when it cannot be spawned, refuses initialize, exits first, or does not answer in time (the
 * process is stopped first); rejects with TypeError for invalid arguments.
 */
export function startGuest(command: readonly string[], options?: StartGuestOptions): Promise<HostedGuest>;
