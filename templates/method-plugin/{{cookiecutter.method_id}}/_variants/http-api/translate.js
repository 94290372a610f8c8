// An API method: one call per sentence to an external, LibreTranslate-compatible translation API.
//
// The address comes from the run's configuration, never from this file: config.params.api_url, e.g.
// "https://translate.example.org/translate". Each sentence is POSTed as JSON
// {"q": source, "source": ..., "target": ..., "format": "text"} and the answer's translatedText is the
// translation. Language codes are sent as the run gives them, unless config.params.language_codes maps
// them (e.g. {"eng": "en", "spa": "es"}). An API key, when the service needs one, is read from the
// environment variable MT_EVAL_TRANSLATION_API_KEY and sent as "api_key".
//
// pipeline.py beside this file behaves identically. Needs only Node (>= 20): the global fetch.
import { EntryError, mapConcurrently, postJson } from './http_json.js';

const API_KEY_VARIABLE = 'MT_EVAL_TRANSLATION_API_KEY';

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);


/** Why these parameters cannot run (null when they can). */
export function configProblem(params) {
  const url = params.api_url;
  if (url === undefined || url === null || url === '') {
    return 'config.params["api_url"] is not set: give the translation endpoint, e.g. mt-eval run --param '
      + 'api_url=http://127.0.0.1:5000/translate';
  }
  if (typeof url !== 'string' || !(url.startsWith('http://') || url.startsWith('https://'))) {
    return `config.params["api_url"] ${JSON.stringify(url)} is not an http:// or https:// address`;
  }
  const codes = params.language_codes;
  if (codes !== undefined && codes !== null
      && !(isObject(codes) && Object.values(codes).every((value) => typeof value === 'string'))) {
    return 'config.params["language_codes"] must map language codes to codes, e.g. {"eng": "en"}';
  }
  return null;
}

async function translateOne(entry, config) {
  const started = performance.now();
  const params = config.params;
  const url = params.api_url;
  const codes = params.language_codes ?? {};
  const code = (lang) => (Object.hasOwn(codes, lang) ? codes[lang] : lang);
  const body = { q: entry.source, source: code(config.source_lang), target: code(config.target_lang), format: 'text' };
  const key = process.env[API_KEY_VARIABLE];
  if (key) body.api_key = key;
  let translated;
  try {
    const data = await postJson(url, body, config.timeout_s ?? 120);
    translated = data.translatedText;
    if (typeof translated !== 'string') throw new EntryError(`the answer from ${url} has no translatedText`);
  } catch (error) {
    if (!(error instanceof EntryError)) throw error;
    return { id: entry.id, predicted: null, error: error.message, latency_s: (performance.now() - started) / 1000 };
  }
  return { id: entry.id, predicted: translated, latency_s: (performance.now() - started) / 1000 };
}

// An API that allows only a few requests at once: say how many calls of translate() may run together (64 unless
// said), and no host sends more, whatever its --concurrency.
// export const capabilities = { max_concurrency: 2 };

/** Translate every entry, at most config.concurrency requests at a time. */
export async function translate(entries, config) {
  const problem = configProblem(config.params ?? {});
  if (problem) return entries.map((entry) => ({ id: entry.id, predicted: null, error: problem }));
  return mapConcurrently(entries, config.concurrency ?? 8, (entry) => translateOne(entry, config));
}
