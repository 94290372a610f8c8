// What a method may see of a corpus entry: everything but the gold (reference, references, and
// the fields a corpus lists in dataset.gold_fields). The Python twin is sdk/mt_eval/gold.py;
// bridge/vectors/gold-fields.json keeps the two equal.

// (the reference's aliases too: beside a "reference" a corpus reader leaves them as they are)
export const GOLD_FIELDS = Object.freeze(['reference', 'references', 'target', 'translation', 'ref', 'tgt', 'target_text']);

/** Copies of entries without their gold fields (the defaults plus `extra`): what a method is handed. */
export function methodView(entries, extra = []) {
  const hidden = new Set([...GOLD_FIELDS, ...extra]);
  return entries.map((entry) => {
    const view = {};
    for (const key of Object.keys(entry)) if (!hidden.has(key)) view[key] = entry[key];
    return view;
  });
}
