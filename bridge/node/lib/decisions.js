// Typed decisions on the Node side: the options of a question, and the answer rules every host applies to
// what a method's decide() returned. The rules (and their wording) are the Python SDK's
// (mt_eval.decisions.answers); bridge/vectors/decisions/answers.json pins them for both runtimes.
import { defaults, schema } from './contract/schema.js';
import { exactText, numberText, rowsProblem } from './decision-rows.js';
import { capped } from './lone-surrogates.js';
import { isPlainObject } from './protocol.js';
import { describe as describeValue } from './results.js';

export { numberText, rowsProblem };

export const QUESTION_TYPES = Object.freeze(['noul', 'choice', 'score']);
export const NOUL_OPTIONS = Object.freeze(['true', 'false']);
export const DEFAULT_TOLERANCE = 1e-3;

// The fields of a decision result, an answer and usage, from the generated schema (decision-result).
let shapes = null;
function decisionShapes() {
  if (shapes) return shapes;
  const { $defs } = schema('decision-result');
  const fields = (name) => new Set(Object.keys($defs[name].properties));
  shapes = {
    result: fields('DecisionResult'), answer: fields('QuestionAnswer'), usage: fields('Usage'),
    defaults: defaults($defs.DecisionResult), usageDefaults: defaults($defs.Usage),
  };
  return shapes;
}

// A decision result for row `id` with every field, in the schema's order, at its default (usage's too).
function emptyDecision(id, latencyS = 0) {
  const { result, defaults: fallback, usageDefaults } = decisionShapes();
  const given = { id, answers: {}, latency_s: latencyS, usage: { ...usageDefaults } };
  const out = {};
  for (const name of result) {
    const value = name in given ? given[name] : fallback[name];
    out[name] = Array.isArray(value) ? [...value] : value !== null && typeof value === 'object' ? { ...value } : value;
  }
  return out;
}


/** The names a result gives probabilities for, in order (score: each level's label, or its value). */
export function optionsOf(question) {
  if (question.type === 'noul') return [...NOUL_OPTIONS];
  if (question.type === 'choice') return [...question.options];
  return question.levels.map((level) => level.label ?? numberText(level.value));
}

const isNumber = (value) => typeof value === 'number';
const quoted = (names) => names.map((name) => `"${name}"`).join(', ');
const plural = (names) => (names.length > 1 ? 'options' : 'option');

function describe(value) {
  if (isNumber(value)) return Number.isFinite(value) ? exactText(value) : String(value);
  return describeValue(value);
}

/** A sum without intermediate rounding error, correctly rounded (Shewchuk's partials, as Python's math.fsum). */
function fsum(values) {
  const partials = [];
  for (let x of values) {
    let i = 0;
    for (let y of partials) {
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  // the partials added from the largest, rounded once, half to even across two of them (CPython's final step)
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n];
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** Why probabilities is not a distribution over the question's options (null when it is). */
export function distributionProblem(question, probabilities, tolerance = DEFAULT_TOLERANCE) {
  const options = optionsOf(question);
  if (!isPlainObject(probabilities)) return 'probabilities must be an object {"option": probability, ...}';
  const unknown = Object.keys(probabilities).filter((key) => !options.includes(key));
  if (unknown.length) return `unknown ${plural(unknown)} ${quoted(unknown)} (the options are ${quoted(options)})`;
  const missing = options.filter((option) => !Object.hasOwn(probabilities, option));
  if (missing.length) return `missing ${plural(missing)} ${quoted(missing)}: give a probability for every option`;
  for (const option of options) {
    const value = probabilities[option];
    if (!isNumber(value) || !Number.isFinite(value) || value < 0 || value > 1) {
      return `the probability of "${option}" is ${describe(value)}: each must be a number from 0 to 1`;
    }
  }
  const total = fsum(options.map((option) => probabilities[option]));
  if (Math.abs(total - 1) > tolerance) {
    const rounded = numberText(total); // (exact only where the rounded sum would read as within the tolerance)
    const said = Math.abs(Number(rounded) - 1) <= tolerance ? exactText(total) : rounded;
    return `probabilities sum to ${said}, not 1 (within ${exactText(tolerance)}): `
      + 'they are never renormalised; return a distribution that sums to 1';
  }
  return null;
}

/** Σ probability × level value of a score question. */
export function expectedValue(question, probabilities) {
  return fsum(question.levels.map((level) => probabilities[level.label ?? numberText(level.value)] * level.value));
}

/** One question's answer in its checked form: {probabilities[, expected]} or {error}. */
export function checkAnswer(question, raw, tolerance = DEFAULT_TOLERANCE) {
  if (raw === undefined || raw === null) return { error: 'no answer for this question' };
  if (!isPlainObject(raw)) return { error: 'an answer must be an object: {"probabilities": {...}} or {"error": "..."}' };
  const unknown = Object.keys(raw).filter((key) => !decisionShapes().answer.has(key));
  if (unknown.length) {
    return { error: `unknown field ${quoted(unknown)} in the answer (an answer has "probabilities", "expected" and "error")` };
  }
  if (raw.error !== undefined && raw.error !== null) {
    return { error: capped(typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error)) };
  }
  if (raw.probabilities === undefined || raw.probabilities === null) {
    return { error: 'the answer has neither "probabilities" nor "error"' };
  }
  const problem = distributionProblem(question, raw.probabilities, tolerance);
  if (problem !== null) return { error: problem };
  const probabilities = Object.fromEntries(optionsOf(question).map((option) => [option, raw.probabilities[option]]));
  if (question.type !== 'score') {
    if (raw.expected !== undefined && raw.expected !== null) {
      return { error: `"expected" belongs to score questions, not ${question.type} questions` };
    }
    return { probabilities };
  }
  const expected = expectedValue(question, probabilities);
  if (raw.expected !== undefined && raw.expected !== null) {
    const { levels } = question;
    const span = levels.length ? levels[levels.length - 1].value - levels[0].value : 0;
    if (!isNumber(raw.expected) || !Number.isFinite(raw.expected) || Math.abs(raw.expected - expected) > tolerance * Math.max(span, 1)) {
      let gives = numberText(expected); // (exact only where rounded it would read as the value given)
      if (Number.isFinite(raw.expected) && gives === numberText(raw.expected)) gives = exactText(expected);
      return { error: `the expected value ${describe(raw.expected)} does not match the probabilities, which give ${gives}` };
    }
  }
  return { probabilities, expected };
}

// The result's own fields, or the first that is malformed.
function envelope(id, raw) {
  const result = emptyDecision(id);
  const { latency_s: latency, usage, error, metadata } = raw;
  if (latency !== undefined && latency !== null) {
    if (!(isNumber(latency) && Number.isFinite(latency) && latency >= 0)) {
      return { result, problem: `"latency_s" must be a number >= 0, got ${describe(latency)}` };
    }
    result.latency_s = latency;
  }
  if (usage !== undefined && usage !== null) {
    if (!isPlainObject(usage)) return { result, problem: `"usage" must be an object, got ${describe(usage)}` };
    for (const [key, count] of Object.entries(usage)) {
      if (!decisionShapes().usage.has(key)) return { result, problem: `unknown field "usage.${key}"` };
      if (count === null) continue; // null counts as absent
      if (!(Number.isInteger(count) && count >= 0)) {
        return { result, problem: `"usage.${key}" must be an integer >= 0, got ${describe(count)}` };
      }
      result.usage[key] = count;
    }
  }
  if (error !== undefined && error !== null && typeof error !== 'string') {
    return { result, problem: `"error" must be a string or null, got ${describe(error)}` };
  }
  result.error = typeof error === 'string' ? capped(error) : null; // (a method's own words, of any length)
  if (metadata !== undefined && metadata !== null) {
    if (!isPlainObject(metadata)) return { result, problem: `"metadata" must be an object, got ${describe(metadata)}` };
    result.metadata = metadata;
  }
  return { result, problem: null };
}

/** A decision result in its checked form: every question of the row answered or failed, with reasons. */
export function checkDecision(row, raw, tolerance = DEFAULT_TOLERANCE) {
  const unknown = Object.keys(raw).filter((key) => !decisionShapes().result.has(key));
  if (unknown.length) {
    return decisionError(row.id, `unknown field ${quoted(unknown)} in the result (put extra data in "metadata")`);
  }
  const { result, problem } = envelope(row.id, raw);
  if (problem !== null) {
    return decisionError(row.id, `the result is malformed: ${problem}`, result.latency_s);
  }
  if (result.error !== null) return result;
  const answers = raw.answers ?? {};
  if (!isPlainObject(answers)) return { ...result, error: '"answers" must be an object {"question": answer, ...}' };
  const asked = Object.keys(row.questions);
  const unasked = Object.keys(answers).filter((name) => !Object.hasOwn(row.questions, name));
  if (unasked.length) {
    return { ...result, error: `answers to questions that were not asked: ${quoted(unasked)} (this row asks ${quoted(asked)})` };
  }
  result.answers = Object.fromEntries(asked.map((name) => [name, checkAnswer(row.questions[name], answers[name], tolerance)]));
  return result;
}

// Whether value holds a number JSON cannot carry (NaN, ±Infinity), the field `skipped` of its top level aside; what
// refers to itself is left for the encoder to refuse.
function holdsNonFinite(value, skipped = null, seen = new Set()) {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object' || seen.has(value)) return false;
  seen.add(value);
  for (const key in value) if (key !== skipped && holdsNonFinite(value[key], null, seen)) return true;
  return false;
}

/**
 * A guest's decisions as it sends them (results with string ids, in the method's order). JSON has no NaN nor
 * Infinity: the host would read one as null, and say a probability of NaN is null, or take an expected value or a
 * latency of NaN for none given. A result holding one (outside its metadata) is checked here, as the host checks it
 * in process: a row it fails is sent failed, and an answer holding one is sent as its error, in the same words. The
 * host checks the rest (the sums within its own tolerance) as it always does.
 */
export function sendableDecisions(rows, results) {
  let byId = null;
  return results.map((item) => {
    if (!holdsNonFinite(item, 'metadata')) return item;
    byId ??= new Map(rows.map((row) => [row.id, row]));
    const row = byId.get(item.id);
    if (row === undefined) return item; // (a result for no row: the host says it)
    const checked = checkDecision(row, item, Infinity);
    if (checked.error !== null) return checked;
    const answers = { ...item.answers };
    for (const name of Object.keys(row.questions)) {
      if (holdsNonFinite(answers[name])) answers[name] = checked.answers[name];
    }
    return { ...item, answers };
  });
}

/** A failed row in the full result shape. */
export function decisionError(id, message, latencyS = 0) {
  return { ...emptyDecision(id, latencyS), error: message };
}

/**
 * One checked result per row, in row order; rows with no result or several get a row error, and results
 * whose id matches no row go to onUnknown.
 */
export function matchDecisions(rows, results, { tolerance = DEFAULT_TOLERANCE, onUnknown = () => {}, source = 'the method' } = {}) {
  if (!Array.isArray(results)) {
    return rows.map((row) => decisionError(row.id, `${source} returned ${describeValue(results)}, not a list with one result per row`));
  }
  const byId = new Map(rows.map((row) => [row.id, []]));
  for (const raw of results) {
    const bucket = isPlainObject(raw) && typeof raw.id === 'string' ? byId.get(raw.id) : undefined;
    if (bucket) bucket.push(raw);
    else onUnknown(raw);
  }
  return rows.map((row) => {
    const found = byId.get(row.id);
    if (found.length === 0) return decisionError(row.id, `${source} returned no result for this row`);
    if (found.length > 1) return decisionError(row.id, `${source} returned ${found.length} results for this row`);
    return checkDecision(row, found[0], tolerance);
  });
}
