// What the Node guest says about a request and its method: its own version, a thrown error in the words the
// Python guest uses, what is wrong with a request's entries, and a request being worked on (Job).
import { readFileSync } from 'node:fs';

import { got } from './contract/value-words.js';
import { capped, writable } from './lone-surrogates.js';
import { describe, isPlainObject } from './protocol.js';

export function guestVersion() {
  try {
    return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  } catch {
    return '0.0.0';
  }
}

// "TypeError: message", as the Python guest words a raised exception, with its cause when it has one
// (fetch() throws "fetch failed" and says why only in its cause: "getaddrinfo EAI_AGAIN example.com"); a lone
// surrogate in it is written as its escape (writable), and a long message is capped (MESSAGE_LIMIT), as the Python
// guest does.
/** The type a failure names in its error's data: the Error's name, or "thrown" for a value that is not an Error. */
export const failureType = (error) => (error instanceof Error ? error.name : 'thrown');

export function failureMessage(error) {
  if (!(error instanceof Error)) return capped(writable(`thrown: ${describe(error)}`));
  if (error.name === 'MethodExitError') return error.message; // ("the method called process.exit(3): …": it says all)
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : '';
  return capped(writable(`${error.name}: ${error.message}${cause}`));
}

/** A thrown value for a log line: an Error's stack, else the value itself — in words when it cannot be made a string
 * (a Symbol, an object without a prototype), so that logging a failure never throws in turn. Its message is capped
 * (MESSAGE_LIMIT), the stack's frames kept. */
export function thrownText(error) {
  try {
    if (typeof error?.stack !== 'string') return capped(String(error));
    const header = `${error.name}: ${error.message}`;
    return error.stack.startsWith(header) ? capped(header) + error.stack.slice(header.length) : capped(error.stack);
  } catch {
    return describe(error);
  }
}

export const idKey = (id) => (typeof id === 'string' ? `s${id}` : `n${id}`);

/**
 * What is wrong with a translate request's entries (a list of objects, each with a non-empty string id, unique in
 * the request, and a string source), in the words of both reference guests, `where` naming them (a host says
 * "entries" of its caller's, as mt_eval.bridge.messages.entries_problem does); null when nothing is.
 */
export function entriesProblem(entries, where = 'params.entries') {
  if (!Array.isArray(entries)) return `${where} must be a list of entries, got ${got(entries)}`;
  const seen = new Set();
  for (const [i, entry] of entries.entries()) {
    if (!isPlainObject(entry)) return `${where}[${i}] must be an object, got ${got(entry)}`;
    if (typeof entry.id !== 'string' || entry.id === '') {
      return `${where}[${i}].id must be a non-empty string, got ${got(entry.id)}`;
    }
    if (typeof entry.source !== 'string') {
      return `${where}[${i}].source must be a string, got ${got(entry.source)}`;
    }
    if (seen.has(entry.id)) return `${where}[${i}].id ${JSON.stringify(entry.id)} appears twice in the request`;
    seen.add(entry.id);
  }
  return null;
}

// A translate or decide request being worked on, or waiting its turn. It is also the third argument of the
// method's call, {signal}: the AbortSignal is created only if the method reads it (creating one per request is
// a measurable share of a small request's cost).
export class Job {
  constructor(kind, id, key, entries, config) {
    this.kind = kind;
    this.id = id;
    this.key = key;
    this.entries = entries;
    this.config = config;
    this.controller = null;
    this.cancelled = false;
    this.running = false; // given a slot (guest-slots.js)
    this.settleTimer = null; // once cancelled while running: when it is abandoned
    this.abandoned = false;
  }

  get signal() {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }
}
