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
const API_KEY_VARIABLE = 'MT_EVAL_TRANSLATION_API_KEY';

/** One entry failed; the message becomes its `error`. */
class EntryError extends Error {}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The useful part of an error response: its error message, else the start of the body. */
export function errorDetail(body) {
  let data;
  try {
    data = JSON.parse(body);
  } catch {
    return body.trim().slice(0, 200);
  }
  const error = isObject(data) ? data.error : undefined;
  if (isObject(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  return body.trim().slice(0, 200);
}

/** POST `body` as JSON and return the decoded JSON object; failures throw EntryError. */
export async function postJson(url, body, timeoutS) {
  let response;
  let text;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutS * 1000),
    });
    text = await response.text();
  } catch (error) {
    if (error.name === 'TimeoutError') throw new EntryError(`no answer from ${url} within ${timeoutS} s`);
    throw new EntryError(`cannot reach ${url}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
  }
  if (!response.ok) throw new EntryError(`HTTP ${response.status} from ${url}: ${errorDetail(text)}`);
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new EntryError(`the answer from ${url} is not JSON`);
  }
  if (!isObject(data)) throw new EntryError(`the answer from ${url} is not a JSON object`);
  return data;
}

/** Why these parameters cannot run (null when they can). */
export function configProblem(params) {
  const url = params.api_url;
  if (url === undefined || url === null || url === '') {
    return 'config.params["api_url"] is not set: give the translation endpoint, e.g. '
      + '"http://127.0.0.1:5000/translate"';
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

/** Translate every entry, at most config.concurrency requests at a time. */
export async function translate(entries, config) {
  const problem = configProblem(config.params ?? {});
  if (problem) return entries.map((entry) => ({ id: entry.id, predicted: null, error: problem }));
  const results = new Array(entries.length);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const index = next++;
      results[index] = await translateOne(entries[index], config);
    }
  };
  const workers = Math.max(1, Math.min(config.concurrency ?? 8, entries.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}
