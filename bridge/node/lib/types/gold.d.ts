/// <reference types="node" />
// The types of mt-eval-bridge's gold (lib/gold.js); index.d.ts exports them all.

/** Entry fields no method ever receives: "reference", "references" and their aliases ("target", "translation", ...). */
export const GOLD_FIELDS: readonly string[];

/** Copies of entries without the gold fields (GOLD_FIELDS and `extra`): what a method is handed. */
export function methodView<T extends Record<string, unknown>>(entries: readonly T[], extra?: readonly string[]): Record<string, unknown>[];
