// Results that match no entry of the call they answer, and answers that match no request in flight: dropped, and
// said for the first few calls (results) or once (answers), in the words every host uses (in process or through a
// guest, Node or Python: mt_eval.unmatched_results, mt_eval.bridge.answers).
import { got } from './contract/value-words.js';
import { isPlainObject } from './protocol.js';

/** Characters of a string a guest sends for an item that is no object: got() shows 40, or 37 and "..." past them. */
const EXCERPT = 41;

/**
 * The warning for returned results that match no entry sent (the items onUnknown got), in the words every host
 * uses, in process or through a guest (mt_eval.unmatched_results.strays_dropped): the ids that match no entry, or
 * the first item that is no object (as its strayStandIn shows it), and what a method returns instead.
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
  const others = items.filter((item) => !isPlainObject(item)); // (an item that is no object is no result)
  if (others.length) {
    const [many, first] = [others.length > 1, got(strayStandIn(others[0]))];
    parts.push(`${others.length} item${many ? 's that are' : ' that is'} not an object${many ? ', e.g.' : ':'} ${first}`);
  }
  return `the method returned results that match no entry it was sent (${parts.join('; ')}); they were dropped (a `
    + 'result is {"id": entry["id"], "predicted": TEXT}, one per entry)';
}

/**
 * What a guest sends for a returned item without a string id, for its host to say it as straysDropped does in
 * process (mt_eval.unmatched_results.stray_stand_in). For an object: its id as straysDropped shows it (an empty list
 * or object for one, null for what JSON cannot carry). For an item that is no object, the item: a string cut to
 * EXCERPT characters, a finite number, true, false or null as it is, an empty list for an array, null for the rest.
 */
export function strayStandIn(item) {
  if (typeof item === 'string') return [...item].slice(0, EXCERPT).join('');
  if (typeof item === 'boolean' || item === null || Number.isFinite(item)) return item;
  if (!isPlainObject(item)) return Array.isArray(item) ? [] : null;
  const { id } = item;
  if (typeof id === 'string' || typeof id === 'boolean' || Number.isFinite(id)) return { id };
  return { id: Array.isArray(id) ? [] : isPlainObject(id) ? {} : null };
}

/** Calls whose unmatched results a host reports (mt_eval.unmatched_results.STRAY_REPORTS); the last says so. */
export const STRAY_REPORTS = 3;
const LATER = '; later calls\' results that match no entry are dropped without a word';

/**
 * Say one call's unmatched results (straysDropped) with say(text), for the first STRAY_REPORTS calls of the host
 * whose ResultNotes are notes; nothing after those, nor for a call said already, a retry's
 * (mt_eval.results.ResultNotes.stray_warning): a method that does it in every batch is not reported a thousand times.
 */
export function sayStrays(notes, strays, say) {
  if (!strays.length || notes.strayCalls >= STRAY_REPORTS) return;
  const said = straysDropped(strays);
  notes.straysSaid ??= new Set(); // (a retried call that returns the same strays is not said again)
  if (notes.straysSaid.has(said)) return;
  notes.straysSaid.add(said);
  notes.strayCalls += 1;
  say(said + (notes.strayCalls === STRAY_REPORTS ? LATER : ''));
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

  /** Say an answer with this id, which names none of `pending` (id → request, as stamped by `mark`). An initialize
   * answered so is not said: {id, message} is returned, to fail it at once, as no guest answers it again. */
  add(id, pending) {
    const given = JSON.stringify(id);
    const sent = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : null;
    if (pending.get(sent)?.method === 'initialize') {
      this.#count++;
      return { id: sent, message: `it answered initialize with id ${given}, not ${sent}: an answer carries its request's id `
        + 'as it was sent (an integer stays an integer)' };
    }
    const hint = pending.has(sent) ? ` (request ${sent} is, with an integer id: an answer carries its request's id as it was sent)` : '';
    this.#last = `the guest answered with id ${given}, which names no request in flight${hint}`;
    if (hint) pending.get(sent).misnamed = this.#last; // (its own answer, under the wrong id)
    if (this.#count++ > 0) this.logger.debug(`dropped an answer with id ${given}, which names no request in flight`);
    else this.logger.warn(`${this.#last}; dropped (as later such answers are, without a warning)`);
    return null;
  }

  /** Why `request` (stamped `unmatchedMark`) had no answer: "; " and the answer it waited through; else ''. */
  cause(request) {
    const said = request.misnamed ?? (this.#count > request.unmatchedMark ? this.#last : '');
    return said ? `; ${said}` : '';
  }
}
