// Results that match no entry of the call they answer, and answers that match no request in flight: dropped, and
// said for the first few calls (results) or once (answers), in the words every host uses (in process or through a
// guest, Node or Python: mt_eval.results, mt_eval.bridge.answers).
import { isPlainObject } from './protocol.js';

/**
 * The warning for returned results that match no entry sent (the items onUnknown got), in the words every host
 * uses, in process or through a guest (mt_eval.results.strays_dropped).
 */
export function straysDropped(items) {
  const shown = (id) => {
    if (typeof id === 'string') return JSON.stringify(id);
    if (id === undefined || id === null || typeof id === 'boolean' || Number.isFinite(id)) return JSON.stringify(id ?? null);
    return Array.isArray(id) ? 'a list' : isPlainObject(id) ? 'an object' : 'a value';
  };
  const ids = [...new Set(items.filter(isPlainObject).map((item) => shown(item.id)))];
  const parts = [];
  if (ids.length) parts.push(`ids ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ` and ${ids.length - 5} more` : ''}`);
  const others = items.filter((item) => !isPlainObject(item)).length; // (an item that is no object is no result)
  if (others) parts.push(`${others} item${others > 1 ? 's that are' : ' that is'} not an object`);
  return `the method returned results that match no entry it was sent (${parts.join('; ')}); they were dropped (a `
    + 'result\'s id is its entry\'s id, a string)';
}

/**
 * What a guest sends for a returned item without a string id, for its host to say it as straysDropped does in
 * process: its id as straysDropped shows it (an empty list or object for one, null for what JSON cannot carry), or
 * null for an item that is no object (mt_eval.results.stray_stand_in).
 */
export function strayStandIn(item) {
  if (!isPlainObject(item)) return null;
  const { id } = item;
  if (typeof id === 'string' || typeof id === 'boolean' || Number.isFinite(id)) return { id };
  return { id: Array.isArray(id) ? [] : isPlainObject(id) ? {} : null };
}

/** Calls whose unmatched results a host reports (mt_eval.results.STRAY_REPORTS); the last of them says so. */
export const STRAY_REPORTS = 3;
const LATER = '; later calls\' results that match no entry are dropped without a word';

/**
 * Say one call's unmatched results (straysDropped) with say(text), for the first STRAY_REPORTS calls of the host
 * whose ResultNotes are notes; nothing after those (mt_eval.results.ResultNotes.stray_warning): a method that does
 * it in every batch is not reported a thousand times.
 */
export function sayStrays(notes, strays, say) {
  if (!strays.length || notes.strayCalls >= STRAY_REPORTS) return;
  notes.strayCalls += 1;
  say(straysDropped(strays) + (notes.strayCalls === STRAY_REPORTS ? LATER : ''));
}

/**
 * Answers whose id names no request in flight (mt_eval.bridge.answers.say_unmatched): the first is said as a warning
 * with its id, later ones at debug. A guest that answers with the wrong id does so every time and its requests time
 * out: the timeout of one that waited meanwhile names such an answer as why it got none (`cause`).
 */
export class UnmatchedAnswers {
  #count = 0;
  #last = '';

  constructor(logger) {
    this.logger = logger;
  }

  /** What a request sent now is stamped with (`cause` tells the answers that came after it). */
  get mark() {
    return this.#count;
  }

  /** Say an answer with this id, which names none of `pending` (id → request, as stamped by `mark`). */
  add(id, pending) {
    const given = JSON.stringify(id);
    const sent = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : null;
    const hint = pending.has(sent) ? ` (request ${sent} is, with an integer id: an answer carries its request's id as it was sent)` : '';
    this.#last = `the guest answered with id ${given}, which names no request in flight${hint}`;
    if (hint) pending.get(sent).misnamed = this.#last; // (its own answer, under the wrong id)
    if (this.#count++ > 0) this.logger.debug(`dropped an answer with id ${given}, which names no request in flight`);
    else this.logger.warn(`${this.#last}; dropped (as later such answers are, without a warning)`);
  }

  /** Why `request` (stamped `unmatchedMark`) had no answer: "; " and the answer it waited through; else ''. */
  cause(request) {
    const said = request.misnamed ?? (this.#count > request.unmatchedMark ? this.#last : '');
    return said ? `; ${said}` : '';
  }
}
