/// <reference types="node" />
// The types of mt-eval-bridge's guest (lib/guest.js, bin/mt-eval-guest.js); index.d.ts exports them all.

import type { Capabilities, CorpusEntry, RunConfig } from '../generated/contract.js';
import type { DecisionConfig, DecisionRow, PartialDecisionResult } from './decisions.js';
import type { PartialTranslationResult } from './records.js';

/** What the Node guest declares: the protocol's defaults, with 64 concurrent requests (or the method's) and cancel. */
export const GUEST_CAPABILITIES: Readonly<Required<Capabilities>>;

/** What a translate.js module exports (or holds in its default export): translate, decide, or both. */
export interface TranslationMethodModule {
  translate?(entries: CorpusEntry[], config: Required<RunConfig>, options: { signal: AbortSignal }):
    PartialTranslationResult[] | Promise<PartialTranslationResult[]>;
  decide?(rows: DecisionRow[], config: DecisionConfig, options: { signal: AbortSignal }):
    PartialDecisionResult[] | Promise<PartialDecisionResult[]>;
  name?: string;
  /**
   * What the method declares of its guest's capabilities: max_concurrency, the calls it takes at once (a whole
   * number from 1; default 64). Any other value, or another field, fails the start naming the field.
   */
  capabilities?: { max_concurrency?: number };
  methodCard?(): Record<string, unknown> | null | Promise<Record<string, unknown> | null>;
  /** Called once before the guest exits. */
  close?(): void | Promise<void>;
}

/** Where a method lives: a plugin directory, or a bare module file. */
export type MethodTarget = { directory: string; module?: undefined } | { module: string; directory?: undefined };

export interface ResolvedMethod {
  /** Absolute path of the module to import. */
  file: string;
  /** The manifest name, or the file's base name. */
  name: string;
  /** Whether the name was given (method.json's, or --name): then it is served, not the module's `name` export. */
  named: boolean;
  methodId: string;
  /** method.json's "implements"; null for a bare module (whatever it exports). */
  implements: Array<'translate' | 'decide'> | null;
}

/** The requests a method can implement, and the name of what each is given. */
export const REQUESTS: Readonly<{ translate: 'entries'; decide: 'rows' }>;

export interface LoadedMethod {
  translate: TranslationMethodModule['translate'] | null;
  decide: TranslationMethodModule['decide'] | null;
  implements: Array<'translate' | 'decide'>;
  /** The capabilities the module exports, checked ({} for none). */
  capabilities: { max_concurrency?: number };
  methodCard: TranslationMethodModule['methodCard'] | null;
  close: TranslationMethodModule['close'] | null;
  name: string;
  methodId: string;
  /** Absolute path of the module imported. */
  file: string;
}

/** Find the module to serve; throws ManifestError (or Error) with a fix when it cannot run on Node. */
export function resolveMethod(target: MethodTarget): ResolvedMethod;
/**
 * A module file to serve, named by a host that has checked its plugin's files (they are not read): the name
 * (default: the file's base name), the method id (default: the name in kebab-case) and what it implements
 * (default: what it exports).
 */
export function moduleTarget(module: string, naming?: { name?: string; methodId?: string; implements?: Array<'translate' | 'decide'> }): ResolvedMethod;
/** Import the module and check it exports what it implements. */
export function loadMethod(target: ResolvedMethod): Promise<LoadedMethod>;

/** The guest's protocol state machine, independent of where its lines come from. */
export class GuestServer {
  constructor(options: {
    load: () => Promise<LoadedMethod>;
    /** Writes one protocol line (already ending in "\n"). */
    write: (line: string, callback?: () => void) => void;
    /** Writes one diagnostic line (stderr). */
    log: (text: string) => void;
    /**
     * Called once: when input has ended and every request is answered, or (code 1) when maxAbandoned cancelled calls
     * have not returned.
     */
    exit: (code: number) => void;
    maxLineBytes?: number;
    /** Milliseconds a cancelled call keeps its slot if the method does not return from it (default 5000). */
    settleMs?: number;
    /** Abandoned calls not returned from at which the guest exits with status 1 (default twice max_concurrency). */
    maxAbandoned?: number;
  });
  push(chunk: Buffer): void;
  end(): void;
}

/**
 * Serve a method on this process's stdin/stdout until stdin closes, then exit (what
 * `mt-eval-guest` does). Console output and stray stdout writes are sent to stderr.
 */
export function serveProcess(target: MethodTarget | ResolvedMethod, options?: { maxLineBytes?: number }): GuestServer;
