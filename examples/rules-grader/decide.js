// A rules-based grader; grader.py beside it behaves identically (its docstring explains the rules).
// Needs only Node (>= 20), no packages.
const WORD = /[\p{L}\p{N}]+/gu;
const SIGMA = 0.6;
const CHOICE_SHARPNESS = 8.0;
const MIN_COPIED = 3; // shorter words (numbers, "a", "no") are the same in many languages

export const words = (text) => text.toLowerCase().match(WORD) ?? [];
const length = (text) => Array.from(text).length;

function counts(items) {
  const out = new Map();
  for (const item of items) out.set(item, (out.get(item) ?? 0) + 1);
  return out;
}

const total = (map) => [...map.values()].reduce((a, b) => a + b, 0);

function f1(candidate, reference) {
  let overlap = 0;
  for (const [key, count] of candidate) overlap += Math.min(count, reference.get(key) ?? 0);
  if (overlap === 0) return 0;
  const precision = overlap / total(candidate);
  const recall = overlap / total(reference);
  return (2 * precision * recall) / (precision + recall);
}

function trigrams(text) {
  const joined = Array.from(words(text).join(' '));
  const grams = [];
  for (let i = 0; i < joined.length - 2; i++) grams.push(joined.slice(i, i + 3).join(''));
  return counts(grams);
}

function untranslatedShare(source, candidate, reference) {
  const found = words(candidate);
  if (found.length === 0) return 0;
  const sourceWords = new Set(words(source).filter((w) => length(w) >= MIN_COPIED));
  const allowed = new Set(reference === null ? [] : words(reference));
  return found.filter((w) => sourceWords.has(w) && !allowed.has(w)).length / found.length;
}

export function quality(source, candidate, reference) {
  const copied = untranslatedShare(source, candidate, reference);
  if (reference !== null) {
    const overlap = (f1(trigrams(candidate), trigrams(reference)) + f1(counts(words(candidate)), counts(words(reference)))) / 2;
    return Math.min(1, Math.max(0, overlap - copied / 2));
  }
  const sizes = [words(candidate).length, words(source).length];
  const agreement = Math.max(...sizes) ? Math.min(...sizes) / Math.max(...sizes) : 1;
  return Math.min(1, Math.max(0, (1 - 1.5 * copied) * agreement));
}

function numberText(value) {
  const text = value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  return text === '-0' || text === '' ? '0' : text;
}

const levelNames = (question) => question.levels.map((level) => level.label || numberText(level.value));

function normalised(weights) {
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}

function scoreAnswer(question, q) {
  const names = levelNames(question);
  const position = q * (names.length - 1);
  const weights = names.map((_, i) => Math.exp(-((i - position) ** 2) / (2 * SIGMA * SIGMA)));
  const probabilities = normalised(weights);
  return { probabilities: Object.fromEntries(names.map((name, i) => [name, probabilities[i]])) };
}

function choiceAnswer(question, state, source, reference) {
  const { options } = question;
  const texts = options.filter((o) => typeof state[o] === 'string');
  if (texts.length === 0) return { error: 'none of the options names a candidate text in the state' };
  const scores = new Map(texts.map((o) => [o, quality(source, state[o], reference)]));
  const neutral = [...scores.values()].reduce((a, b) => a + b, 0) / scores.size;
  const probabilities = normalised(options.map((o) => Math.exp(CHOICE_SHARPNESS * (scores.get(o) ?? neutral))));
  return { probabilities: Object.fromEntries(options.map((o, i) => [o, probabilities[i]])) };
}

export function decideRow(row) {
  const { state } = row;
  const source = typeof state.source === 'string' ? state.source : '';
  const reference = typeof state.reference === 'string' ? state.reference : null;
  const { candidate } = state;
  const answer = (question) => {
    if (question.type === 'choice') return choiceAnswer(question, state, source, reference);
    if (typeof candidate !== 'string') return { error: 'the state has no "candidate" text to judge' };
    if (question.type === 'noul') {
      const q = quality(source, candidate, reference);
      return { probabilities: { true: q, false: 1 - q } };
    }
    return scoreAnswer(question, quality(source, candidate, reference));
  };
  // (fromEntries makes each question its own property: answers[name] = … for a question named "__proto__"
  // would set the object's prototype instead, and the question would go unanswered)
  const answers = Object.fromEntries(Object.entries(row.questions).map(([name, q]) => [name, answer(q)]));
  return { id: row.id, answers };
}

export async function decide(rows) {
  return rows.map((row) => {
    const started = performance.now();
    const result = decideRow(row);
    return { ...result, latency_s: (performance.now() - started) / 1000 };
  });
}
