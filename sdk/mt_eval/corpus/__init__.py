"""Corpora as the field ships them, read exactly and never misread in silence.

- `files`: a file's format from its name, its bytes, sha256, gzip, UTF-8, BOM and CRLF, LF-only lines;
- `tsv`: TSV by the MT convention (source<TAB>reference), headers, comments, ``--columns``;
- `jsonfile`: upstream JSON, JSON lists and JSONL, with field aliases;
- `parallel`: two aligned plain-text files (``--source-file``/``--reference-file``);
- `checks`: ids, sources, and references all-or-none, for every format;
- `doubts`, `scripts`: shapes that suggest a misread, refused or warned about; `first_line`: those a .tsv
  file's first line shows (JSON, CSV, a header read as an entry); `names`: field names one slip from known ones;
- `selection`: ``--ids``, ``--segment``, ``--limit`` and the subset's sha256;
- `reader`: `read_corpus`, the one reader every command uses; `arguments`: the shared command-line flags;
- `show`: ``mt-eval corpus show``, how a file is read.

Names are imported lazily, so that the command-line flags can be defined without loading the readers.
"""

from __future__ import annotations

from mt_eval.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mt_eval.corpus.model import Corpus, CorpusError, entry_key
    from mt_eval.corpus.reader import CorpusSpec, load_corpus, read_corpus
    from mt_eval.corpus.selection import Selection, SelectionRequest, select

_EXPORTS = {
    "Corpus": "mt_eval.corpus.model",
    "CorpusError": "mt_eval.corpus.model",
    "entry_key": "mt_eval.corpus.model",
    "CorpusSpec": "mt_eval.corpus.reader",
    "load_corpus": "mt_eval.corpus.reader",
    "read_corpus": "mt_eval.corpus.reader",
    "Selection": "mt_eval.corpus.selection",
    "SelectionRequest": "mt_eval.corpus.selection",
    "select": "mt_eval.corpus.selection",
}
__all__ = ["Corpus", "CorpusError", "CorpusSpec", "Selection", "SelectionRequest", "entry_key", "load_corpus",
           "read_corpus", "select"]


__getattr__ = lazy_exports("mt_eval.corpus", globals(), _EXPORTS)
