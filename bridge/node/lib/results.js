// The records translate exchanges: RunConfig defaults, the full result shape
// (bridge/schemas/translation-result.schema.json) and matching results to entries by id.
import { isPlainObject } from './protocol.js';

export const RUN_CONFIG_DEFAULTS = Object.freeze({
  model: null,
  base_url: null,
  temperature: null,
  max_tokens: null,
  batch_size: 16,
  concurrency: 8,
  timeout_s: 120.0,
  seed: null,
  params: {},
});

const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** A RunConfig with its defaults filled in, or a string saying what is wrong with it. */
export function completeRunConfig(config) {
  if (!isPlainObject(config)) return `config must be a RunConfig object, got ${describe(config)}`;
  for (const key of ['source_lang', 'target_lang']) {
    if (typeof config[key] !== 'string' || !LANGUAGE_CODE.test(config[key])) {
      return `config.${key} must be a language code such as "eng", got ${describe(config[key])}`;
    }
  }
  return { ...RUN_CONFIG_DEFAULTS, params: {}, ...config };
}

/** A decide() config: a RunConfig whose language pair is optional (null, or a language code). */
export function completeDecisionConfig(config) {
  if (!isPlainObject(config)) return `config must be a RunConfig object, got ${describe(config)}`;
  for (const key of ['source_lang', 'target_lang']) {
    const value = config[key];
    if (value !== undefined && value !== null && !(typeof value === 'string' && LANGUAGE_CODE.test(value))) {
      return `config.${key} must be a language code such as "eng" or null, got ${describe(value)}`;
    }
  }
  return { ...RUN_CONFIG_DEFAULTS, source_lang: null, target_lang: null, params: {}, ...config };
}

const RESULT_KEYS = new Set(['id', 'predicted', 'latency_s', 'usage', 'error', 'tool_calls',
  'tool_call_count', 'metadata', 'abstained', 'abstain_reason']);
const USAGE_KEYS = new Set(['prompt_tokens', 'completion_tokens']);

export function describe(value) {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const isCount = (value) => Number.isInteger(value) && value >= 0;

/** A per-entry failure in the full result shape. */
export function errorResult(id, message, latencyS = 0) {
  return {
    id,
    predicted: null,
    latency_s: latencyS,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    error: message,
    tool_calls: [],
    tool_call_count: 0,
    metadata: {},
    abstained: false,
    abstain_reason: null,
  };
}

/**
 * Check a result object (which must already carry a string id) and fill the schema defaults.
 * Returns {result}, or {problem} naming the first field that does not fit the schema, or why the
 * result is unusable (neither predicted nor error; fewer tool calls counted than listed).
 */
export function normalizeResult(raw, defaultLatencyS = 0) {
  const fast = typicalResult(raw, defaultLatencyS);
  if (fast !== null) return { result: fast };
  for (const key of Object.keys(raw)) {
    if (!RESULT_KEYS.has(key)) return { problem: `unknown field "${key}" (put extra data in "metadata")` };
  }
  const usage = raw.usage ?? {};
  const checks = [
    ['predicted', raw.predicted === undefined || raw.predicted === null || typeof raw.predicted === 'string',
      'a string or null'],
    ['latency_s', raw.latency_s === undefined || (Number.isFinite(raw.latency_s) && raw.latency_s >= 0),
      'a number >= 0'],
    ['usage', isPlainObject(usage), 'an object'],
    ['error', raw.error === undefined || raw.error === null || typeof raw.error === 'string', 'a string or null'],
    ['tool_calls', raw.tool_calls === undefined
      || (Array.isArray(raw.tool_calls) && raw.tool_calls.every(isPlainObject)), 'a list of objects'],
    ['tool_call_count', raw.tool_call_count === undefined || isCount(raw.tool_call_count), 'an integer >= 0'],
    ['metadata', raw.metadata === undefined || isPlainObject(raw.metadata), 'an object'],
    ['abstained', raw.abstained === undefined || typeof raw.abstained === 'boolean', 'true or false'],
    ['abstain_reason', raw.abstain_reason === undefined || raw.abstain_reason === null
      || (typeof raw.abstain_reason === 'string' && raw.abstain_reason.length > 0), 'a non-empty string or null'],
  ];
  for (const [key, ok, expected] of checks) {
    if (!ok) return { problem: `"${key}" must be ${expected}, got ${describe(raw[key])}` };
  }
  for (const key of Object.keys(usage)) {
    if (!USAGE_KEYS.has(key)) return { problem: `unknown field "usage.${key}"` };
    if (!isCount(usage[key])) return { problem: `"usage.${key}" must be an integer >= 0, got ${describe(usage[key])}` };
  }
  if (raw.abstained === true) {
    if ((raw.abstain_reason ?? null) === null) return { problem: 'an abstained result needs "abstain_reason" saying why' };
    if ((raw.predicted ?? null) !== null || (raw.error ?? null) !== null) {
      return { problem: 'an abstained result has neither "predicted" nor "error"' };
    }
  } else if ((raw.abstain_reason ?? null) !== null) {
    return { problem: '"abstain_reason" is given but "abstained" is not true' };
  } else if ((raw.predicted ?? null) === null && (raw.error ?? null) === null) {
    return { problem: 'a result needs "predicted" or, when the entry failed, "error"' };
  }
  const toolCalls = raw.tool_calls ?? [];
  if ((raw.tool_call_count ?? 0) < toolCalls.length) {
    return { problem: `"tool_call_count" is ${raw.tool_call_count ?? 0} but ${toolCalls.length} tool calls are listed` };
  }
  return {
    result: {
      id: raw.id,
      predicted: raw.predicted ?? null,
      latency_s: raw.latency_s ?? defaultLatencyS,
      usage: { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 },
      error: raw.error ?? null,
      tool_calls: toolCalls,
      tool_call_count: raw.tool_call_count ?? 0,
      metadata: raw.metadata ?? {},
      abstained: raw.abstained ?? false,
      abstain_reason: raw.abstain_reason ?? null,
    },
  };
}

/**
 * A result as it goes on the wire: fields at their schema default are left out (the host fills
 * them back in), which keeps large batches small.
 */
export function compactResult(result) {
  const out = { id: result.id };
  if (result.predicted !== null) out.predicted = result.predicted;
  if (result.latency_s !== 0) out.latency_s = result.latency_s;
  if (result.usage.prompt_tokens !== 0 || result.usage.completion_tokens !== 0) out.usage = result.usage;
  if (result.error !== null) out.error = result.error;
  if (result.tool_calls.length !== 0) out.tool_calls = result.tool_calls;
  if (result.tool_call_count !== 0) out.tool_call_count = result.tool_call_count;
  if (result.abstained) {
    out.abstained = true;
    out.abstain_reason = result.abstain_reason;
  }
  for (const key in result.metadata) { // eslint-disable-line no-unreachable-loop
    out.metadata = result.metadata;
    break;
  }
  return out;
}

// The common case — {id, predicted} plus optional well-formed latency, usage and error — checked
// without building anything, so large batches stay cheap. Anything else takes the full check.
function typicalResult(raw, defaultLatencyS) {
  let keys = 0;
  for (const key in raw) {
    if (key !== 'id' && key !== 'predicted' && key !== 'latency_s' && key !== 'error') return null;
    keys++;
  }
  const { predicted, latency_s: latency, error } = raw;
  if (typeof predicted !== 'string' && !(predicted == null && typeof error === 'string')) return null;
  if (error != null && typeof error !== 'string') return null;
  if (latency !== undefined && !(typeof latency === 'number' && latency >= 0 && latency !== Infinity)) return null;
  return keys === 0 ? null : {
    id: raw.id,
    predicted: predicted ?? null,
    latency_s: latency ?? defaultLatencyS,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    error: error ?? null,
    tool_calls: [],
    tool_call_count: 0,
    metadata: {},
    abstained: false,
    abstain_reason: null,
  };
}

/**
 * One result per entry, in entry order. Entries with no result or several get a per-entry error,
 * as do malformed results; results whose id matches no entry are passed to onUnknown and dropped.
 */
export function matchResults(entries, results, { onUnknown = () => {}, source = 'the guest' } = {}) {
  const byId = new Map(entries.map((entry) => [entry.id, []]));
  for (const raw of results) {
    const id = isPlainObject(raw) ? raw.id : undefined;
    const bucket = typeof id === 'string' ? byId.get(id) : undefined;
    if (bucket) bucket.push(raw);
    else onUnknown(raw);
  }
  return entries.map((entry) => {
    const found = byId.get(entry.id);
    if (found.length === 0) return errorResult(entry.id, `${source} returned no result for this entry`);
    if (found.length > 1) {
      return errorResult(entry.id, `${source} returned ${found.length} results for this entry`);
    }
    const { result, problem } = normalizeResult(found[0]);
    return result ?? errorResult(entry.id, `${source} returned a malformed result: ${problem}`);
  });
}
