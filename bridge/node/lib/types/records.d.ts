/// <reference types="node" />
// The types of mt-eval-bridge's records (lib/results.js); index.d.ts exports them all.

import type { TranslationResult as ResultFields, RunConfig, Usage } from '../generated/contract.js';
import type { DecisionConfig } from './decisions.js';

/** A result in its full shape (bridge/schemas/translation-result.schema.json): every field present. */
export type TranslationResult = Required<Omit<ResultFields, 'usage'>> & { usage: Required<Usage> };

/** What a method may return for an entry: only id is required. */
export type PartialTranslationResult = { id: string } & Partial<Omit<TranslationResult, 'id' | 'usage'>> & {
  usage?: Partial<Usage>;
  [extra: string]: unknown;
};

/** What was changed to accept a method's results (null as absent, extras into metadata, ...), counted. */
export class ResultNotes {
  readonly counts: Record<string, number>;
  add(note: string, count?: number): void;
  merge(counts: Record<string, number> | null | undefined): void;
  readonly size: number;
  /** "3 × \"latency_s\": null treated as absent; ..." */
  summary(): string;
}

/** The RunConfig fields a method may leave out, with their schema defaults. */
export const RUN_CONFIG_DEFAULTS: Readonly<Required<Omit<RunConfig, 'source_lang' | 'target_lang'>>>;
/** A RunConfig checked against its schema with defaults filled in, or a string saying what is wrong with it. */
export function completeRunConfig(config: unknown): Required<RunConfig> | string;
/** A decide() config (a RunConfig whose language pair may be null) with defaults, or what is wrong with it. */
export function completeDecisionConfig(config: unknown): DecisionConfig | string;
