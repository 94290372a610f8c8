// "Did you mean" suggestions exactly as Python's difflib.get_close_matches makes them (the Ratcliff/Obershelp
// ratio of SequenceMatcher, with its autojunk rule), so both runtimes suggest the same names.

function b2jOf(b) {
  const b2j = new Map();
  b.forEach((item, i) => {
    if (!b2j.has(item)) b2j.set(item, []);
    b2j.get(item).push(i);
  });
  const popular = new Set();
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [item, indices] of b2j) if (indices.length > ntest) popular.add(item);
    for (const item of popular) b2j.delete(item);
  }
  return { b2j, popular };
}

function longestMatch(a, b, b2j, isJunk, alo, ahi, blo, bhi) {
  let [besti, bestj, bestsize] = [alo, blo, 0];
  let j2len = new Map();
  for (let i = alo; i < ahi; i++) {
    const next = new Map();
    for (const j of b2j.get(a[i]) ?? []) {
      if (j < blo) continue;
      if (j >= bhi) break;
      const k = (j2len.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > bestsize) [besti, bestj, bestsize] = [i - k + 1, j - k + 1, k];
    }
    j2len = next;
  }
  for (const junk of [false, true]) {
    while (besti > alo && bestj > blo && isJunk(b[bestj - 1]) === junk && a[besti - 1] === b[bestj - 1]) {
      besti--; bestj--; bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && isJunk(b[bestj + bestsize]) === junk
      && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
  }
  return [besti, bestj, bestsize];
}

/** SequenceMatcher(None, a, b) with a, b strings: ratio() and its two cheaper upper bounds. */
class SequenceMatcher {
  constructor(b) {
    this.b = Array.from(b);
    ({ b2j: this.b2j, popular: this.popular } = b2jOf(this.b));
    this.fullBCount = null;
  }

  setA(a) {
    this.a = Array.from(a);
  }

  realQuickRatio() {
    const [la, lb] = [this.a.length, this.b.length];
    return ratio(Math.min(la, lb), la + lb);
  }

  quickRatio() {
    if (this.fullBCount === null) {
      this.fullBCount = new Map();
      for (const item of this.b) this.fullBCount.set(item, (this.fullBCount.get(item) ?? 0) + 1);
    }
    const avail = new Map();
    let matches = 0;
    for (const item of this.a) {
      const left = avail.has(item) ? avail.get(item) : (this.fullBCount.get(item) ?? 0);
      avail.set(item, left - 1);
      if (left > 0) matches++;
    }
    return ratio(matches, this.a.length + this.b.length);
  }

  ratio() {
    const { a, b, b2j } = this;
    const isJunk = () => false; // no junk function; popular elements are left out of b2j, not junk
    const queue = [[0, a.length, 0, b.length]];
    const blocks = [];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      const [i, j, k] = longestMatch(a, b, b2j, isJunk, alo, ahi, blo, bhi);
      if (k) {
        blocks.push([i, j, k]);
        if (alo < i && blo < j) queue.push([alo, i, blo, j]);
        if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
      }
    }
    const matches = blocks.reduce((sum, [, , size]) => sum + size, 0);
    return ratio(matches, a.length + b.length);
  }
}

const ratio = (matches, length) => (length ? (2.0 * matches) / length : 1.0);

/** difflib.get_close_matches(word, possibilities, n, cutoff): best first, ties by the larger string. */
export function getCloseMatches(word, possibilities, n = 3, cutoff = 0.6) {
  const matcher = new SequenceMatcher(word);
  const found = [];
  for (const candidate of possibilities) {
    matcher.setA(candidate);
    if (matcher.realQuickRatio() >= cutoff && matcher.quickRatio() >= cutoff) {
      const score = matcher.ratio();
      if (score >= cutoff) found.push([score, candidate]);
    }
  }
  const byCodePoints = (x, y) => {
    const [p, q] = [Array.from(x), Array.from(y)];
    for (let i = 0; i < Math.min(p.length, q.length); i++) {
      const diff = p[i].codePointAt(0) - q[i].codePointAt(0);
      if (diff) return diff;
    }
    return p.length - q.length;
  };
  found.sort(([s1, x1], [s2, x2]) => (s2 - s1) || byCodePoints(x2, x1));
  return found.slice(0, n).map(([, candidate]) => candidate);
}
