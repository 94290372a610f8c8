// An LLM method: one chat-completions call per sentence to any OpenAI-compatible endpoint.
//
// The endpoint and the model come from the run's configuration, never from this file:
// config.base_url (e.g. "http://127.0.0.1:8000/v1"; "/chat/completions" is appended) and config.model.
// temperature, max_tokens and seed are sent when set. An API key, when the endpoint needs one, is read
// from the environment variable MT_EVAL_LLM_API_KEY. The system prompt is prompt.txt, with
// {source_lang} and {target_lang} replaced by the run's languages.
//
// pipeline.py beside this file behaves identically. Needs only Node (>= 20): the global fetch.
import { readFileSync } from 'node:fs';

import { EntryError, mapConcurrently, postJson } from './http_json.js';

const API_KEY_VARIABLE = 'MT_EVAL_LLM_API_KEY';
const PROMPT = readFileSync(new URL('./prompt.txt', import.meta.url), 'utf8').trim();


/** Why this configuration cannot run (null when it can). */
export function configProblem(config) {
  if (!config.base_url) {
    return 'config.base_url is not set: give the OpenAI-compatible endpoint, e.g. mt-eval run --base-url '
      + 'http://127.0.0.1:8000/v1';
  }
  if (!config.base_url.startsWith('http://') && !config.base_url.startsWith('https://')) {
    return `config.base_url "${config.base_url}" is not an http:// or https:// address`;
  }
  if (!config.model) {
    return 'config.model is not set: give the name of a model the endpoint serves, e.g. mt-eval run --model NAME';
  }
  return null;
}

export function requestBody(source, config) {
  const system = PROMPT.replaceAll('{source_lang}', config.source_lang).replaceAll('{target_lang}', config.target_lang);
  const body = { model: config.model, messages: [{ role: 'system', content: system }, { role: 'user', content: source }] };
  for (const option of ['temperature', 'max_tokens', 'seed']) {
    if (config[option] !== undefined && config[option] !== null) body[option] = config[option];
  }
  return body;
}

async function translateOne(entry, config) {
  const started = performance.now();
  const url = `${config.base_url.replace(/\/+$/, '')}/chat/completions`;
  const key = process.env[API_KEY_VARIABLE];
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  let data;
  let content;
  try {
    data = await postJson(url, requestBody(entry.source, config), config.timeout_s ?? 120, headers);
    content = data.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new EntryError(`the answer from ${url} has no choices[0].message.content`);
  } catch (error) {
    if (!(error instanceof EntryError)) throw error;
    return { id: entry.id, predicted: null, error: error.message, latency_s: (performance.now() - started) / 1000 };
  }
  const usage = data.usage !== null && typeof data.usage === 'object' ? data.usage : {};
  const counts = {};
  for (const name of ['prompt_tokens', 'completion_tokens']) {
    if (Number.isInteger(usage[name]) && usage[name] >= 0) counts[name] = usage[name];
  }
  return { id: entry.id, predicted: content.trim(), latency_s: (performance.now() - started) / 1000, usage: counts };
}

/** Translate every entry, at most config.concurrency requests at a time. */
export async function translate(entries, config) {
  const problem = configProblem(config);
  if (problem) return entries.map((entry) => ({ id: entry.id, predicted: null, error: problem }));
  return mapConcurrently(entries, config.concurrency ?? 8, (entry) => translateOne(entry, config));
}
