// A decision row as both runtimes check it: the schema (bridge/schemas/decision-row.schema.json, through the
// contract decoder) and the cross-field rules a schema cannot express — the findings() of DecisionRow and
// Question in mt_eval/decisions/records.py, word for word (bridge/vectors/contract/decision-rows.json pins both).
import { decodeValue } from './contract/decode.js';
import { registerRules } from './contract/rules.js';
import { compile, root } from './contract/schema.js';
import { got } from './contract/words.js';

export const MAX_CHOICE_OPTIONS = 255;
export const MAX_SCORE_LEVELS = 101;
const NOUL = ['true', 'false'];

const finding = (at, message, hint, code) => ({ at, message, hint, severity: 'error', code });

/** A number as both runtimes print it in labels and messages: at most six decimals, no trailing zeros. */
/** A score level's value lies within ±this: each runtime writes it the same way. */
export const MAX_LEVEL_VALUE = 1e15;

export function numberText(value) {
  const text = value.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  return text === '-0' || text === '' ? '0' : text;
}

// A number in a message where a rounded one could read as another (a probability of 1.0000000000000002 as "1", a
// sum of 1.0010001 as "1.001" against a tolerance of 0.001): numberText when it reads back as the number, else its
// shortest exact form (as the Python side writes it: exact_text).
export function exactText(value) {
  const text = numberText(value);
  return Number(text) === value ? text : String(value);
}

// How many times each name occurs, in the order first seen.
function counts(names) {
  const out = new Map();
  for (const name of names) out.set(name, (out.get(name) ?? 0) + 1);
  return out;
}

function choiceFindings(options, kind) {
  if (options === null) return [finding([], `${kind} needs "options"`, 'add "options": ["first", "second", ...]', 'missing')];
  const out = [];
  if (options.length < 2 || options.length > MAX_CHOICE_OPTIONS) {
    out.push(finding(['options'], `needs 2 to ${MAX_CHOICE_OPTIONS} options, got ${options.length}`, 'list at least two options', 'length'));
  }
  for (const [option, count] of counts(options)) {
    if (count > 1) out.push(finding(['options'], `"${option}" is listed ${count} times`, 'list each option once', 'duplicate'));
  }
  return out;
}

/** What is wrong with a score question's (or a rubric's) levels: too few or many, out of order, labels reused. */
export function scoreFindings(levels, kind = 'a "score" question') {
  if (levels === null) {
    return [finding([], `${kind} needs "levels"`, 'add "levels": [{"value": 0, "description": "..."}, ...], lowest first', 'missing')];
  }
  const out = [];
  if (levels.length < 2 || levels.length > MAX_SCORE_LEVELS) {
    out.push(finding(['levels'], `needs 2 to ${MAX_SCORE_LEVELS} levels, got ${levels.length}`, 'a rubric has at least two levels', 'length'));
  }
  const tooLarge = levels.findIndex((level) => !(Math.abs(level.value) <= MAX_LEVEL_VALUE));
  if (tooLarge !== -1) { // (1e400 reads as Infinity, and Python prints it differently)
    const shown = String(levels[tooLarge].value);
    out.push(finding(['levels', tooLarge, 'value'], `${shown} is not a level value: ${shown === 'NaN' ? 'not a number'
      : 'too large to write the same way everywhere'}`, 'give a number from -1e+15 to 1e+15 (JSON has no infinity: a number too large to hold is '
      + 'read as one)', 'range'));
    return out;
  }
  for (let i = 1; i < levels.length; i++) {
    if (levels[i].value <= levels[i - 1].value) {
      out.push(finding(['levels', i, 'value'], `the rubric is not in order: level ${i} has value ${numberText(levels[i].value)}, `
        + `not more than level ${i - 1}'s ${numberText(levels[i - 1].value)}`, 'list the levels from the lowest value to the highest, each value once', 'order'));
    }
  }
  for (const [name, count] of counts(levels.map((level) => level.label ?? numberText(level.value)))) {
    if (count > 1) out.push(finding(['levels'], `the label "${name}" is used by ${count} levels`, 'give each level its own label', 'duplicate'));
  }
  return out;
}

function questionRules(question) {
  const kind = `a "${question.type}" question`;
  const options = question.options ?? null;
  const levels = question.levels ?? null;
  const criteria = question.criteria ?? null;
  const out = [];
  if (question.type === 'choice') out.push(...choiceFindings(options, kind));
  else if (options !== null) {
    out.push(finding(['options'], `${kind} has no "options"`, 'remove "options" (only "choice" questions list options)', 'unused'));
  }
  if (question.type === 'score') out.push(...scoreFindings(levels, kind));
  else if (levels !== null) {
    out.push(finding(['levels'], `${kind} has no "levels"`, 'remove "levels" (only "score" questions have levels)', 'unused'));
  }
  if (criteria !== null) {
    if (question.type === 'score') {
      out.push(finding(['criteria'], 'a "score" question describes its levels in "levels"', 'move each description to its level\'s "description"', 'unused'));
    } else {
      const known = question.type === 'noul' ? NOUL : options ?? [];
      for (const key of Object.keys(criteria)) {
        if (!known.includes(key)) {
          out.push(finding(['criteria', key], `"${key}" is not an option of this question`, `describe only the options: ${known.join(', ')}`, 'unknown-option'));
        }
      }
    }
  }
  return out;
}

function rowRules(row) {
  const out = [];
  const names = Object.keys(row.questions);
  if (names.length === 0) {
    out.push(finding(['questions'], 'a row needs at least one question', 'add "questions": {"name": {"type": "noul", "instructions": "..."}}', 'length'));
  }
  if (names.includes('')) out.push(finding(['questions'], 'a question name must not be empty', 'name every question', 'length'));
  return out;
}

registerRules('Question', questionRules);
registerRules('DecisionRow', rowRules);

let fitsSchema = null;
// Whether a row fits its schema and rules: the usual row, checked by the compiled schema (the decoder walks only
// a row that does not, to word its first problem).
function fits(row) {
  if (fitsSchema === null) {
    const { document } = root('decision-row');
    fitsSchema = compile(document, { $ref: document.$ref });
  }
  return fitsSchema(row) && rowRules(row).length === 0
    && Object.values(row.questions).every((question) => questionRules(question).length === 0);
}

/** Why rows cannot be sent to decide() (null when they can): each row as its schema and rules say, ids unique. */
export function rowsProblem(rows, where = 'rows') {
  if (!Array.isArray(rows)) return `${where} must be a list of rows, got ${got(rows)}`;
  const seen = new Set();
  for (const [i, row] of rows.entries()) {
    const first = fits(row) ? undefined
      : decodeValue(row, 'decision-row', { file: where }).problems.find((problem) => problem.severity === 'error');
    if (first) return `${where}[${i}]${first.path === '$' ? '' : first.path.slice(1)}: ${first.message}`;
    if (seen.has(row.id)) return `${where}[${i}].id: ${JSON.stringify(row.id)} appears twice`;
    seen.add(row.id);
  }
  return null;
}
