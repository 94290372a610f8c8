// JSON over HTTP for this method, with failures worded for its results' `error` field.
// Needs only Node (>= 20): the global fetch. http_json.py beside this file is the Python twin.

/** One entry failed; the message becomes its `error`. */
export class EntryError extends Error {}

/** The useful part of an error response: its error message, else the start of the body. */
export function errorDetail(body) {
  let data;
  try {
    data = JSON.parse(body);
  } catch {
    return body.trim().slice(0, 200);
  }
  const error = data !== null && typeof data === 'object' && !Array.isArray(data) ? data.error : undefined;
  if (error !== null && typeof error === 'object' && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  return body.trim().slice(0, 200);
}

/** POST `body` as JSON and return the decoded JSON object; failures throw EntryError. */
export async function postJson(url, body, timeoutS, headers = {}) {
  let response;
  let text;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
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
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new EntryError(`the answer from ${url} is not a JSON object`);
  }
  return data;
}

/** `fn` for every item, at most `limit` at a time; the results in item order. */
export async function mapConcurrently(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  const workers = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}
