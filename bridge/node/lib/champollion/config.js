// champollion.config.json version 3: which method plugin translates each language pair. Checked as the
// Python side checks it (mt_eval.champollion.config): against the generated schema
// bridge/schemas/champollion-config.schema.json (lib/contract/decode.js), then the rules below — every
// problem at once, each with its JSON path, in the same order; unknown fields are warnings.
// bridge/vectors/champollion/config.json holds the cases both sides pass.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { decodeValue } from '../contract/decode.js';
import { ProblemsError, jsonPath, makeProblem, renderProblem } from '../contract/words.js';
import { registerRules } from '../contract/rules.js';
import { parseJsonBytes } from '../json-text.js';
import { isDirectory, stats, strerror } from './files.js';
import { LOCALE_PATTERN, normalizeLocale } from './languages.js';

export { jsonPath, renderProblem };
export const CONFIG_FILE = 'champollion.config.json';
export const CONFIG_VERSION = 3;
const PAIR_SEPARATORS = ['->', '→', ':'];

/** localesDir names no directory; the message names it, the config and the fix. */
export class LocalesDirError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LocalesDirError';
  }
}

/** Throw LocalesDirError when a config's localesDir is not a directory (before anything else is done there). */
export function checkLocalesDir(config) {
  const found = stats(config.localesDir, false);
  if (found !== null && isDirectory(config.localesDir)) return;
  const what = found === null ? 'does not exist' : 'is not a directory';
  throw new LocalesDirError(`localesDir ${config.localesDir} ${what}: set "localesDir" in ${config.file} to the directory `
    + `that holds the locale files (${config.inputLocale}/*.json or ${config.inputLocale}.json), relative to the config`);
}

/**
 * The config has errors; problems lists every one (and the warnings). Its message says them all, the errors and then
 * the warnings found with them — an unknown field ("inputLocal") is often the fix of an error ("no inputLocale"), and
 * an empty "pairs" is as much a problem as the inputLocale it leaves nothing to take from.
 */
export class ChampollionConfigError extends ProblemsError {
  constructor(file, problems) {
    super(problems, `${file} is not a valid champollion config`);
    this.name = 'ChampollionConfigError';
    const warnings = problems.filter((problem) => problem.severity === 'warning');
    if (warnings.length) this.message = [this.message, ...warnings.map(renderProblem)].join('\n');
  }
}

/** Parse and check a config's text or bytes: [value (plain data with defaults) or null, problems]. */
export function decodeConfig(text, file) {
  const [data, problems] = parseJsonBytes(typeof text === 'string' ? Buffer.from(text, 'utf8') : text, file);
  if (data === null && problems.length) return [null, problems]; // (null alone: the file holds null, said below)
  const { value, problems: more } = decodeValue(data, 'champollion-config', { file });
  return [value, [...problems, ...more]];
}

/** inputLocale, or the source locale every pair key names (null when there is none, or several). */
export function sourceLocale(config) {
  if (config.inputLocale !== null && config.inputLocale !== undefined) return config.inputLocale;
  const sources = Object.keys(config.pairs).map(splitPairKey).filter(Boolean).map(([source]) => source);
  return sources.length && new Set(sources.map(normalizeLocale)).size === 1 ? sources[0] : null;
}

const finding = (at, message, hint, code, severity = 'error') => ({ at, message, hint, code, severity });

function configRules(config) {
  const out = [];
  const { version, pairs } = config;
  if (version !== CONFIG_VERSION) {
    out.push(finding(['version'], `version ${version} is not supported: this reader understands champollion.config.json version ${CONFIG_VERSION}`,
      'write the file in the version 3 format (see the README)', 'version'));
  }
  const keys = Object.keys(pairs);
  if (keys.length === 0) out.push(finding(['pairs'], 'no pairs: nothing will be translated', 'add one, e.g. "en:es": {"methodPlugin": "my-method"}', 'empty', 'warning'));
  const input = sourceLocale(config);
  if (input === null) {
    const sources = [...new Set(keys.map(splitPairKey).filter(Boolean).map(([source]) => source))];
    if (sources.length > 1) {
      out.push(finding(['inputLocale'], `no inputLocale, and the pairs translate from ${sources.join(', ')}`,
        'add "inputLocale": the locale every pair translates from', 'input-locale'));
      return out;
    }
    if (!keys.length) {
      out.push(finding(['inputLocale'], 'no inputLocale, and no pair key to take it from',
        'add "inputLocale": the locale of your source strings, e.g. "en"', 'input-locale'));
      return out;
    }
  }
  const seen = new Map();
  for (const key of keys) {
    const parsed = splitPairKey(key);
    if (parsed === null) {
      out.push(finding(['pairs', key], ...pairKeyProblem(key), 'pair-key'));
      continue;
    }
    const [source, target] = parsed.map(normalizeLocale);
    const id = `${source}\n${target}`;
    if (source !== normalizeLocale(input)) {
      out.push(finding(['pairs', key], `translates from ${parsed[0]}, but inputLocale is ${input}`, `every pair starts from the input locale: "${input}:${parsed[1]}"`, 'pair-source'));
    } else if (target === source) {
      out.push(finding(['pairs', key], 'source and target locales are the same', 'name a target locale other than the input locale', 'pair-target'));
    } else if (seen.has(id)) {
      out.push(finding(['pairs', key], `the same pair as ${JSON.stringify(seen.get(id))}`, 'keep one of them', 'pair-duplicate'));
    } else {
      seen.set(id, key);
    }
  }
  return out;
}

registerRules('ChampollionConfigFile', configRules);

/** "en:es", "en->es" or "en→es" → ["en", "es"]; null when it is not a pair of locales. */
export function splitPairKey(key) {
  for (const separator of PAIR_SEPARATORS) {
    if (!key.includes(separator)) continue;
    const parts = key.split(separator).map((part) => part.trim());
    return parts.length === 2 && parts.every((part) => LOCALE_PATTERN.test(part)) ? parts : null;
  }
  return null;
}

/**
 * Why key is no pair of locales, and the fix: [message, hint]. A key of the form "src:tgt" names the halves that
 * are not locale codes, as a bad inputLocale is named.
 */
function pairKeyProblem(key) {
  const separator = PAIR_SEPARATORS.find((s) => key.includes(s));
  const parts = separator ? key.split(separator).map((part) => part.trim()) : [];
  if (parts.length === 2 && parts.every(Boolean) && !parts.some((part) => PAIR_SEPARATORS.some((s) => part.includes(s)))) {
    const bad = parts.filter((part) => !LOCALE_PATTERN.test(part)).map((part) => JSON.stringify(part));
    const said = bad.length === 1 ? `${bad[0]} is not a locale code` : `${bad[0]} and ${bad[1]} are not locale codes`;
    return [said, 'use a locale code such as "en", "es" or "pt-BR"'];
  }
  return [`${JSON.stringify(key)} is not a language pair`, 'write it as "src:tgt" (also "src->tgt" or "src→tgt"), e.g. "en:es"'];
}

/** The config file for path: the file itself, or champollion.config.json in a directory. */
export function configPath(path) {
  const chosen = path === undefined || path === null ? CONFIG_FILE : path || '.'; // (--config "": here, as in Python)
  try {
    if (statSync(chosen).isDirectory()) return join(chosen, CONFIG_FILE);
  } catch { /* reported when it is read */ }
  return chosen;
}

/**
 * Read a config: {file, directory, inputLocale, localesDir, pairs: [{key, source, target, methodPlugin,
 * model, temperature, batchSize, timeoutS, sourceLanguage, targetLanguage}], warnings}. Throws
 * ChampollionConfigError listing every error.
 */
export function readChampollionConfig(path) {
  const given = configPath(path);
  const file = resolve(given);
  let text;
  try {
    text = readFileSync(file);
  } catch (error) {
    if (!error.code) throw error;
    const readable = error.code === 'EACCES' || error.code === 'EPERM';
    throw new ChampollionConfigError(given, [makeProblem(given, '$', `cannot read file: ${strerror(error)}`,
      { hint: readable ? `make it readable (chmod u+r ${given})` : 'give the path of champollion.config.json with --config', code: 'io' })]);
  }
  const [data, problems] = decodeConfig(text, given);
  if (data === null || problems.some((p) => p.severity === 'error')) throw new ChampollionConfigError(given, problems);
  const pairs = Object.entries(data.pairs).map(([key, settings]) => {
    const [source, target] = splitPairKey(key);
    return { key, source, target, ...settings };
  });
  return {
    file,
    directory: dirname(file),
    inputLocale: sourceLocale(data),
    localesDir: resolve(dirname(file), data.localesDir),
    pairs,
    warnings: problems.filter((p) => p.severity === 'warning'),
  };
}
