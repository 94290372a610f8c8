// Translating a project's locales (as mt_eval.champollion.sync, byte for byte): per target locale, the
// due source texts of all its files — each once, in file and key order — are protected (as ICU messages in a file
// that holds ICU messages: plan.js), sent in batches of the pair's batchSize and restored. A text with nothing to
// translate is copied. A failed key keeps its previous value (or stays out) and its previous lock entry, as does a
// key not translated when the run was interrupted (its locale is written with what was translated). Files are written only when their
// bytes change (a new one not created empty when none of its keys got a value), the lock file likewise. A target file that cannot be written is an error of that file
// alone (the others are written), and keeps its lock entries.
import { join } from 'node:path';

import { LONGEST_DELAY } from '../child.js';
import { codeSha256 } from '../code-hash.js';
import { callFailure } from '../host-failures.js';
import { prefixedLogger } from '../host-options.js';
import { problemIn } from '../lone-surrogates.js';
import { readMethodManifest } from '../manifest.js';
import { FileProblem, isFile, unwritable, writeAtomic } from './files.js';
import { formatJson } from './json.js';
import { LanguageError, pairLanguages, sameLocale } from './languages.js';
import { describeEscaped } from './method-guard.js';
import { checkLocalesOptions } from './options.js';
import { dropStaleFiles, fill, findLocaleFiles, slots } from './locales.js';
import { LOCK_FILE, methodFingerprint, readLock, withValue } from './lockfile.js';
import { hasWords, keepEdges, PlaceholderError, protect, restore } from './placeholders.js';
import { editedSinceRead, planFile, sourceOf } from './plan.js';
import { checkLocalesDir, readChampollionConfig, splitPairKey } from './config.js';
import { loadMethodPlugin, resolveMethodPlugin } from './plugins.js';
import { acquireProjectLock } from './project-lock.js';

/** Batches of one locale in flight at once. */
export const BATCHES_IN_FLIGHT = 4;
/** Seconds a plugin's close() is waited for at the end of a run (as Python's guarded_close waits for aclose()). */
export const CLOSE_TIMEOUT_S = 10;
const BLANK = /^[ \t\r\n]*$/; // a translation with nothing in it

/**
 * A pair with its plugin resolved and its RunConfig worked out: {pair, directory, methodId, runConfig,
 * fingerprint, languages}. Throws MethodPluginNotFoundError, ManifestError or LanguageError.
 */
export function pairMethod(config, pair) {
  const directory = resolveMethodPlugin(pair.methodPlugin, { baseDir: config.directory, pair: pair.key });
  const manifest = readMethodManifest(directory, `methodPlugin of ${pair.key}: ${directory} is not a valid plugin`);
  let languages;
  try {
    languages = pairLanguages(pair.source, pair.target, manifest.supportedPairs,
      { sourceLanguage: pair.sourceLanguage, targetLanguage: pair.targetLanguage });
  } catch (error) {
    if (!(error instanceof LanguageError)) throw error;
    throw new LanguageError(`pair ${JSON.stringify(pair.key)}: ${manifest.methodId} (${directory}): ${error.message}. `
      + 'Set "sourceLanguage" and "targetLanguage" in the pair to codes the method supports');
  }
  const [sourceLang, targetLang] = languages;
  const runConfig = { source_lang: sourceLang, target_lang: targetLang, batch_size: pair.batchSize };
  if (pair.model !== null) runConfig.model = pair.model;
  if (pair.temperature !== null) runConfig.temperature = pair.temperature;
  if (pair.timeoutS !== null) runConfig.timeout_s = pair.timeoutS;
  return {
    pair, directory, methodId: manifest.methodId, runConfig,
    fingerprint: methodFingerprint(manifest.methodId, codeSha256(directory), sourceLang, targetLang, pair.model, pair.temperature),
    languages: `${sourceLang}>${targetLang}`,
  };
}

/** pairMethod for the pair written `key` (any separator) of a config read by readChampollionConfig. */
export function resolvePair(config, key) {
  const wanted = splitPairKey(key);
  const pair = config.pairs.find((p) => p.key === key || (wanted !== null && sameLocale(p.source, wanted[0]) && sameLocale(p.target, wanted[1])));
  if (!pair) throw new Error(`${config.file} has no pair ${key}; its pairs: ${config.pairs.map((p) => p.key).join(', ') || 'none'}`);
  return pairMethod(config, pair);
}

/** Say what failed (error.kind: config, busy, method or project), unless something closer to it already did. */
function failedAs(kind, error) {
  if (error instanceof Error && error.kind === undefined) error.kind = kind;
  return error;
}

/**
 * Read a config and bring its locales up to date (what mt-eval-locales does). options: locales (target
 * locales to do; default all), dryRun, force, progress(locale, done, total), onWarning(problem),
 * mtEval (the command serving Python plugins), logger (what the plugins' hosts warn of, each message after
 * "pair KEY: "), command (how the holder of the project's lock names itself), wait (seconds to wait for
 * another run of the project; Infinity: no limit; default: do not wait), onWait(busy), onCloseProblem(message) (a plugin's close() failed or ran past closeTimeoutS, default
 * CLOSE_TIMEOUT_S: the run carries on without it), onCall(locale, strings, runConfig) (a translate call starts; the
 * function it returns, if any, is called when the call ends), signal (an AbortSignal: once aborted, nothing more is sent, what was translated
 * is written, and the report says interrupted; while waiting for the project, the wait ends). Resolves to
 * the report; rejects with ChampollionConfigError, LocalesDirError,
 * MethodPluginNotFoundError, LanguageError or ManifestError before anything is sent, and with
 * ProjectBusyError when another process (Node or Python) holds the project. A dry run takes no lock.
 * The error's kind says what failed: "config" (the config or what it names), "busy" (the project is in
 * use), "method" (a plugin cannot start), "project" (a project file) or "progress" (the progress callback threw:
 * the run went on without it, its files are written, and error.report is its report). An unknown or mistyped
 * option is a TypeError naming it, before anything is read.
 */
export async function translateLocales(configPathOrDir, options = {}) {
  checkLocalesOptions(configPathOrDir, options);
  let config;
  let methods;
  try {
    config = readChampollionConfig(configPathOrDir);
    for (const warning of config.warnings) options.onWarning?.(warning);
    const wanted = options.locales ?? [];
    const unknown = wanted.filter((locale) => !config.pairs.some((pair) => sameLocale(locale, pair.target)));
    if (unknown.length) {
      throw new Error(`--locale ${unknown.join(', ')}: not a target locale of ${config.file} (its targets: ${config.pairs.map((p) => p.target).join(', ')})`);
    }
    const pairs = config.pairs.filter((pair) => !wanted.length || wanted.some((locale) => sameLocale(locale, pair.target)));
    checkLocalesDir(config);
    methods = pairs.map((pair) => pairMethod(config, pair));
  } catch (error) {
    throw failedAs('config', error);
  }
  const opened = [];
  const open = async (method) => {
    try {
      // (what its host warns of names the pair: with several, which one it concerns could not be told)
      const logger = prefixedLogger(options.logger, `pair ${method.pair.key}: `);
      const guest = options.startTimeoutS ? { startTimeoutMs: options.startTimeoutS * 1000 } : undefined;
      const plugin = await loadMethodPlugin(method.directory, { mtEval: options.mtEval, logger, guest });
      opened.push(plugin);
      try {
        await plugin.start(method.runConfig);
      } catch (error) {
        throw new Error(`pair ${method.pair.key}: ${method.methodId} (${method.directory}) cannot start: ${error.message}`,
          { cause: error });
      }
      return async (entries, runConfig) => {
        const answered = options.onCall?.(method.pair.target, entries.length, runConfig); // (said while it waits long)
        try { return await plugin.translate(entries, runConfig); } finally { answered?.(); }
      };
    } catch (error) {
      throw failedAs('method', error);
    }
  };
  let lock = null;
  try {
    if (!options.dryRun) {
      lock = await acquireProjectLock(config.localesDir, {
        command: options.command ?? 'translateLocales', waitS: options.wait ?? null, onWait: options.onWait, signal: options.signal,
      });
    }
  } catch (error) {
    throw failedAs({ ProjectBusyError: 'busy', AbortError: 'interrupted' }[error.name] ?? 'project', error);
  }
  // A progress callback that throws is not called again, and costs nothing translated: the run goes on, its files
  // are written, and then the error is thrown (kind "progress", with the run's report).
  let progressError = null;
  const progress = options.progress && ((...args) => {
    if (progressError !== null) return;
    try {
      options.progress(...args);
    } catch (error) {
      progressError = error instanceof Error ? error : new Error(`the progress callback threw ${String(error)}`);
    }
  });
  try {
    const report = await syncLocales(config, methods, open, { ...options, progress });
    if (progressError !== null) throw Object.assign(failedAs('progress', progressError), { report });
    return report;
  } catch (error) {
    throw failedAs('project', error);
  } finally {
    const problems = await Promise.all(opened.map((plugin) => closeWithin(plugin, options.closeTimeoutS ?? CLOSE_TIMEOUT_S)));
    for (const problem of problems) if (problem !== null) options.onCloseProblem?.(problem);
    await lock?.release();
  }
}

/**
 * plugin.close(), waited for at most timeoutS: null once closed, else what went wrong ("ID's close() raised …",
 * "… did not return within 10 s"). What was translated is written by then; a close that fails cannot undo it.
 * A wait longer than setTimeout's longest (24.8 days, which would fire at once) is cut to it: practically never.
 */
async function closeWithin(plugin, timeoutS) {
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, Math.min(timeoutS * 1000, LONGEST_DELAY), 'late'); });
  try {
    const outcome = await Promise.race([plugin.close().then(() => 'closed'), late]);
    return outcome === 'closed' ? null : `${plugin.methodId}'s close() did not return within ${timeoutS} s`;
  } catch (error) {
    return `${plugin.methodId}'s close() raised ${describeEscaped(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Bring every pair's target files up to date. openMethod(pairMethod) is awaited only for a pair with
 * texts to send and returns translate(entries, runConfig) → results ({id, predicted} or {id, error});
 * when it rejects (the method cannot start), so does syncLocales, once, at once: locales done before
 * are saved, nothing is sent for the others. Once signal (an AbortSignal: Ctrl-C) is aborted, nothing
 * more is sent: the locale in progress is written with what was translated (and its lock entries), the
 * others are not started, and the report says interrupted (and notStarted: their target locales).
 * Returns the report ({dryRun, locales: [...]}) that report.js renders.
 */
export async function syncLocales(config, methods, openMethod, { dryRun = false, force = false, progress, signal } = {}) {
  checkLocalesDir(config);
  const files = findLocaleFiles(config.localesDir, config.inputLocale);
  const lockPath = join(config.localesDir, LOCK_FILE);
  const lock = readLock(lockPath);
  let saved = isFile(lockPath) ? lock.toJson() : null;
  const save = () => {
    if (saved === null && lock.files.size === 0) return; // no lock file yet, and nothing to record in one
    const text = lock.toJson();
    if (text !== saved) writeAtomic(lockPath, text);
    saved = text;
  };
  const report = { dryRun, locales: [], interrupted: false, notStarted: [] };
  for (const [index, method] of methods.entries()) {
    if (signal?.aborted) {
      Object.assign(report, { interrupted: true, notStarted: methods.slice(index).map((m) => m.pair.target) });
      break;
    }
    const locale = method.pair.target;
    const leaveOut = `remove ${JSON.stringify(method.pair.key)} from the pairs of ${config.file}`;
    const plans = files.sources.map((name) => planFile(files, name, config.localesDir, config.inputLocale, locale, lock,
      method.fingerprint, { force, leaveOut }));
    const localeReport = { locale, pair: method.pair.key, method: method.methodId, languages: method.languages, sent: 0, calls: 0, files: [], orphaned: [] };
    report.locales.push(localeReport);
    const texts = new Map();
    for (const plan of plans) {
      for (const { slot, text } of plan.due) if (!texts.has(text)) texts.set(text, protect(slot.source, { icu: plan.icu }));
    }
    const outcomes = new Map([...texts].filter(([, p]) => !hasWords(p)).map(([text]) => [text, { text: sourceOf(text) }]));
    const sendable = [];
    for (const [text, protectedText] of texts) {
      if (!hasWords(protectedText)) continue;
      // Text nesting ICU messages too deep, or not valid Unicode, fails before it is sent (as a method's call would
      // fail it): not counted as sent.
      const invalid = protectedText.problem ?? problemIn({ source: protectedText.text }, 'entry');
      if (invalid === null) sendable.push(text);
      else outcomes.set(text, { error: invalid });
    }
    const size = method.runConfig.batch_size;
    localeReport.sent = sendable.length;
    localeReport.calls = Math.ceil(sendable.length / size);
    if (sendable.length && !dryRun) {
      const problem = unwritable(lockPath);
      if (problem) throw problem; // what is translated could not be recorded, and would be paid for again
      const batches = [];
      for (let i = 0; i < sendable.length; i += size) batches.push(sendable.slice(i, i + size));
      const sent = { strings: 0, calls: 0 };
      if (await unlessAborted(send(openMethod, method, batches, texts, outcomes, progress, sent, signal), signal)) {
        Object.assign(report, { interrupted: true, notStarted: methods.slice(index + 1).map((m) => m.pair.target) });
        Object.assign(localeReport, { sent: sent.strings, calls: sent.calls });
      }
    }
    for (const plan of plans) localeReport.files.push(finishFile(plan, outcomes, texts, lock, method.fingerprint, dryRun));
    localeReport.orphaned = dropStaleFiles(lock, files, locale, plans, config.localesDir);
    if (!dryRun) save(); // after each locale, so an interrupted run loses no record of what it wrote
    if (report.interrupted) break;
  }
  if (!dryRun) save();
  return report;
}

/**
 * Start the pair's method and translate the locale's batches, BATCHES_IN_FLIGHT at a time, counting each in sent
 * as it is handed to the method (one in flight when the run is interrupted was sent, and may have been paid for) and
 * reporting progress as each is answered; once signal is aborted, nothing more is sent or kept.
 */
async function send(openMethod, method, batches, texts, outcomes, progress, sent, signal) {
  const translate = await openMethod(method);
  const total = batches.reduce((sum, batch) => sum + batch.length, 0);
  let next = 0;
  let answered = 0;
  const worker = async () => {
    while (next < batches.length && !signal?.aborted) {
      const batch = batches[next++];
      sent.strings += batch.length;
      sent.calls += 1;
      const translated = await translateBatch(translate, batch, texts, method.runConfig);
      if (signal?.aborted) return;
      for (const [text, outcome] of translated) outcomes.set(text, outcome);
      answered += batch.length;
      progress?.(method.pair.target, answered, total);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCHES_IN_FLIGHT, batches.length) }, worker));
}

/** Await work unless signal is aborted first; true when it was (before or during it). */
async function unlessAborted(work, signal) {
  if (!signal) {
    await work;
    return false;
  }
  let onAbort;
  const aborted = new Promise((resolve) => {
    onAbort = () => resolve(true);
    if (signal.aborted) resolve(true);
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work.then(() => signal.aborted), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    work.catch(() => {}); // what it does once interrupted is not waited for
  }
}

async function translateBatch(translate, batch, texts, runConfig) {
  const entries = batch.map((text, i) => ({ id: String(i + 1), source: texts.get(text).text }));
  const out = new Map();
  let results;
  try {
    results = await translate(entries, runConfig);
  } catch (error) {
    for (const text of batch) out.set(text, { error: callFailure(error) });
    return out;
  }
  const byId = new Map(results.map((result) => [result.id, result]));
  entries.forEach((entry, i) => {
    const text = batch[i];
    const result = byId.get(entry.id) ?? {};
    if ((result.error !== null && result.error !== undefined) || typeof result.predicted !== 'string') {
      out.set(text, { error: String(result.error || 'the method returned no translation') });
      return;
    }
    if (BLANK.test(result.predicted)) { // (a text is sent when it has words to translate: hasWords)
      out.set(text, { error: `the translation ${JSON.stringify(result.predicted)} is empty` });
      return;
    }
    try {
      const { placeholders, icu, apostrophesDoubled } = texts.get(text);
      out.set(text, { text: keepEdges(sourceOf(text), restore(result.predicted, placeholders, icu, apostrophesDoubled)) });
    } catch (error) {
      if (!(error instanceof PlaceholderError)) throw error;
      out.set(text, { error: error.message });
    }
  });
  return out;
}

function finishFile(plan, outcomes, texts, lock, fingerprint, dryRun) {
  const failed = [...new Map(plan.collisions.map((slot) => [slot.key, slot.collision]))]; // once per key
  const report = {
    file: plan.name, due: plan.due.map(({ slot, reason }) => [slot.key, reason]), upToDate: plan.upToDate,
    adopted: plan.adopted, removed: plan.removed, repeated: plan.repeated, translated: [], copied: [], failed,
    leftOut: failed.map(([key]) => key), // failed keys with no previous value: missing from the file
    interrupted: [], written: false, error: plan.error,
  };
  if (plan.error !== null || dryRun) return report;
  const dueKeys = new Set(plan.due.map(({ slot }) => slot.key));
  const values = new Map([...plan.previous].filter(([key]) => plan.keep.has(key) || dueKeys.has(key)));
  const entries = new Map(plan.keep);
  let edited; // a value a person saved while the keys were translated is kept (adopted), not written over
  try {
    edited = new Map([...editedSinceRead(plan)].filter(([key]) => values.has(key) || dueKeys.has(key)));
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    report.error = error.message; // edited meanwhile into what cannot be read: left as it is, with its lock entries
    return report;
  }
  const sources = new Map([...[...entries].map(([key, entry]) => [key, entry.source]),
    ...plan.due.map(({ slot, sourceHash }) => [slot.key, sourceHash])]);
  for (const [key, text] of edited) {
    values.set(key, text);
    entries.set(key, { source: sources.get(key), method: null });
  }
  report.adopted = [...plan.adopted, ...[...edited.keys()].filter((key) => !plan.adopted.includes(key))];
  for (const { slot, text: key, sourceHash } of plan.due) {
    if (edited.has(slot.key)) continue;
    const outcome = outcomes.get(key);
    if (outcome === undefined) { // the run was interrupted before it was translated
      report.interrupted.push(slot.key);
      continue;
    }
    if (outcome.text === undefined) {
      const kept = plan.previous.has(slot.key);
      report.failed.push([slot.key, `${outcome.error || 'not translated'}; ${kept ? 'kept the previous value' : 'left out of the file'}`]);
      if (!kept) report.leftOut.push(slot.key);
      continue;
    }
    values.set(slot.key, outcome.text);
    entries.set(slot.key, { source: sourceHash, method: fingerprint });
    (hasWords(texts.get(key)) ? report.translated : report.copied).push(slot.key);
  }
  if (plan.previousText === null && values.size === 0 && (plan.due.length || plan.collisions.length)) { // nothing to put in a file not there yet
    lock.files.delete(plan.name);
    return report;
  }
  const text = formatJson(fill(plan.shape, values));
  if (text !== plan.previousText) {
    try {
      if (plan.readOnly) throw plan.readOnly; // (nothing was due: only keys removed, or its layout, would change it)
      writeAtomic(plan.path, text);
    } catch (error) {
      if (!(error instanceof FileProblem)) throw error;
      report.error = error.message; // its lock entries stay as they were: what it lacks is sent again next time
      return report;
    }
    report.written = true;
  }
  lock.files.set(plan.name, new Map(slots(plan.shape)
    .filter((slot) => entries.has(slot.key) && values.has(slot.key) && !slot.collision)
    .map((slot) => [slot.key, withValue(entries.get(slot.key), values.get(slot.key))])));
  return report;
}
