// What a method author and a host user write against the package's types, compiled (never run) by
// `nox -s typecheck`: `tsc -p test/types` checks index.d.ts, every file it imports and this file, strictly.
// A declaration that breaks (a type no file exports, a field typed wrongly) fails it.
import { readFileSync } from 'node:fs';

import {
  loadMethod,
  loadMethodPlugin,
  readChampollionConfig,
  resolveMethod,
  startGuest,
  translateLocales,
  type CorpusEntry,
  type DecisionCard,
  type DecisionFailure,
  type DecisionRow,
  type HostedGuest,
  type MethodPlugin,
  type PartialTranslationResult,
  type RunCard,
  type RunConfig,
  type TranslationMethodModule,
  type TranslationResult,
} from 'mt-eval-bridge';

// A method author's translate.js: its exports, as the guest calls them.
export const name = 'Upper case';

export async function translate(entries: CorpusEntry[], config: Required<RunConfig>, options: { signal: AbortSignal }):
  Promise<PartialTranslationResult[]> {
  options.signal.throwIfAborted();
  const batch: number = config.batch_size;
  return entries.slice(0, batch).map((entry) => ({
    id: entry.id,
    predicted: entry.source.toUpperCase(),
    metadata: { pair: `${config.source_lang}>${config.target_lang}` },
  }));
}

export const method: TranslationMethodModule = {
  name,
  translate,
  decide: async (rows: DecisionRow[]) => rows.map((row) => ({ id: row.id, error: 'not implemented' })),
  capabilities: { max_concurrency: 4 },
};

// A host user: start a guest, translate through it, read the results, close it.
export async function host(): Promise<string[]> {
  const config: RunConfig = { source_lang: 'eng', target_lang: 'spa', params: { glossary: true } };
  const guest = await startGuest(['mt-eval-guest', 'translate.js'], { config, requestTimeoutMs: 10_000 });
  try {
    const results: TranslationResult[] = await guest.translate([{ id: '1', source: 'Hello' }]);
    const tokens: number | null = results[0].usage.total_tokens ?? null;
    const texts = results.map((result) => result.predicted ?? result.error ?? '');
    return [...texts, String(tokens), guest.info.method.method_id, String(guest.capabilities.max_batch)];
  } finally {
    await guest.close();
  }
}

// Reading the cards `mt-eval run` and `mt-eval decide` write.
export function failedQuestions(path: string): string[] {
  const card = JSON.parse(readFileSync(path, 'utf8')) as DecisionCard;
  const failures: DecisionFailure[] = card.failures;
  return failures.map((failure) => {
    const question: string | null | undefined = failure.question; // a row's own error has none
    return `${failure.example_id}: ${question ?? 'the row'}: ${failure.message} (×${failure.count})`;
  });
}

export function runFailures(card: RunCard): string[] {
  return (card.failures ?? []).map((failure) => `${failure.example_id}: ${failure.message} (×${failure.count})`);
}

// A host user reading a guest's initialize result: what the protocol lets a guest leave out is possibly absent,
// and the host's own view of the capabilities has every field filled in.
declare const hosted: HostedGuest;
export const card: undefined extends HostedGuest['info']['card'] ? true : false = true;
export const sentCapabilities: undefined extends HostedGuest['info']['capabilities'] ? true : false = true;
export const peer: undefined extends HostedGuest['info']['guest'] ? true : false = true;
export const nullPeer: null extends HostedGuest['info']['guest'] ? true : false = true;
export const implemented: string[] | undefined = hosted.info.implements;
export const concurrency: number = hosted.capabilities.max_concurrency;
export const cancels: boolean = hosted.capabilities.cancel;

// A plugin that decides is loaded with a config that has no language pair, as decide() takes one.
export const decider = loadMethodPlugin('./my-grader', { config: { model: 'grader-1' } });

// A plugin that decides starts with the config decide() takes (no language pair); a guest's calls take null as no
// config (the start's is used); a loaded module says which file it is.
export async function startDecider(plugin: MethodPlugin, guest: HostedGuest, entries: CorpusEntry[], rows: DecisionRow[]):
  Promise<string> {
  await plugin.start({ batch_size: 4 });
  await plugin.start(null);
  const results: TranslationResult[] = await guest.translate(entries, null);
  const decided = await guest.decide(rows, null);
  const loaded = await loadMethod(resolveMethod({ directory: 'my-plugin' }));
  const file: string = loaded.file;
  return [file, results.length, decided.length].join(' ');
}

// Every option of startGuest, loadMethodPlugin and translateLocales may be null: the same as leaving it out.
export function optionsLeftNull(timeoutMs: number | null, closeTimeoutS: number | null): unknown[] {
  return [
    startGuest(['mt-eval-guest', 'translate.js'], {
      requestTimeoutMs: timeoutMs, cwd: null, signal: null, logger: null, restartBudget: { restarts: null, windowMs: null },
    }),
    loadMethodPlugin('./my-plugin', { baseDir: null, guest: { requestTimeoutMs: timeoutMs }, watchdog: null }),
    translateLocales(undefined, { closeTimeoutS, progress: null, locales: null, dryRun: null, signal: null }),
    readChampollionConfig(null),
  ];
}
