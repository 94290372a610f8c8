"""The evaluation harness behind ``mt-eval run`` and ``mt-eval compare``.

- `corpus`: reading corpora (upstream JSON, flat JSON list, JSONL, TSV) with clear errors;
- `execution`: running a method over entries with bounded concurrency, timeouts, retries and a results log;
- `scoring`: sacrebleu metrics with signatures and bootstrap confidence intervals from segment statistics;
- `runcard`: the run card and the facts it records (hashes, environment, latency);
- `progress`: a rich progress bar on a terminal, plain lines elsewhere;
- `commands`: the arguments of `mt-eval run` and `mt-eval compare`; `session`, `compare`: their work.
"""
