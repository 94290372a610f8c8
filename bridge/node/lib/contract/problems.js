// Problems found in a user's files: where (file + JSON path), what, and how to fix it — the shape and the
// rendering of mt_eval/problems.py, so both runtimes print the same lines.

const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;

/** ("a", 2, "en:es") → $.a[2]["en:es"], as the Python SDK writes JSON paths. */
export function jsonPath(parts) {
  return parts.reduce((out, part) => (typeof part === 'number' ? `${out}[${part}]`
    : IDENTIFIER.test(part) ? `${out}.${part}` : `${out}[${JSON.stringify(part)}]`), '$');
}

/** A problem as one or two lines: "error: FILE PATH: message" and "    fix: hint". */
export function renderProblem({ file, path, message, hint, severity }) {
  return `${severity}: ${path === '$' ? file : `${file} ${path}`}: ${message}${hint ? `\n    fix: ${hint}` : ''}`;
}

export const errorsOf = (problems) => problems.filter((p) => p.severity === 'error');

/** A problem object as mt_eval.problems.Problem has it. */
export const makeProblem = (file, path, message, { hint = null, severity = 'error', code = 'invalid' } = {}) => ({
  file, path, message, hint, severity, code,
});

/** A file or plugin has errors; problems lists every one (and the warnings). */
export class ProblemsError extends Error {
  constructor(problems, summary) {
    const errors = errorsOf(problems);
    super([summary ?? `${errors.length} problem${errors.length !== 1 ? 's' : ''} found`, ...errors.map(renderProblem)].join('\n'));
    this.name = 'ProblemsError';
    this.problems = problems;
  }
}
