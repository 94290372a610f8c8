/// <reference types="node" />
// The types of mt-eval-bridge's champollion (lib/champollion/); index.d.ts exports them all.

import type { CorpusEntry, MethodCard, RunConfig } from '../generated/contract.js';
import type { DecisionConfig, DecisionResult, DecisionRow } from './decisions.js';
import type { Logger, StartGuestOptions } from './host.js';
import type { FileProblem, MethodManifest, ProblemsError } from './plugin-files.js';
import type { TranslationResult } from './records.js';

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
  /** Seconds per string before a call fails (the RunConfig's timeout_s); null: the RunConfig's default. */
  timeoutS: number | null;
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
  constructor(file: string, problems: FileProblem[]);
}

/** localesDir names no directory; the message names it, the config and the fix. */
export class LocalesDirError extends Error {}

/** Read champollion.config.json (the file, or a directory holding it; default ./champollion.config.json). */
export function readChampollionConfig(path?: string | null): ChampollionConfig;

/** No language pair of a method fits the locales; the message says what was tried. */
export class LanguageError extends Error {}

/**
 * [source_lang, target_lang] for a locale pair: the first of the method's supportedPairs that fits the
 * locales' ISO 639-3/639-1 forms (most specific first), or the ISO 639-3 forms for a method that
 * supports any pair. Overrides are used as given.
 */
export function pairLanguages(sourceLocale: string, targetLocale: string, supportedPairs: readonly string[],
  overrides?: { sourceLanguage?: string | null; targetLanguage?: string | null }): [string, string];

/** An entry of .champollion/methods: a plugin directory, or one that cannot be used. */
export interface FoundMethodPlugin {
  directory: string;
  name: string | null;
  methodId: string | null;
  /**
   * Why it cannot be used (a symlink to a missing target, a directory without method.json, a method.json
   * that cannot be read or has no name), or null.
   */
  problem: string | null;
}

/** methodPlugin names no plugin (or several); the message lists the plugins available. */
export class MethodPluginNotFoundError extends Error {
  readonly available: FoundMethodPlugin[];
  constructor(message: string, available: FoundMethodPlugin[]);
}

/** Every entry of <baseDir>/.champollion/methods (hidden ones aside), in name order, usable or not. */
export function findMethodPlugins(baseDir?: string): FoundMethodPlugin[];

/**
 * The plugin directory a methodPlugin value names: a path (with a slash, or starting with ".")
 * relative to baseDir, or a name, method_id or directory name under <baseDir>/.champollion/methods. Its error names
 * options.pair (the config's pair whose methodPlugin it is) when given.
 */
export function resolveMethodPlugin(value: string, options?: { baseDir?: string; pair?: string | null }): string;

/** loadMethodPlugin's options; null is the same as leaving one out (its default). */
export interface LoadMethodPluginOptions {
  /** Where relative paths and .champollion/methods are resolved (default: process.cwd()). */
  baseDir?: string | null;
  /**
   * The RunConfig translate() uses when given none, e.g. resolvePair(config, "en:es").runConfig. One that does
   * not fit (not an object, a field unknown or out of range) fails the load with the TypeError translate() would
   * throw; a plugin that decides takes one without the language pair, as decide() does.
   */
  config?: RunConfig | Partial<DecisionConfig> | null;
  /** The command serving Python plugins: a path or an argv (default: $MT_EVAL, else `mt-eval`). */
  mtEval?: string | readonly string[] | null;
  /** startGuest options for a plugin that runs out of process (its cwd, config and signal are the plugin's own). */
  guest?: Omit<StartGuestOptions, 'cwd' | 'config' | 'signal'> | null;
  /** How far from 1 decide()'s distributions may sum (default 1e-3). */
  tolerance?: number | null;
  logger?: Logger | null;
  /** Entry fields the method must not see, besides GOLD_FIELDS (reference, references and their aliases: always removed). */
  goldFields?: readonly string[] | null;
  /**
   * false: do not end the process when an in-process translate.js blocks the event loop for longer
   * than a batch may take (config.timeout_s per entry); by default a message is written and it ends.
   */
  watchdog?: boolean | null;
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
   * Load translate.js, or start the guest, now (config: the one a guest starts with; default options.config). Rejects
   * with the reason and the fix (file:line for a syntax error) when the plugin cannot start; so does every later call,
   * at once. A plugin that decides takes a config without the language pair, as decide() does.
   */
  start(config?: RunConfig | Partial<DecisionConfig> | null): Promise<void>;
  /** What the plugin's method.json says it implements. */
  implements: Array<'translate' | 'decide'>;
  /** One checked decision per row (decide plugins); batched like translate(). */
  decide(rows: readonly DecisionRow[], config?: Partial<DecisionConfig>): Promise<DecisionResult[]>;
  /**
   * The merged card: method.json, method_card.json, then what the method reports when it runs (methodCard() of
   * translate.js, or the card the guest sent at initialize). Rejects with ManifestError when it contradicts
   * method.json or is not a valid card. After close() it rejects, as every call does ("the method plugin is closed").
   */
  methodCard(): Promise<MethodCard>;
  /** close() of translate.js, or stop the guest; idempotent. translate(), decide(), start() and methodCard() then reject. */
  close(): Promise<void>;
}

/**
 * Load a method plugin by name or path. translate.js runs in-process; a Python entry runs through
 * `mt-eval serve`; a command through the bridge. Nothing runs before the first translate(). An unknown
 * option, or one whose value does not fit (goldFields not a list of names, options.guest a startGuest option
 * that does not fit or its cwd, config or signal), is a TypeError naming it, whatever runtime the plugin has.
 */
export function loadMethodPlugin(nameOrPath: string, options?: LoadMethodPluginOptions): Promise<MethodPlugin>;

export class PlaceholderError extends Error {}

/**
 * Placeholders ({{name}}, {count}, %s, HTML tags, …) swapped for sentinels ⟦0⟧, ⟦1⟧ … in order; in a text
 * holding an ICU plural, select or selectordinal message, its syntax, # and arguments too, and icu is its
 * skeleton ("{count, plural, one {…} other {…}}"; null: the text has no such message). With icu (the text of a
 * locale file that holds such a message), a text that reads as ICU is an ICU message even with simple arguments
 * only (It''s {name}; icu ""). An apostrophe its ICU text escapes (It''s) is sent as the apostrophe it stands for
 * (It's): apostrophesDoubled says so, for restore.
 */
export function protectPlaceholders(text: string, options?: { icu?: boolean }): {
  text: string; placeholders: string[]; icu: string | null; apostrophesDoubled?: boolean; problem?: string;
};

/**
 * Put placeholders back; throws PlaceholderError unless each sentinel appears exactly once and, given the
 * source's ICU skeleton icu ("" too is one), the result has that skeleton. With apostrophesDoubled (from protectPlaceholders),
 * each apostrophe of the translation's text is written '' as the source wrote its own.
 */
export function restorePlaceholders(translated: string, placeholders: readonly string[], icu?: string | null,
  apostrophesDoubled?: boolean): string;

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
  /**
   * Keys sent (or to send): [key, "new" | "source changed" | "now read as ICU" | "no longer read as ICU" |
   * "method changed" | "forced"].
   */
  due: [string, string][];
  upToDate: number;
  /** Values present but unknown to the lock file: kept and recorded. */
  adopted: string[];
  removed: string[];
  /** Keys written more than once in one object of the target file: the last value is kept, the others dropped. */
  repeated: string[];
  translated: string[];
  /** Keys whose text had nothing to translate (only placeholders, digits, punctuation). */
  copied: string[];
  /** [key, why]; the previous value is kept, if the file had one. */
  failed: [string, string][];
  /** The failed keys the file had no value for: missing from it until a run translates them. */
  leftOut: string[];
  /** Keys due that were not translated before the run was interrupted; their previous values are kept. */
  interrupted: string[];
  written: boolean;
  /** The file could not be read (it is left as it was). */
  error: string | null;
}

export interface LocalesReport {
  dryRun: boolean;
  /** The signal was aborted (Ctrl-C): the last locale is written with what was translated before. */
  interrupted: boolean;
  /** The target locales an interruption left alone. */
  notStarted: string[];
  locales: {
    locale: string;
    pair: string;
    method: string;
    languages: string;
    /** Distinct source texts sent (or that would be). */
    sent: number;
    calls: number;
    files: LocaleFileReport[];
    /** Target files left alone because their source file is gone (their lock entries kept while they are there). */
    orphaned: string[];
  }[];
}

/**
 * Bring a champollion project's target locale files up to date, as `mt-eval-locales` does: only keys
 * missing or changed since the lock file recorded them are sent; placeholders are protected; a failed
 * key keeps its previous value. A rejection's error has a kind: "config" (the config or what it names),
 * "busy" (the project is in use), "method" (a plugin cannot start), "project" (a project file),
 * "interrupted" (the signal ended a wait for the project) or "progress" (the progress callback threw: the run
 * went on without it, and the error's `report` is the run's). An unknown or mistyped option is a TypeError; a null
 * one is left out.
 */
export function translateLocales(configPathOrDir?: string, options?: {
  locales?: readonly string[] | null;
  dryRun?: boolean | null;
  force?: boolean | null;
  progress?: ((locale: string, done: number, total: number) => void) | null;
  onWarning?: ((problem: FileProblem) => void) | null;
  mtEval?: string | readonly string[] | null;
  /** What the plugins' hosts warn of (results for entries never sent, a guest restarted), each after "pair KEY: ". */
  logger?: Logger | null;
  /** How the holder of the project's lock names itself to other processes (default "translateLocales"). */
  command?: string | null;
  /** Seconds to wait for another run of the project (Infinity: no limit); default: refuse at once. */
  wait?: number | null;
  onWait?: ((busy: ProjectBusyError) => void) | null;
  /** A plugin's close() raised or ran past closeTimeoutS (default 10 s): said, and the run carries on without it. */
  onCloseProblem?: ((message: string) => void) | null;
  closeTimeoutS?: number | null;
  /** Seconds each plugin run as a guest (a Python plugin, a command) gets to start (default 30). */
  startTimeoutS?: number | null;
  /** A translate call starts (strings: how many it sends); the function it returns, if any, is called when it ends. */
  onCall?: ((locale: string, strings: number, runConfig: Record<string, unknown>) => (() => void) | void) | null;
  /**
   * Once aborted, nothing more is sent: the locale in progress is written with what was translated, the
   * report says interrupted; a wait for the project ends (rejecting, kind "interrupted").
   */
  signal?: AbortSignal | null;
}): Promise<LocalesReport>;

/** What failed, on the error translateLocales rejects with (a TypeError for an unknown or mistyped option aside). */
export type LocalesErrorKind = 'config' | 'busy' | 'method' | 'project' | 'interrupted' | 'progress';

/** The error translateLocales rejects with: `catch (error) { if ((error as LocalesError).kind === 'busy') ... }`. */
export interface LocalesError extends Error {
  kind: LocalesErrorKind;
  /** With kind "progress": the report of the run, which went on without the callback and wrote its files. */
  report?: LocalesReport;
}

/** Another process (Node or Python) is translating the project (what); holder names it. */
export class ProjectBusyError extends Error {
  readonly what: string;
  readonly holder: { pid?: number; started_at?: string; command?: string; host?: string };
  constructor(what: string, holder: { pid?: number; started_at?: string; command?: string; host?: string });
}

/**
 * Hold a champollion project (its locales directory) until release(), as translateLocales does;
 * the same lock as Python's `mt-eval locales`. Rejects with ProjectBusyError when another holds it.
 */
export function acquireProjectLock(localesDir: string, options?: {
  command?: string;
  waitS?: number | null;
  onWait?: (busy: ProjectBusyError) => void;
  /** Ends a wait when aborted (rejecting with its reason). */
  signal?: AbortSignal;
}): Promise<{ release(): Promise<void> }>;

/** The method module could not be loaded; the message names file:line and the fix. */
export class MethodLoadError extends Error {}
