// A decision method: judges candidate translations by their word overlap with a reference.
// pipeline.py beside this file behaves identically (its docstring explains the rules).
// Needs only Node (>= 20), no packages.
const WORD = /[\p{L}\p{N}]+/gu;
const FLOOR = 0.05;

export const words = (text) => text.toLowerCase().match(WORD) ?? [];

function counts(items) {
  const out = new Map();
  for (const item of items) out.set(item, (out.get(item) ?? 0) + 1);
  return out;
}

export function quality(state, candidate) {
  const { reference, source } = state;
  const mine = words(candidate);
  if (typeof reference === 'string') {
    const theirs = counts(words(reference));
    let overlap = 0;
    for (const [word, count] of counts(mine)) overlap += Math.min(count, theirs.get(word) ?? 0);
    if (overlap === 0) return 0;
    const precision = overlap / mine.length;
    const recall = overlap / words(reference).length;
    return (2 * precision * recall) / (precision + recall);
  }
  const sizes = [mine.length, typeof source === 'string' ? words(source).length : 0];
  return Math.max(...sizes) ? Math.min(...sizes) / Math.max(...sizes) : 1;
}

function levelNames(levels) {
  return levels.map((level) => {
    const text = level.value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
    return level.label || (text === '-0' || text === '' ? '0' : text);
  });
}

function scoreAnswer(question, q) {
  const names = levelNames(question.levels);
  const position = q * (names.length - 1);
  return { probabilities: Object.fromEntries(names.map((name, i) => [name, Math.max(0, 1 - Math.abs(i - position))])) };
}

function choiceAnswer(question, state) {
  const { options } = question;
  const scores = new Map(options.filter((o) => typeof state[o] === 'string').map((o) => [o, quality(state, state[o])]));
  if (scores.size === 0) return { error: 'none of the options names a text in the state' };
  const neutral = [...scores.values()].reduce((a, b) => a + b, 0) / scores.size;
  const weights = options.map((o) => (scores.get(o) ?? neutral) + FLOOR);
  const total = weights.reduce((a, b) => a + b, 0);
  return { probabilities: Object.fromEntries(options.map((o, i) => [o, weights[i] / total])) };
}

export function decideRow(row) {
  const { state } = row;
  const answer = (question) => {
    if (question.type === 'choice') return choiceAnswer(question, state);
    if (typeof state.candidate !== 'string') return { error: 'the state has no "candidate" text' };
    if (question.type === 'noul') {
      const q = quality(state, state.candidate);
      return { probabilities: { true: q, false: 1 - q } };
    }
    return scoreAnswer(question, quality(state, state.candidate));
  };
  // (fromEntries: a question named "__proto__" is answered too; answers[name] = … would set the prototype)
  const answers = Object.fromEntries(Object.entries(row.questions).map(([name, q]) => [name, answer(q)]));
  return { id: row.id, answers };
}

export async function decide(rows) {
  return rows.map((row) => {
    const started = performance.now();
    return { ...decideRow(row), latency_s: (performance.now() - started) / 1000 };
  });
}
