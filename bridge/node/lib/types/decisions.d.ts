/// <reference types="node" />
// The types of mt-eval-bridge's decisions (lib/decisions.js); index.d.ts exports them all.

import type { RunConfig, Usage } from '../generated/contract.js';
import type { ResultNotes, TranslationResult } from './records.js';

export type QuestionType = 'noul' | 'choice' | 'score';
export const QUESTION_TYPES: readonly QuestionType[];
/** The options of a noul question: "true" and "false". */
export const NOUL_OPTIONS: readonly string[];
/** How far from 1 a distribution may sum (1e-3) unless a host is told otherwise. */
export const DEFAULT_TOLERANCE: number;

/** A config for decide(): RunConfig with an optional language pair. */
export type DecisionConfig = Required<Omit<RunConfig, 'source_lang' | 'target_lang'>> & {
  source_lang: string | null;
  target_lang: string | null;
};

export interface ScoreLevel {
  value: number;
  /** The option name results use (default: the value as text, e.g. "3"). */
  label?: string | null;
  description?: string | null;
}

/** A typed question (bridge/schemas/decision-row.schema.json). */
export interface Question {
  type: QuestionType;
  instructions: string;
  /** choice: the option names, in order. */
  options?: string[] | null;
  /** score: the rubric's levels, lowest value first. */
  levels?: ScoreLevel[] | null;
  /** noul: what counts as "true"/"false"; choice: a description per option. */
  criteria?: Record<string, string> | null;
}

/** One case to decide. */
export interface DecisionRow {
  id: string;
  state: Record<string, unknown>;
  questions: Record<string, Question>;
}

/** A checked answer: a probability for every option (and, for score, the expected value), or an error. */
export interface QuestionAnswer {
  probabilities?: Record<string, number>;
  expected?: number;
  error?: string;
}

/** A checked decision (bridge/schemas/decision-result.schema.json). */
export interface DecisionResult {
  id: string;
  answers: Record<string, QuestionAnswer>;
  latency_s: number;
  usage: Usage;
  error: string | null;
  metadata: Record<string, unknown>;
}

/** What decide() may return for a row: only id is required. */
export type PartialDecisionResult = { id: string } & Partial<Omit<DecisionResult, 'id' | 'usage' | 'answers'>> & {
  answers?: Record<string, { probabilities?: Record<string, number>; expected?: number; error?: string }>;
  usage?: Partial<Usage>;
};

/** A number as labels and messages print it: at most six decimals, no trailing zeros. */
export function numberText(value: number): string;
/** The option names a result gives probabilities for, in order. */
export function optionsOf(question: Question): string[];
/** Why probabilities is not a distribution over the question's options, or null. */
export function distributionProblem(question: Question, probabilities: unknown, tolerance?: number): string | null;
/** Σ probability × level value of a score question. */
export function expectedValue(question: Question, probabilities: Record<string, number>): number;
/** One answer checked against its question (never renormalised). */
export function checkAnswer(question: Question, raw: unknown, tolerance?: number): QuestionAnswer;
/** A method's result for a row, checked: every question answered or failed with the reason. */
export function checkDecision(row: DecisionRow, raw: Record<string, unknown>, tolerance?: number): DecisionResult;
/** A failed row in the full result shape. */
export function decisionError(id: string, message: string, latencyS?: number): DecisionResult;
/** Why rows cannot be sent to decide(), or null. */
export function rowsProblem(rows: unknown, where?: string): string | null;
/** One checked result per row, in row order; missing and repeated results become row errors. */
export function matchDecisions(
  rows: readonly DecisionRow[],
  results: unknown,
  options?: { tolerance?: number; onUnknown?: (raw: unknown) => void; source?: string },
): DecisionResult[];
/** A per-entry failure in the full result shape. */
export function errorResult(id: string, message: string, latencyS?: number): TranslationResult;
/** One returned item: {result} (usable), {id, problem} (unusable, and why), or null (no string id). */
export function normalizeResult(raw: unknown, options?: { notes?: ResultNotes; defaultLatencyS?: number }):
  { result: TranslationResult } | { id: string; problem: string } | null;
/**
 * One result per entry, in entry order, from what `label` returned for them: missing, duplicated or unusable
 * results become per-entry errors; items whose id matches no entry go to onUnknown.
 */
export function resultsFor(
  entries: readonly { id: string }[],
  returned: unknown,
  options?: { label?: string; notes?: ResultNotes; elapsedS?: number; onUnknown?: (raw: unknown) => void },
): TranslationResult[];
/**
 * resultsFor for a guest's answer (label "the method", as for an in-process call, unless source says otherwise); latencyS, the answer's
 * latency_s, is the latency of each result at 0 (its default).
 */
export function matchResults(
  entries: readonly { id: string }[],
  results: readonly unknown[],
  options?: { onUnknown?: (raw: unknown) => void; source?: string; notes?: ResultNotes; latencyS?: number },
): TranslationResult[];
