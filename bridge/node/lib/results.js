// What a method returns, turned into results: the one place the Node guest, the Node host and
// loadMethodPlugin's in-process methods use — the twin of mt_eval/results.py, driven by the same generated
// schema (translation-result) and held to it by bridge/vectors/contract/results.json:
//
// - each entry of a call gets exactly one result, in entry order, matched by its string id; predicted must
//   be a string (or null when error says why, or when the method abstains with an abstain_reason) — scoring
//   depends on both, so neither is guessed;
// - results written for the upstream harness are accepted: null counts as absent, usage.total_tokens,
//   raw_predicted and cached are kept, usage counts that are not whole numbers are rounded, other fields move
//   into metadata (other usage fields into metadata.usage); ResultNotes counts each kind of change;
// - text that is not valid Unicode (a lone surrogate) fails its entry, and so does a latency_s that is not a
//   finite number (an in-process method can return Infinity, which JSON would write as null);
// - a result without latency_s gets the call's time divided among the call's entries.
import { compile, defaults, root } from './contract/schema.js';
import { decodeValue } from './contract/decode.js';
import { got } from './contract/words.js';
import { MAX_DEPTH } from './json-text.js';
import { capped, wellFormed, writable } from './lone-surrogates.js';
import { describe, isPlainObject } from './protocol.js';
import { notAList, predictedLookalike } from './returned-words.js';
import { strayStandIn } from './unmatched.js';

export { describe };

let contract = null;
function resultContract() {
  if (contract) return contract;
  const { document, definition } = root('translation-result');
  const usage = document.$defs.Usage;
  const base = defaults(definition);
  const template = {};
  for (const name of Object.keys(definition.properties)) {
    template[name] = name === 'usage' ? defaults(usage) : name in base ? base[name] : null;
  }
  const cache = new Map();
  contract = {
    fields: new Set(Object.keys(definition.properties)),
    order: Object.keys(definition.properties),
    usageFields: new Set(Object.keys(usage.properties)),
    template,
    fits: compile(document, { $ref: document.$ref }, cache),
    // each field's own predicate: a result is checked field by field over the fields it has
    fieldFits: new Map(Object.entries(definition.properties).map(([name, node]) => [name, compile(document, node, cache)])),
    required: definition.required ?? [],
  };
  return contract;
}

// A fresh copy of a default value (defaults are primitives, [], {} or an object of primitives).
const fresh = (value) => (Array.isArray(value) ? [] : value !== null && typeof value === 'object' ? { ...value } : value);

/** A result with every field: the schema's defaults, then `fields` (a nested object's defaults too). */
function fullResult(fields) {
  const { template } = resultContract();
  const out = {};
  for (const name in template) {
    const given = fields[name];
    const fallback = template[name];
    if (given === undefined || given === null) out[name] = fresh(fallback);
    else out[name] = isPlainObject(given) && isPlainObject(fallback) && Object.keys(fallback).length ? { ...fallback, ...given } : given;
  }
  return out;
}

/** A per-entry failure in the full result shape. */
export function errorResult(id, message, latencyS = 0) {
  return fullResult({ id, error: message, latency_s: latencyS });
}

/** What was changed to accept a method's results, and for how many (reported once per run). */
export class ResultNotes {
  constructor() {
    this.counts = {};
    this.strayCalls = 0; // calls whose results include some that match no entry (unmatched.js: sayStrays)
  }

  add(note, count = 1) {
    this.counts[note] = (this.counts[note] ?? 0) + count;
  }

  merge(counts) {
    if (!isPlainObject(counts)) return;
    for (const [note, count] of Object.entries(counts)) if (Number.isInteger(count) && count > 0) this.add(note, count);
  }

  get size() {
    return Object.keys(this.counts).length;
  }

  summary() {
    return Object.entries(this.counts).map(([note, count]) => `${count} × ${note}`).join('; ');
  }
}

function upstreamFields(raw, notes) {
  const { fields, usageFields } = resultContract();
  const out = {};
  const moved = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined) {
      if (key !== 'predicted' && key !== 'error') notes.add(`"${key}": null treated as absent`);
    } else if (key === 'usage' && isPlainObject(value)) {
      const usage = {};
      for (const [name, count] of Object.entries(value)) {
        if (count === null || count === undefined) {
          notes.add(`"usage.${name}": null treated as absent`);
        } else if (!usageFields.has(name)) {
          (moved.usage ??= {})[name] = count;
          notes.add(`unknown field "usage.${writable(name)}" moved into metadata.usage`);
        } else if (typeof count === 'number' && Number.isFinite(count) && !Number.isInteger(count)) {
          usage[name] = Math.floor(count + 0.5);
          notes.add(`"usage.${name}" not a whole number, rounded`);
        } else {
          usage[name] = count;
        }
      }
      out.usage = usage;
    } else if (fields.has(key)) {
      out[key] = value;
    } else {
      moved[key] = value;
      notes.add(`unknown field "${writable(key)}" moved into metadata`);
    }
  }
  if (Object.keys(moved).length) {
    const metadata = out.metadata ?? {};
    if (isPlainObject(metadata)) out.metadata = { ...moved, ...metadata };
  }
  return out;
}

/**
 * Why a value cannot be written as JSON, checked before anything walks it: it refers to itself (a response object
 * kept in metadata often does), nests deeper than MAX_DEPTH, or holds a BigInt; null when it can be.
 */
export function notJson(value, ancestors = []) {
  if (typeof value === 'bigint') return 'it holds a BigInt, which JSON has no number for';
  if (value === null || typeof value !== 'object' || typeof value.toJSON === 'function') return null;
  if (ancestors.includes(value)) return 'it refers to itself (a circular structure)';
  if (ancestors.length >= MAX_DEPTH) return `it nests deeper than ${MAX_DEPTH} levels`;
  ancestors.push(value);
  for (const key in value) {
    const problem = notJson(value[key], ancestors);
    if (problem !== null) {
      ancestors.pop();
      return problem;
    }
  }
  ancestors.pop();
  return null;
}

// Why a result (full, or its given fields with the rest at their defaults) is unusable; null when it is fine. Only
// the fields in `given` (what the method returned; the defaults are well-formed) are searched for broken text.
function resultProblem(result, given = result) {
  const problem = crossFieldProblem(result);
  if (problem !== null) return problem;
  const bad = resultContract().order.find((field) => Object.hasOwn(given, field) && !wellFormed(result[field]));
  return bad === undefined ? null : `"${bad}" holds text that is not valid Unicode (a lone surrogate)`;
}

// The rule across fields, and a latency that is not a finite number (mt_eval.records.result_problem): the schema's
// `>= 0` lets Infinity through, and JSON would write it as null.
function crossFieldProblem(result) {
  if (typeof result.latency_s === 'number' && !Number.isFinite(result.latency_s)) {
    return `$.latency_s: must be a finite number, got ${result.latency_s}`;
  }
  const predicted = result.predicted ?? null;
  const error = result.error ?? null;
  const calls = result.tool_calls ?? [];
  const reason = result.abstain_reason ?? null;
  if (result.abstained === true) { // the method declines the entry: a reason, and neither a prediction nor an error
    if (!reason) return 'an abstained result needs "abstain_reason" saying why';
    if (predicted !== null || error !== null) return 'an abstained result has neither "predicted" nor "error"';
  } else if (reason !== null) {
    return '"abstain_reason" is given but "abstained" is not true';
  } else if (predicted === null && error === null) {
    return `a result needs "predicted" or, when the entry failed, "error"${predictedLookalike(result.metadata)}`;
  }
  if ((result.tool_call_count ?? 0) < calls.length) {
    return `tool_call_count is ${result.tool_call_count ?? 0} but ${calls.length} tool calls are listed`;
  }
  return null;
}

/**
 * One returned item → {result} (a usable full result), {id, problem} (why the result for `id` is unusable),
 * or null when the item has no string id.
 */
export function normalizeResult(raw, { notes = new ResultNotes(), defaultLatencyS = 0 } = {}) {
  if (!isPlainObject(raw) || typeof raw.id !== 'string' || raw.id === '') return null;
  for (const name in raw) {
    const problem = notJson(raw[name]);
    if (problem !== null) return { id: raw.id, problem: `"${name}" cannot be sent as JSON: ${problem}` };
  }
  let fields = raw;
  if (!resultContract().fits(raw)) {
    fields = upstreamFields(raw, notes);
    const { value, problems } = decodeValue(fields, 'translation-result', { file: 'result' });
    if (value === null) {
      const first = problems.find((p) => p.severity === 'error');
      return { id: raw.id, problem: `${first.path}: ${first.message}` };
    }
  }
  const result = fullResult(fields);
  const problem = resultProblem(result, fields);
  if (problem !== null) return { id: raw.id, problem };
  if (raw.latency_s === undefined || raw.latency_s === null) result.latency_s = defaultLatencyS;
  return { result: { ...result, error: typeof result.error === 'string' ? capped(result.error) : result.error } };
}

// Said of an entry left without a result when the call's results include some that match no entry (an integer id, a
// misspelled one, none at all): the likely reason, in the same words for every such entry, so they count as one error.
const STRAYS = ", and results whose id matches no entry of the call (a result's id is its entry's id, a string)";

/**
 * One result per entry, in entry order, from what `label` (e.g. "the method") returned for them.
 * Results whose id matches no entry (and items without a string id) go to onUnknown.
 */
export function resultsFor(entries, returned, { label = 'the method', notes = new ResultNotes(), elapsedS = 0, onUnknown = () => {} } = {}) {
  const share = entries.length ? elapsedS / entries.length : 0;
  if (!Array.isArray(returned)) {
    const error = notAList(label, returned);
    return entries.map((entry) => errorResult(String(entry.id), error, share));
  }
  const [only] = returned;
  if (entries.length === 1 && returned.length === 1 && isPlainObject(only) && typeof only.id === 'string'
    && only.id !== '' && only.id === String(entries[0].id)) { // one result for the one entry: nothing to match
    const outcome = normalizeResult(only, { notes, defaultLatencyS: share });
    return [outcome.result ?? errorResult(only.id, `${label} returned an unusable result: ${outcome.problem}`, share)];
  }
  const found = new Map(entries.map((entry) => [String(entry.id), []])); // (an integer id is matched as its text)
  let strays = false;
  for (const item of returned) {
    const outcome = normalizeResult(item, { notes, defaultLatencyS: share });
    const id = outcome?.result?.id ?? outcome?.id;
    if (outcome === null || !found.has(id)) {
      strays = true;
      onUnknown(item);
    } else found.get(id).push(outcome);
  }
  const missing = `${label} returned no result for this entry${strays ? STRAYS : ''}`;
  return entries.map((entry) => {
    const id = String(entry.id);
    const mine = found.get(id);
    if (mine.length === 0) return errorResult(id, missing, share);
    if (mine.length > 1) return errorResult(id, `${label} returned ${mine.length} results for this entry`, share);
    return mine[0].result ?? errorResult(id, `${label} returned an unusable result: ${mine[0].problem}`, share);
  });
}

/**
 * resultsFor for a guest's answer: {onUnknown, source (the label, default "the method", as for an in-process call),
 * notes, latencyS (the answer's latency_s: the latency of each result at 0, its default)}.
 */
export function matchResults(entries, results, { onUnknown = () => {}, source = 'the method', notes, latencyS } = {}) {
  const given = shareOf(latencyS) ? results.map((item) => withLatency(item, latencyS)) : results;
  return resultsFor(entries, given, { label: source, notes, onUnknown });
}

// An answer's latency_s, when it is one: a finite number above 0.
const shareOf = (latencyS) => typeof latencyS === 'number' && Number.isFinite(latencyS) && latencyS > 0;

const withLatency = (item, latencyS) => (isPlainObject(item) && (item.latency_s ?? 0) === 0 ? { ...item, latency_s: latencyS } : item);

/**
 * What the Node guest answers a translate request with: compact results and, when any, what was changed. Each
 * result without a latency of its own gets latencyS, its share of the call's time; with `shared` (a host that
 * asked for it at initialize) that share is sent once, as the answer's latency_s, instead of in every result.
 */
export function translateAnswer(returned, entries, latencyS, { shared = false } = {}) {
  const notes = new ResultNotes();
  if (!Array.isArray(returned)) {
    const error = notAList('the method', returned);
    return { results: entries.map((entry) => compactResult(errorResult(entry.id, error))) };
  }
  // Shared by several results only (for one it saves nothing). A host gives the answer's latency_s to every
  // result at 0 (left out, as a default is): a result that states 0 itself keeps it only when each result carries
  // its own.
  const once = shared && latencyS !== 0 && returned.length > 1 && !returned.some(statesZeroLatency);
  const share = once ? 0 : latencyS;
  const results = [];
  const strays = [];
  for (const item of returned) {
    const compacted = isPlainObject(item) && typeof item.id === 'string' && item.id !== '' ? compactAsGiven(item, share) : null;
    if (compacted !== null) { // the usual case: already in the schema's shape, compacted as it is
      results.push(compacted);
      continue;
    }
    const outcome = normalizeResult(item, { notes, defaultLatencyS: share });
    if (outcome === null) { // no string id: sent as its host says it (its entry is answered by the host)
      strays.push(strayStandIn(item));
      continue;
    }
    results.push(compactResult(outcome.result ?? errorResult(outcome.id, `the method returned an unusable result: ${outcome.problem}`, share)));
  }
  results.push(...strays);
  const answer = notes.size ? { results, normalised: notes.counts } : { results };
  if (once) answer.latency_s = latencyS;
  return answer;
}

const statesZeroLatency = (item) => isPlainObject(item) && item.latency_s === 0;

const atDefault = (value, fallback) => {
  if (fallback === null || typeof fallback !== 'object') return value === fallback;
  if (Array.isArray(fallback)) return Array.isArray(value) && value.length === 0;
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(fallback);
  return Object.keys(value).length === keys.length && keys.every((key) => atDefault(value[key], fallback[key]));
};

// compactResult of a result given as fields in the schema's shape (each field it has fits its schema and holds
// valid Unicode, and the rule across fields holds), with latencyS when it has no latency_s; null when it is not —
// then normalizeResult takes it the long way. One pass over the fields the result has.
function compactAsGiven(fields, latencyS) {
  const { template, fieldFits, required } = resultContract();
  for (const name of required) if (!Object.hasOwn(fields, name)) return null;
  const out = { id: fields.id };
  for (const name in fields) {
    const value = fields[name];
    const fits = fieldFits.get(name);
    if (fits === undefined || !Object.hasOwn(fields, name) || !fits(value)) return null;
    if ((typeof value === 'object' && value !== null && notJson(value) !== null) || !wellFormed(value)) return null;
    if (name === 'id' || value === null || atDefault(value, template[name])) continue;
    out[name] = name === 'error' ? capped(value) : isPlainObject(value) && Object.keys(template[name]).length
      ? Object.fromEntries(Object.entries(value).filter(([k, v]) => v !== template[name][k])) : value;
  }
  if (crossFieldProblem(fields) !== null) return null;
  if ((fields.latency_s ?? null) === null && latencyS !== 0) out.latency_s = latencyS;
  return out;
}

/** A result as it goes on the wire: fields at their schema default are left out (hosts fill them back in). */
export function compactResult(result) {
  const { template } = resultContract();
  const out = { id: result.id };
  for (const [name, fallback] of Object.entries(template)) {
    const value = result[name];
    if (name === 'id' || atDefault(value, fallback)) continue;
    const nested = isPlainObject(value) && isPlainObject(fallback) && Object.keys(fallback).length;
    out[name] = nested ? Object.fromEntries(Object.entries(value).filter(([k, v]) => !(k in fallback) || v !== fallback[k])) : value;
  }
  return out;
}

/** The RunConfig fields a method may leave out, with their defaults (from the run-config schema). */
export const RUN_CONFIG_DEFAULTS = Object.freeze(defaults(root('run-config').definition));

// Whether two parsed JSON values are equal.
function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (Array.isArray(b)) return false;
  let count = 0;
  for (const key in a) {
    if (!Object.hasOwn(b, key) || !sameJson(a[key], b[key])) return false;
    count++;
  }
  for (const key in b) if (--count < 0) return false;
  return true;
}

const configFits = new Map();
// A config checked against the schema `stem` with its defaults filled in, or a string saying what is wrong. The
// calls of a run all carry the same config: one equal to the last that fitted (a private copy, which no method can
// change) is not checked again.
function completeConfig(config, stem) {
  if (!isPlainObject(config)) return `invalid config: expected an object, got ${got(config)}`;
  if (!configFits.has(stem)) {
    const { document, definition } = root(stem);
    configFits.set(stem, { fits: compile(document, { $ref: document.$ref }), fallback: defaults(definition), last: null });
  }
  const known = configFits.get(stem);
  const { fallback } = known;
  if ((known.last !== null && sameJson(config, known.last)) || (known.fits(config) && (known.last = structuredClone(config)))) {
    const out = {}; // the usual case, without building problems
    for (const name in fallback) out[name] = fresh(fallback[name]);
    return Object.assign(out, config);
  }
  const { value, problems } = decodeValue(config, stem, { file: 'config' });
  if (value !== null) return value;
  const first = problems.find((p) => p.severity === 'error');
  return `invalid config: ${first.path}: ${first.message}`;
}

/** A RunConfig checked against its schema with the defaults filled in, or a string saying what is wrong. */
export const completeRunConfig = (config) => completeConfig(config, 'run-config');

/** A decide() config (decision-config: a RunConfig whose language pair is optional), as completeRunConfig. */
export const completeDecisionConfig = (config) => completeConfig(config, 'decision-config');
