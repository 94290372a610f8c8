/// <reference types="node" />
// Types for mt-eval-bridge (Node >= 20; uses @types/node for Buffer, AbortSignal and process types).
// The contract's shapes (RunConfig, TranslationResult, MethodCard, Manifest, ...) are generated from the schemas.

import type {
  Capabilities, CorpusEntry, Dependency, Manifest, MethodCard, PluginReport, Problem, RunConfig,
  TranslationResult as ResultFields, Usage,
} from './lib/generated/contract.js';

export type { Capabilities, CorpusEntry, Dependency, Manifest, MethodCard, PluginReport, Problem, RunConfig, Usage };

/** A problem in a user's file: where (file + JSON path), what, and how to fix it. */
export type FileProblem = Problem;

/** A file or plugin has errors; problems lists every one (and the warnings). */
export class ProblemsError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[], summary?: string);
}

/** A plugin cannot be loaded: every problem, as the Python SDK's PluginLoadError lists them. */
export class ManifestError extends Error {
  readonly problems: Problem[];
  /** File, JSON path and fix of the first error. */
  readonly file: string | null;
  readonly path: string;
  readonly hint: string | null;
  constructor(problems: Problem[], summary: string);
}

/** What a method plugin's files declare, checked as the Python SDK checks them. */
export interface MethodManifest {
  /** Absolute path of the plugin directory. */
  directory: string;
  /** Absolute path of method.json. */
  file: string;
  /** method.json, decoded, with the schema's defaults filled in. */
  manifest: Required<Manifest>;
  name: string;
  /** method_id, or the directory name in kebab-case for a seed-era manifest. */
  methodId: string;
  /** How the method runs from Node: its translate.js in-process, its Python entry, or a bridge command. */
  runtime: 'node' | 'python' | 'command';
  /** Absolute path of the Node entry, when there is one. */
  nodeEntry: string | null;
  /** "module:Class", when there is a Python entry. */
  pythonEntry: string | null;
  /** argv of a bridge guest program, when declared. */
  command: string[] | null;
  supportedPairs: string[];
  /** The card the plugin's files give (method.json, then method_card.json). */
  card: MethodCard;
  cardFile: string;
  cardData: Record<string, unknown> | null;
  /** Warnings about the files (errors are thrown as ManifestError). */
  warnings: Problem[];
  /** What the method answers (method.json "implements"; default ["translate"]). */
  implements: Array<'translate' | 'decide'>;
}

/** Read and check a plugin directory's files (also accepts the method.json path itself); throws ManifestError. */
export function readMethodManifest(pathToPlugin: string): MethodManifest;

/** The files-only report of `mt-eval validate --no-import`, problem for problem the same as Python's. */
export function validatePluginFiles(pathToPlugin: string): PluginReport;

/** A licence string checked as the Python SDK checks it (SPDX expression, "proprietary" or "none"). */
export function checkLicence(text: string): {
  ok: boolean; normalized?: string; isOpen: boolean; restriction: string | null; message?: string; hint?: string;
};

/** The SHA-256 of a plugin directory's files, as the run card's code_sha256 and the lock file's fingerprint use it. */
export function codeSha256(directory: string): string;

/** The kebab-case form of a name ("My Method v2" → "my-method-v2"), as the Python SDK computes it. */
export function kebabCase(text: string): string;

// ---- protocol (lib/protocol.js) ------------------------------------------------------------------

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

// ---- records (lib/results.js) --------------------------------------------------------------------

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

// ---- decisions (lib/decisions.js) ----------------------------------------------------------------

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
/** resultsFor for a guest's answer (label "the guest" unless source says otherwise). */
export function matchResults(
  entries: readonly { id: string }[],
  results: readonly unknown[],
  options?: { onUnknown?: (raw: unknown) => void; source?: string; notes?: ResultNotes },
): TranslationResult[];

// ---- guest (lib/guest.js, bin/mt-eval-guest.js) --------------------------------------------------

/** What the Node guest declares: the protocol's defaults, with 8 concurrent requests and cancel. */
export const GUEST_CAPABILITIES: Readonly<Required<Capabilities>>;

/** What a translate.js module exports (or holds in its default export): translate, decide, or both. */
export interface TranslationMethodModule {
  translate?(entries: CorpusEntry[], config: Required<RunConfig>, options: { signal: AbortSignal }):
    PartialTranslationResult[] | Promise<PartialTranslationResult[]>;
  decide?(rows: DecisionRow[], config: DecisionConfig, options: { signal: AbortSignal }):
    PartialDecisionResult[] | Promise<PartialDecisionResult[]>;
  name?: string;
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
  methodCard: TranslationMethodModule['methodCard'] | null;
  close: TranslationMethodModule['close'] | null;
  name: string;
  methodId: string;
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
    /** Called once when input has ended and every request is answered. */
    exit: (code: number) => void;
    maxLineBytes?: number;
  });
  push(chunk: Buffer): void;
  end(): void;
}

/**
 * Serve a method on this process's stdin/stdout until stdin closes, then exit (what
 * `mt-eval-guest` does). Console output and stray stdout writes are sent to stderr.
 */
export function serveProcess(target: MethodTarget | ResolvedMethod, options?: { maxLineBytes?: number }): GuestServer;

// ---- gold (lib/gold.js) --------------------------------------------------------------------------

/** Entry fields no method ever receives: ["reference", "references"]. */
export const GOLD_FIELDS: readonly string[];

/** Copies of entries without the gold fields (GOLD_FIELDS and `extra`): what a method is handed. */
export function methodView<T extends Record<string, unknown>>(entries: readonly T[], extra?: readonly string[]): Record<string, unknown>[];

// ---- host (lib/host.js) --------------------------------------------------------------------------

export interface Logger {
  debug?(message: string): void;
  info?(message: string): void;
  warn?(message: string): void;
  error?(message: string): void;
}

export interface StartGuestOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** How long initialize may take, in ms (default 30 000). */
  startTimeoutMs?: number;
  /** How long a request may go without an answer or progress, in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** How long a request may take whatever progress it reports, in ms (default 600 000). */
  hardTimeoutMs?: number;
  /** Longest line read from (and written to) the guest (default 16 MiB). */
  maxLineBytes?: number;
  /** Restarts allowed within a sliding window (default 3 per 60 000 ms). */
  restartBudget?: { restarts?: number; windowMs?: number };
  /** Entries per request at most, on top of the guest's max_batch (default: no extra limit). */
  batchSize?: number;
  /** How long each shutdown step waits, in ms (default 2 000). */
  closeStepMs?: number;
  /**
   * How long a guest may take to answer the cancel of a timed-out request, in ms (default 2 000); one
   * that does not is not reading its input (its event loop is blocked) and is killed and replaced.
   */
  cancelGraceMs?: number;
  /** Sent with initialize, and used by translate() and decide() when given no config. */
  config?: RunConfig | null;
  /** Entry fields the guest must not see, besides reference and references (always removed). */
  goldFields?: readonly string[];
  /** How far from 1 decide()'s distributions may sum (default 1e-3); never renormalised. */
  tolerance?: number;
  /**
   * Receives the guest's stderr lines (info), log notifications, and warnings about skipped
   * lines, dropped results and restarts. Default: warnings and errors to process.stderr.
   */
  logger?: Logger;
}

/** The guest's answer to initialize. */
export interface InitializeResult {
  protocol_version: string;
  method: { name: string; method_id: string };
  card: Record<string, unknown> | null;
  capabilities: Partial<Capabilities>;
  guest: { name: string; version: string; runtime: string };
  [field: string]: unknown;
}

/** A running guest, as startGuest returns it. */
export interface Guest {
  /** The latest initialize result (it changes when the guest is restarted). */
  readonly info: InitializeResult;
  /** The declared capabilities with the protocol's defaults filled in. */
  readonly capabilities: Capabilities;
  /** How many times the guest has been restarted. */
  readonly restarts: number;
  /** pid of the current guest process, which is also its process group id. */
  readonly pid: number | null;
  /** The last lines (at most ~64 KiB / 50 lines) the current guest process wrote to stderr. */
  readonly stderrTail: string;
  /**
   * One full result per entry, in entry order. Never rejects because of the guest: failures
   * (exit, timeout, bad lines, a raising method, the crash-loop budget) become per-entry errors.
   * Rejects with TypeError for invalid entries (duplicate ids, say) or a missing config, and
   * with Error after close().
   */
  translate(entries: readonly CorpusEntry[], config?: RunConfig): Promise<TranslationResult[]>;
  /**
   * One checked decision per row, in row order; failures become row errors, answers that break the
   * rules become question errors. A guest that does not implement decide fails every row.
   */
  decide(rows: readonly DecisionRow[], config?: Partial<DecisionConfig>): Promise<DecisionResult[]>;
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
}

/**
 * Spawn a guest (argv) in its own process group and initialize it. Rejects with GuestStartError
 * when it cannot be spawned, refuses initialize, exits first, or does not answer in time (the
 * process is stopped first); rejects with TypeError for invalid arguments.
 */
export function startGuest(command: readonly string[], options?: StartGuestOptions): Promise<Guest>;

// ---- champollion (lib/champollion/) --------------------------------------------------------------

/** A problem in a file, located by JSON path, as the Python SDK reports it. */

/** One pair of a champollion config, with its settings (unset ones are null; batchSize defaults to 16). */
export interface ChampollionPair {
  /** The key as written: "en:es", "en->es" or "en→es". */
  key: string;
  source: string;
  target: string;
  methodPlugin: string;
  model: string | null;
  temperature: number | null;
  batchSize: number;
  /** The method's language codes, when the built-in locale mapping does not fit. */
  sourceLanguage: string | null;
  targetLanguage: string | null;
}

/** A valid champollion.config.json (version 3), paths made absolute. */
export interface ChampollionConfig {
  file: string;
  directory: string;
  inputLocale: string;
  localesDir: string;
  pairs: ChampollionPair[];
  /** Unknown fields and other warnings. */
  warnings: FileProblem[];
}

/** The config has errors; problems lists them all (and the warnings). */
export class ChampollionConfigError extends ProblemsError {
  readonly problems: FileProblem[];
}

/** Read champollion.config.json (the file, or a directory holding it; default ./champollion.config.json). */
export function readChampollionConfig(path?: string): ChampollionConfig;

/** No language pair of a method fits the locales; the message says what was tried. */
export class LanguageError extends Error {}

/**
 * [source_lang, target_lang] for a locale pair: the first of the method's supportedPairs that fits the
 * locales' ISO 639-3/639-1 forms (most specific first), or the ISO 639-3 forms for a method that
 * supports any pair. Overrides are used as given.
 */
export function pairLanguages(sourceLocale: string, targetLocale: string, supportedPairs: readonly string[],
  overrides?: { sourceLanguage?: string | null; targetLanguage?: string | null }): [string, string];

/** A plugin directory found under .champollion/methods. */
export interface FoundMethodPlugin {
  directory: string;
  name: string | null;
  methodId: string | null;
  /** Why it cannot be used (its method.json is unreadable), or null. */
  problem: string | null;
}

/** methodPlugin names no plugin (or several); the message lists the plugins available. */
export class MethodPluginNotFoundError extends Error {
  readonly available: FoundMethodPlugin[];
}

/** Every <baseDir>/.champollion/methods/* directory holding a method.json, in name order. */
export function findMethodPlugins(baseDir?: string): FoundMethodPlugin[];

/**
 * The plugin directory a methodPlugin value names: a path (with a slash, or starting with ".")
 * relative to baseDir, or a name, method_id or directory name under <baseDir>/.champollion/methods.
 */
export function resolveMethodPlugin(value: string, options?: { baseDir?: string }): string;

export interface LoadMethodPluginOptions {
  /** Where relative paths and .champollion/methods are resolved (default: process.cwd()). */
  baseDir?: string;
  /** The RunConfig translate() uses when given none, e.g. resolvePair(config, "en:es").runConfig. */
  config?: RunConfig;
  /** The command serving Python plugins: a path or an argv (default: $MT_EVAL, else `mt-eval`). */
  mtEval?: string | readonly string[];
  /** startGuest options for a plugin that runs out of process. */
  guest?: StartGuestOptions;
  /** How far from 1 decide()'s distributions may sum (default 1e-3). */
  tolerance?: number;
  logger?: Logger;
  /** Entry fields the method must not see, besides reference and references (always removed). */
  goldFields?: readonly string[];
  /**
   * false: do not end the process when an in-process translate.js blocks the event loop for longer
   * than a batch may take (config.timeout_s per entry); by default a message is written and it ends.
   */
  watchdog?: boolean;
}

/** A method plugin loaded from Node, whatever its runtime. */
export interface MethodPlugin {
  name: string;
  methodId: string;
  directory: string;
  /** node: translate.js in this process; python: `mt-eval serve`; command: its bridge command. */
  runtime: 'node' | 'python' | 'command';
  manifest: MethodManifest;
  /**
   * One full result per entry, in entry order, in batches of config.batch_size (config.concurrency
   * at once). A failing method gives per-entry errors — a call that throws or runs past
   * config.timeout_s per entry is split until the entries it fails on are found; rejects for an
   * invalid config, or when the plugin cannot start.
   */
  translate(entries: readonly CorpusEntry[], config?: RunConfig): Promise<TranslationResult[]>;
  /**
   * Load translate.js, or start the guest, now. Rejects with the reason and the fix (file:line for a
   * syntax error) when the plugin cannot start; so does every later call, at once.
   */
  start(config?: RunConfig): Promise<void>;
  /** What the plugin's method.json says it implements. */
  implements: Array<'translate' | 'decide'>;
  /** One checked decision per row (decide plugins); batched like translate(). */
  decide(rows: readonly DecisionRow[], config?: Partial<DecisionConfig>): Promise<DecisionResult[]>;
  /**
   * The merged card: method.json, method_card.json, then what the method reports when it runs (methodCard() of
   * translate.js, or the card the guest sent at initialize). Rejects with ManifestError when it contradicts
   * method.json or is not a valid card.
   */
  methodCard(): Promise<MethodCard>;
  /** close() of translate.js, or stop the guest; idempotent. */
  close(): Promise<void>;
}

/**
 * Load a method plugin by name or path. translate.js runs in-process; a Python entry runs through
 * `mt-eval serve`; a command through the bridge. Nothing runs before the first translate().
 */
export function loadMethodPlugin(nameOrPath: string, options?: LoadMethodPluginOptions): Promise<MethodPlugin>;

export class PlaceholderError extends Error {}

/** Placeholders ({{name}}, {count}, %s, HTML tags, …) swapped for sentinels ⟦0⟧, ⟦1⟧ … in order. */
export function protectPlaceholders(text: string): { text: string; placeholders: string[] };

/** Put placeholders back; throws PlaceholderError unless each sentinel appears exactly once. */
export function restorePlaceholders(translated: string, placeholders: readonly string[]): string;

/** A config pair with its plugin found and its RunConfig worked out. */
export interface ResolvedPair {
  pair: ChampollionPair;
  directory: string;
  methodId: string;
  /** source_lang, target_lang, batch_size, and model/temperature when the pair sets them. */
  runConfig: RunConfig;
  /** Hash of the method id, language codes, model and temperature (the lock file records it). */
  fingerprint: string;
  /** "src>tgt" in the method's language codes. */
  languages: string;
}

/** The pair written key (any separator) of a config, resolved; throws for an unknown pair or plugin. */
export function resolvePair(config: ChampollionConfig, key: string): ResolvedPair;

export interface LocaleFileReport {
  /** The target file, relative to the locales directory, e.g. "es/common.json". */
  file: string;
  /** Keys sent (or to send): [key, "new" | "source changed" | "method changed" | "forced"]. */
  due: [string, string][];
  upToDate: number;
  /** Values present but unknown to the lock file: kept and recorded. */
  adopted: string[];
  removed: string[];
  translated: string[];
  /** Keys whose text had nothing to translate (only placeholders, digits, punctuation). */
  copied: string[];
  /** [key, why]; the previous value is kept. */
  failed: [string, string][];
  written: boolean;
  /** The file could not be read (it is left as it was). */
  error: string | null;
}

export interface LocalesReport {
  dryRun: boolean;
  locales: {
    locale: string;
    pair: string;
    method: string;
    languages: string;
    /** Distinct source texts sent (or that would be). */
    sent: number;
    calls: number;
    files: LocaleFileReport[];
  }[];
}

/**
 * Bring a champollion project's target locale files up to date, as `mt-eval-locales` does: only keys
 * missing or changed since the lock file recorded them are sent; placeholders are protected; a failed
 * key keeps its previous value.
 */
export function translateLocales(configPathOrDir?: string, options?: {
  locales?: readonly string[];
  dryRun?: boolean;
  force?: boolean;
  progress?: (locale: string, done: number, total: number) => void;
  onWarning?: (problem: FileProblem) => void;
  mtEval?: string | readonly string[];
  logger?: Logger;
  /** How the holder of the project's lock names itself to other processes (default "translateLocales"). */
  command?: string;
  /** Seconds to wait for another run of the project (Infinity: no limit); default: refuse at once. */
  wait?: number | null;
  onWait?: (busy: ProjectBusyError) => void;
}): Promise<LocalesReport>;

/** Another process (Node or Python) is translating the project; holder names it. */
export class ProjectBusyError extends Error {
  holder: { pid?: number; started_at?: string; command?: string; host?: string };
}

/**
 * Hold a champollion project (its locales directory) until release(), as translateLocales does;
 * the same lock as Python's `mt-eval locales`. Rejects with ProjectBusyError when another holds it.
 */
export function acquireProjectLock(localesDir: string, options?: {
  command?: string;
  waitS?: number | null;
  onWait?: (busy: ProjectBusyError) => void;
}): Promise<{ release(): Promise<void> }>;

/** The method module could not be loaded; the message names file:line and the fix. */
export class MethodLoadError extends Error {}
