"""The evaluation harness behind ``mt-eval run`` and ``mt-eval compare``.

- `corpus`: the corpus side of a run (reading is `mt_eval.corpus`): doubts, selection, card ids, predictions;
- `execution`: running a method over entries with bounded concurrency, timeouts, retries and a results log;
- `scoring`: sacrebleu metrics with signatures and bootstrap confidence intervals from segment statistics;
- `runcard`: the run card and the facts it records (hashes, environment, latency);
- `progress`: a rich progress bar on a terminal, plain lines elsewhere;
- `commands`: the arguments of `mt-eval run` and `mt-eval compare`; `session`, `compare`: their work.
"""
