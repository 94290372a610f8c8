// Results that match no entry of the call they answer: dropped, and said once, in the words every host uses (in
// process or through a guest, Node or Python: mt_eval.results.strays_dropped).
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
