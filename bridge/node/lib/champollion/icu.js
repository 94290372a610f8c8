// ICU MessageFormat plural, select and selectordinal messages: their syntax, and their skeleton (as
// mt_eval.champollion.icu). "{count, plural, offset:1 =0 {no items} one {# item} other {# items}}" is read
// (parse) into parts: its syntax ("{count, plural, offset:1 =0 {", "} one {", "}}"), which protect() keeps
// out of the translation as it keeps placeholders, the texts of its branches, which are translated, and the
// arguments inside them ("#", "{name}", "{n, number}"), which are placeholders. Its skeleton — argument
// names, plural/select/selectordinal, offset:, the selectors in order, and the messages nested in each
// branch — is written "{count, plural, offset:1 =0 {…} one {…} other {…}}"; a translation must keep it
// (restore()). Apostrophes quote as in ICU: '' is an apostrophe, and ' before {, } (or # in a plural
// branch) starts quoted text, up to the next '. bridge/vectors/champollion/placeholders.json holds the cases.

const COMPLEX = ['plural', 'select', 'selectordinal'];
export const MAX_NESTING = 50; // plural, select and selectordinal messages inside one another, at most (as Python)
const SPACE = ' \t\r\n';
const NOT_NAME = `${SPACE}{}',#`;

/** The text is not an ICU message: the reason, in a few words. */
export class IcuSyntaxError extends Error {
  constructor(message) {
    super(message);
    this.name = 'IcuSyntaxError';
  }
}

/** ICU messages nested deeper than MAX_NESTING: the key fails rather than being sent as plain text. */
export class IcuTooDeep extends IcuSyntaxError {
  constructor(message) {
    super(message);
    this.name = 'IcuTooDeep';
  }
}

/**
 * text read as an ICU message: {parts: [[kind, piece]] (kind "text", "syntax" or "argument"), skeleton: the
 * skeleton of its complex arguments ("" when it has none), branches: [[start, end]] where the message of each
 * of their branches starts and ends in text, in the order they start}; throws IcuSyntaxError when it cannot be.
 */
export function parse(text) {
  const reader = new Reader(text);
  const skeleton = reader.message(false, false);
  return { parts: reader.parts, skeleton, branches: reader.branches };
}

class Reader {
  constructor(text) {
    this.text = text;
    this.at = 0;
    this.parts = [];
    this.branches = [];
    this.depth = 0;
  }

  add(kind, piece) {
    const last = this.parts.at(-1);
    if (last && last[0] === kind && kind !== 'argument') last[1] += piece;
    else this.parts.push([kind, piece]);
  }

  // Read up to the } that closes a branch (nested) or to the end; the skeletons found in it.
  message(nested, plural) {
    const { text } = this;
    const special = plural ? "{}'#" : "{}'";
    const found = [];
    while (this.at < text.length) {
      const char = text[this.at];
      if (char === '}') {
        if (nested) return found.join(' ');
        throw new IcuSyntaxError('a } closes nothing');
      }
      if (char === '{') {
        const skeleton = this.argument(plural);
        if (skeleton) found.push(skeleton);
      } else if (char === '#' && plural) {
        this.add('argument', '#');
        this.at += 1;
      } else if (char === "'") {
        this.quoted(plural);
      } else {
        const start = this.at;
        while (this.at < text.length && !special.includes(text[this.at])) this.at += 1;
        this.add('text', text.slice(start, this.at));
      }
    }
    if (nested) throw new IcuSyntaxError('a { is not closed');
    return found.join(' ');
  }

  quoted(plural) {
    const { text } = this;
    const start = this.at;
    const after = text.slice(start + 1, start + 2);
    if (after === "'") {
      this.at += 2;
    } else if (after === '{' || after === '}' || (after === '#' && plural)) {
      this.at += 1;
      while (this.at < text.length) {
        if (text[this.at] === "'") {
          if (text.slice(this.at + 1, this.at + 2) !== "'") {
            this.at += 1;
            break;
          }
          this.at += 1;
        }
        this.at += 1;
      }
    } else {
      this.at += 1;
    }
    this.add('text', text.slice(start, this.at));
  }

  space() {
    while (this.at < this.text.length && SPACE.includes(this.text[this.at])) this.at += 1;
  }

  word() {
    const start = this.at;
    while (this.at < this.text.length && !NOT_NAME.includes(this.text[this.at])) this.at += 1;
    return this.text.slice(start, this.at);
  }

  next() {
    return this.text.slice(this.at, this.at + 1);
  }

  expect(char, reason) {
    if (this.next() !== char) throw new IcuSyntaxError(this.at < this.text.length ? reason : 'a { is not closed');
    this.at += 1;
  }

  // Read {name}, {name, type…} or a complex argument from its {; its skeleton ("" for an argument that is
  // not plural, select or selectordinal).
  argument(plural) {
    let start = this.at;
    this.at += 1;
    this.space();
    const name = this.word();
    if (!name) throw new IcuSyntaxError('an argument without a name');
    this.space();
    let kind = '';
    if (this.next() === ',') {
      this.at += 1;
      this.space();
      kind = this.word();
      this.space();
    }
    if (!COMPLEX.includes(kind) || this.next() !== ',') {
      this.skipStyle();
      this.add('argument', this.text.slice(start, this.at));
      return '';
    }
    this.at += 1;
    this.space();
    let offset = '';
    if (kind !== 'select' && this.text.startsWith('offset:', this.at)) {
      this.at += 'offset:'.length;
      this.space();
      offset = this.word();
      if (!offset) throw new IcuSyntaxError(`offset: without a number in {${name}, ${kind}}`);
      offset = `offset:${offset} `;
      this.space();
    }
    this.depth += 1;
    if (this.depth > MAX_NESTING) throw new IcuTooDeep(`ICU messages nested over ${MAX_NESTING} levels deep`);
    const branches = [];
    while (this.next() !== '}') {
      const selector = this.word();
      if (!selector) {
        throw new IcuSyntaxError(this.at < this.text.length ? `{${name}, ${kind}} has a branch without a selector` : 'a { is not closed');
      }
      this.space();
      this.expect('{', `selector ${selector} of {${name}, ${kind}} without its {message}`);
      this.add('syntax', this.text.slice(start, this.at));
      const branch = [this.at, this.at];
      this.branches.push(branch);
      const inner = this.message(true, plural || kind !== 'select');
      branch[1] = this.at;
      start = this.at;
      this.at += 1;
      this.space();
      branches.push(`${selector} {${inner || '…'}}`);
    }
    if (!branches.length) throw new IcuSyntaxError(`{${name}, ${kind}} has no selectors`);
    this.depth -= 1;
    this.at += 1;
    this.add('syntax', this.text.slice(start, this.at));
    return `{${name}, ${kind}, ${offset}${branches.join(' ')}}`;
  }

  // Past the } that closes a simple argument (its style may hold braces: {d, date, ::{x}}).
  skipStyle() {
    let depth = 0;
    while (this.at < this.text.length) {
      const char = this.text[this.at];
      this.at += 1;
      if (char === '{') depth += 1;
      else if (char === '}') {
        if (depth === 0) return;
        depth -= 1;
      }
    }
    throw new IcuSyntaxError('a { is not closed');
  }
}
