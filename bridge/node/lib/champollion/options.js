// translateLocales's options, checked before anything is read or sent: a misspelled or mistyped option is a
// TypeError naming it (as startGuest's are), not an internal error later or a setting silently ignored.
import { describe, isPlainObject } from '../protocol.js';

const isFunction = (value) => typeof value === 'function';
const isString = (value) => typeof value === 'string';
const RULES = {
  locales: ['a list of target locales (strings)', (value) => Array.isArray(value) && value.every(isString)],
  dryRun: ['true or false', (value) => typeof value === 'boolean'],
  force: ['true or false', (value) => typeof value === 'boolean'],
  progress: ['a function (locale, done, total)', isFunction],
  onWarning: ['a function (problem)', isFunction],
  onWait: ['a function (busy)', isFunction],
  onCloseProblem: ['a function (message)', isFunction],
  onCall: ['a function (locale, strings, runConfig)', isFunction],
  mtEval: ['a command: a string or a list of strings', (value) => isString(value) || (Array.isArray(value) && value.every(isString))],
  logger: ['an object with debug, info, warn and error functions', (value) => typeof value === 'object'],
  command: ['a string', isString],
  wait: ['a number of seconds, 0 or more (Infinity: no limit)', (value) => typeof value === 'number' && value >= 0],
  signal: ['an AbortSignal', (value) => value instanceof AbortSignal],
  closeTimeoutS: ['a number of seconds above 0', (value) => typeof value === 'number' && value > 0 && Number.isFinite(value)],
  startTimeoutS: ['a number of seconds above 0', (value) => typeof value === 'number' && value > 0 && Number.isFinite(value)],
};

/** Throws a TypeError for the first option of translateLocales that is unknown or not of its kind. */
export function checkLocalesOptions(configPathOrDir, options) {
  if (configPathOrDir !== undefined && configPathOrDir !== null && !isString(configPathOrDir)) {
    throw new TypeError(`the config must be a path (a string): the config file or the directory holding it, got ${describe(configPathOrDir)}`);
  }
  if (!isPlainObject(options)) throw new TypeError(`options must be an object, got ${describe(options)}`);
  for (const [name, value] of Object.entries(options)) {
    const rule = RULES[name];
    if (rule === undefined) {
      throw new TypeError(`options.${name} is not an option of translateLocales; the options are ${Object.keys(RULES).join(', ')}`);
    }
    if (value !== undefined && value !== null && !rule[1](value)) {
      throw new TypeError(`options.${name} must be ${rule[0]}, got ${Number.isNaN(value) ? 'NaN' : describe(value)}`);
    }
  }
}
