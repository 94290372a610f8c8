// Licence expressions, checked as mt_eval/licenses.py checks them: SPDX expressions (ids and aliases from the
// generated table lib/generated/licences.json, which both runtimes read), "proprietary" or "none". The
// grammar and every message are the Python side's; bridge/vectors/contract/licences.json pins them.
import { readFileSync } from 'node:fs';

import { getCloseMatches, jsString } from './words.js';

export const PROPRIETARY = 'proprietary';
export const NONE = 'none';
const RESTRICTIONS = [['n', 'non-commercial'], ['d', 'no-derivatives']];
const LICENSE_REF = /^LicenseRef-[A-Za-z0-9.-]+$/;
const OPERATORS = ['AND', 'OR', 'WITH'];

let document = null;
let table = null;

const licenceDocument = () => {
  document ??= JSON.parse(readFileSync(new URL('../generated/licences.json', import.meta.url), 'utf8'));
  return document;
};

// Lower-case id or alias → canonical id, built on first need (most licences are written as their id is).
function licenceTable() {
  if (table) return table;
  const { licences: known, exceptions: exceptionIds } = licenceDocument();
  const licences = new Map();
  for (const key of Object.keys(known)) licences.set(key.toLowerCase(), key);
  for (const [key, [, ...aliases]] of Object.entries(known)) {
    for (const alias of aliases) if (!licences.has(alias.toLowerCase())) licences.set(alias.toLowerCase(), key);
  }
  const exceptions = new Map(exceptionIds.map((key) => [key.toLowerCase(), key]));
  const allIds = [...Object.keys(known), ...exceptionIds].sort(byCodePoints);
  table = { licences, exceptions, allIds };
  return table;
}

/** The canonical id of a licence written `token` (any case, or an alias), or undefined. */
function licenceId(token) {
  const { licences } = licenceDocument();
  return Object.hasOwn(licences, token) ? token : licenceTable().licences.get(token.toLowerCase());
}

/** The canonical id of a licence exception written `token`, or undefined. */
function exceptionId(token) {
  const { exceptions } = licenceDocument();
  return exceptions.includes(token) ? token : licenceTable().exceptions.get(token.toLowerCase());
}

const byCodePoints = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

class Invalid extends Error {
  constructor(reason, hint) {
    super(reason);
    this.reason = reason;
    this.hint = hint;
  }
}

const known = (token) => licenceId(token) !== undefined || exceptionId(token) !== undefined || LICENSE_REF.test(token);

// expression := and-list (OR and-list)* ; and-list := term (AND term)* ; term := "(" expression ")" | licence [WITH exception]
class Parser {
  constructor(tokens) {
    this.tokens = tokens;
    this.at = 0;
    const unknown = [...new Set(tokens.filter((t) => t !== '(' && t !== ')' && !OPERATORS.includes(t.toUpperCase()) && !known(t)))];
    if (unknown.length) {
      throw new Invalid(`unknown licence identifier${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`, licenceHint(unknown));
    }
  }

  peek() {
    return this.at < this.tokens.length ? this.tokens[this.at] : null;
  }

  parse() {
    const tree = this.joined('OR', () => this.joined('AND', () => this.term()));
    const token = this.peek();
    if (token === ')') throw new Invalid('unbalanced parentheses: a ) without its (');
    if (token !== null) throw new Invalid(`two licences in a row ("${this.tokens[this.at - 1]} ${token}"): join them with AND or OR`);
    return tree;
  }

  joined(operator, part) {
    const parts = [part()];
    while ((this.peek() ?? '').toUpperCase() === operator) {
      this.at++;
      const next = this.peek();
      if (next === null || next === ')' || OPERATORS.includes(next.toUpperCase())) throw new Invalid(`${operator} needs a licence on each side`);
      parts.push(part());
    }
    return parts.length === 1 ? parts[0] : { operator, parts };
  }

  term() {
    const token = this.peek();
    if (token === null) throw new Invalid('unbalanced parentheses: a ( without its )');
    if (token === ')') throw new Invalid('empty parentheses');
    const upper = token.toUpperCase();
    if (upper === 'AND' || upper === 'OR') throw new Invalid(`${upper} needs a licence on each side`);
    if (upper === 'WITH') {
      throw new Invalid('WITH needs a licence before it and an exception after it, e.g. "GPL-2.0-only WITH Classpath-exception-2.0"');
    }
    this.at++;
    if (token === '(') {
      const inner = this.joined('OR', () => this.joined('AND', () => this.term()));
      if (this.peek() !== ')') throw new Invalid('unbalanced parentheses: a ( without its )');
      this.at++;
      return inner;
    }
    const id = licenceId(token);
    if (id === undefined && !LICENSE_REF.test(token)) {
      throw new Invalid(`"${token}" is a licence exception: write it after WITH, e.g. "GPL-2.0-only WITH ${token}"`);
    }
    const licence = id ?? token;
    let exception = null;
    if ((this.peek() ?? '').toUpperCase() === 'WITH') {
      this.at++;
      const following = this.peek();
      exception = following === null ? undefined : exceptionId(following);
      if (exception === undefined) {
        throw new Invalid('WITH needs a licence exception after it, e.g. "WITH Classpath-exception-2.0"');
      }
      this.at++;
    }
    return { licence, exception };
  }
}

const render = (node, top = false) => {
  if (node.licence) return node.licence + (node.exception ? ` WITH ${node.exception}` : '');
  const text = node.parts.map((part) => render(part)).join(` ${node.operator} `);
  return top ? text : `(${text})`;
};
const flagsOf = (node) => licenceDocument().licences[node.licence]?.[0] ?? '';
const isOpen = (node) => (node.licence ? flagsOf(node).includes('o')
  : node.operator === 'AND' ? node.parts.every(isOpen) : node.parts.some(isOpen));

function restrictionLetters(node) {
  if (node.licence) return RESTRICTIONS.map(([letter]) => letter).filter((letter) => flagsOf(node).includes(letter)).join('');
  const parts = node.parts.map(restrictionLetters);
  const keep = node.operator === 'AND' ? (letter) => parts.some((p) => p.includes(letter)) : (letter) => parts.every((p) => p.includes(letter));
  return RESTRICTIONS.map(([letter]) => letter).filter(keep).join('');
}

/**
 * Check a licence: {ok, normalized, isOpen, restriction, message, hint}, as mt_eval.licenses.check_licence.
 * restriction: "non-commercial", "no-derivatives", both joined by ", ", or null.
 */
export function checkLicence(text) {
  if (text === PROPRIETARY || text === NONE) return { ok: true, normalized: text, isOpen: false, restriction: null };
  const word = text.trim().toLowerCase();
  if (word === PROPRIETARY || word === NONE) {
    return { ok: false, isOpen: false, restriction: null, message: `licence "${text}" must be written exactly "${word}"`, hint: `write "${word}"` };
  }
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  if (!tokens.length) return { ok: false, isOpen: false, restriction: null, message: 'licence is empty', hint: genericHint() };
  let tree;
  try {
    tree = new Parser(tokens).parse();
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return { ok: false, isOpen: false, restriction: null,
      message: `${jsString(text)} is not a valid SPDX licence expression: ${error.reason}`, hint: error.hint ?? genericHint() };
  }
  const letters = restrictionLetters(tree);
  const restriction = RESTRICTIONS.filter(([letter]) => letters.includes(letter)).map(([, name]) => name).join(', ') || null;
  return { ok: true, normalized: render(tree, true), isOpen: isOpen(tree), restriction };
}

function licenceHint(unknown) {
  const lower = new Map(licenceTable().allIds.map((key) => [key.toLowerCase(), key]));
  const candidates = [...lower.keys()];
  const suggestions = [];
  for (const token of unknown) {
    const variants = [...new Set([token.toLowerCase().replace(/v(\d)(\.\d)?/g, (_, major, minor) => `-${major}${minor ?? '.0'}`),
      token.toLowerCase()])];
    for (const variant of variants) {
      for (const close of getCloseMatches(variant, candidates, 3, 0.6)) {
        if (!lower.get(close).startsWith('LicenseRef')) suggestions.push(lower.get(close));
      }
    }
  }
  if (suggestions.length) return `did you mean ${[...new Set(suggestions)].map((s) => `"${s}"`).join(' or ')}? ${genericHint()}`;
  return genericHint();
}

const genericHint = () => 'use an SPDX licence expression such as "MIT", "GPL-2.0-or-later" or "Apache-2.0 OR MIT" '
  + '(see spdx.org/licenses), or "proprietary", or "none" when there is no licence';
