"""The static scan of Python code, by its syntax tree (`ast`): imports, calls and the paths they name.

Names are followed through imports (``import subprocess as sp; sp.run`` is ``subprocess.run``), through
``builtins`` (``builtins.open`` is ``open``, as is ``__builtins__["open"]``) and ``getattr`` with a literal name
(``getattr(os, "system")`` is ``os.system``); a builtin or a module's member looked up by a name built at run time
(``getattr(os, "sys" + "tem")``, ``__builtins__[name]``) is dynamic code; and string constants assigned at
module level (``DATA = "/usr/share/x"; open(DATA)``); a path is known by its literal head however the rest is put
on (``"/etc/" + name``, ``"/proc/%s" % pid``, ``"/proc/{}".format(pid)``, ``b"/etc/passwd"``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from mt_eval.scan.findings import Kind, RawFinding
from mt_eval.scan.paths import outside_reason

NETWORK_MODULES = ("socket", "ssl", "http.client", "http.server", "urllib.request", "urllib3", "requests",
                   "httpx", "aiohttp", "websockets", "websocket", "ftplib", "smtplib", "poplib", "imaplib",
                   "nntplib", "telnetlib", "xmlrpc.client", "xmlrpc.server", "socketserver", "grpc", "pycurl",
                   "openai", "anthropic", "cohere", "mistralai", "google.generativeai", "google.cloud", "boto3",
                   "botocore", "azure", "deepl", "paramiko", "zmq", "tornado.httpclient", "asyncssh")
DOWNLOAD_MODULES = ("huggingface_hub", "wget", "gdown", "gensim.downloader", "torch.hub", "pooch",
                    "tensorflow_hub", "kagglehub")
SUBPROCESS_MODULES = ("subprocess", "pty", "sh", "pexpect", "plumbum", "mt_eval.adapters.ProcessTranslator",
                      "mt_eval.adapters.RecordProcess", "mt_eval.adapters.BatchProcess", "mt_eval.adapters.Stage",
                      "mt_eval.adapters.StageRunner", "mt_eval.adapters.record_process",
                      "mt_eval.adapters.batch_process", "mt_eval.adapters.stage", "mt_eval.adapters.translator")
DYNAMIC_MODULES = ("runpy", "ctypes", "cffi", "code", "codeop")
MODULE_KINDS: tuple[tuple[tuple[str, ...], Kind, str], ...] = (
    (NETWORK_MODULES, "network", "network access"),
    (DOWNLOAD_MODULES, "download", "downloads at run time"),
    (SUBPROCESS_MODULES, "subprocess", "starts programs"),
    (DYNAMIC_MODULES, "dynamic-code", "runs or loads code the scan cannot see"),
)

CALLS: dict[str, tuple[Kind, str]] = {
    "eval": ("dynamic-code", "evaluates code built at run time"),
    "exec": ("dynamic-code", "executes code built at run time"),
    "compile": ("dynamic-code", "compiles code built at run time"),
    "importlib.util.spec_from_file_location": ("dynamic-code", "imports a module from a file path"),
    "importlib.machinery.SourceFileLoader": ("dynamic-code", "imports a module from a file path"),
    "os.system": ("subprocess", "runs a shell command"),
    "os.popen": ("subprocess", "runs a shell command"),
    "os.fork": ("subprocess", "forks the process"),
    "os.forkpty": ("subprocess", "forks the process"),
    "asyncio.create_subprocess_exec": ("subprocess", "starts a program"),
    "asyncio.create_subprocess_shell": ("subprocess", "runs a shell command"),
    "asyncio.open_connection": ("network", "opens a network connection"),
    "asyncio.start_server": ("network", "listens on the network"),
    "urllib.request.urlretrieve": ("download", "downloads a file"),
    "nltk.download": ("download", "downloads NLTK data"),
    "spacy.cli.download": ("download", "downloads a spaCy model"),
    "datasets.load_dataset": ("download", "may download a dataset"),
    "pathlib.Path.home": ("file-access", "reads the user's home directory"),
    "os.path.expanduser": ("file-access", "reads the user's home directory"),
}
CALL_PREFIXES: dict[str, tuple[Kind, str]] = {
    "os.exec": ("subprocess", "replaces the process with a program"),
    "os.spawn": ("subprocess", "starts a program"),
    "os.posix_spawn": ("subprocess", "starts a program"),
}
BUILTIN_NAMESPACES = ("builtins", "__builtins__", "builtins.__dict__", "__builtins__.__dict__")
# the modules a getattr by a name built at run time is dynamic code on (reaching what the scan looks for unseen)
WATCHED_MODULES = (*BUILTIN_NAMESPACES, "os", "posix", "sys", "io", "shutil", "pathlib", "asyncio", "importlib",
                   *(module for modules, _, _ in MODULE_KINDS for module in modules
                     if not module.startswith("mt_eval")))
IMPORTERS = ("__import__", "importlib.import_module", "importlib.__import__")
FILE_CALLS = {"open", "io.open", "os.open", "pathlib.Path", "pathlib.PurePath", "os.listdir", "os.scandir",
              "os.walk", "os.stat", "os.lstat", "os.readlink", "os.access",
              "os.remove", "os.unlink", "os.rename", "os.replace", "os.makedirs",
              "os.mkdir", "os.rmdir", "os.chdir", "os.chmod", "os.symlink", "os.link", "os.truncate",
              "os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize", "shutil.copy",
              "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move", "shutil.rmtree", "glob.glob",
              "glob.iglob", "sqlite3.connect", "numpy.load", "numpy.save", "json.load"}


def scan_python(text: str, file: str) -> list[RawFinding]:
    """Findings in one Python file (``file`` is its path relative to the plugin). Raises SyntaxError."""
    tree = ast.parse(text, filename=file)
    return list(_Scanner(file, tree).run())


class _Scanner:
    def __init__(self, file: str, tree: ast.Module) -> None:
        self.file = file
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, str] = {}

    def run(self) -> Iterator[RawFinding]:
        for statement in self.tree.body:  # module-level string constants, for paths named through them
            targets = statement.targets if isinstance(statement, ast.Assign) else \
                [statement.target] if isinstance(statement, ast.AnnAssign) else []  # (PATH: str = "/etc/passwd")
            value = getattr(statement, "value", None)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.constants[target.id] = value.value
        nodes = list(ast.walk(self.tree))
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield from self.on_import(node)
        for node in nodes:
            if isinstance(node, ast.Call):
                yield from self.on_call(node)
            elif isinstance(node, ast.Subscript) and self._dotted(node.value) in BUILTIN_NAMESPACES and \
                    self.whole_string(node.slice) is None:
                yield self.finding(node, "dynamic-code", "looks up a builtin by a name built at run time")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                yield from self.on_path_join(node, [node.right])

    def on_path_join(self, node: ast.expr, parts: list[ast.expr]) -> Iterator[RawFinding]:
        """``base / ".." / x`` and ``os.path.join(base, "..")``: a literal part that climbs out."""
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str) and \
                    ".." in part.value.replace("\\", "/").split("/"):
                yield self.finding(node, "file-access", f"joins {part.value!r} onto a path (climbs out of the "
                                   "directory it is relative to)", part.value)
                return

    def finding(self, node: ast.AST, kind: Kind, what: str, subject: str = "") -> RawFinding:
        return RawFinding(file=self.file, line=getattr(node, "lineno", 0), kind=kind, what=what, subject=subject)

    def on_import(self, node: ast.Import | ast.ImportFrom) -> Iterator[RawFinding]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.aliases[alias.asname or alias.name.partition(".")[0]] = \
                    alias.name if alias.asname else alias.name.partition(".")[0]
                yield from self.module_findings(node, alias.name, f"imports {alias.name}")
            return
        if node.level or not node.module:
            return  # a relative import: the plugin's own code, scanned as its own file
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            found = list(self.module_findings(node, full, f"imports {alias.name} from {node.module}"))
            yield from found or self.module_findings(node, node.module, f"imports {alias.name} from {node.module}")

    def module_findings(self, node: ast.AST, module: str, what: str) -> Iterator[RawFinding]:
        for modules, kind, meaning in MODULE_KINDS:
            if any(module == m or module.startswith(m + ".") for m in modules):
                yield self.finding(node, kind, f"{what} ({meaning})", module)
                return

    def dotted(self, node: ast.expr) -> str | None:
        """The dotted name a call target stands for, through the module's imports, ``builtins`` and ``getattr``
        with a literal name."""
        name = self._dotted(node)
        for prefix in ("builtins.", "__builtins__."):
            name = name.removeprefix(prefix) if name else name
        return name

    def _dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and self.dotted(node.func) == "getattr" and len(node.args) >= 2 and \
                (member := self.whole_string(node.args[1])) is not None:
            base = self._dotted(node.args[0])
            return f"{base}.{member}" if base else None
        if isinstance(node, ast.Subscript) and self._dotted(node.value) in BUILTIN_NAMESPACES and \
                (key := self.whole_string(node.slice)) is not None:
            return f"builtins.{key}"  # (__builtins__["__import__"])
        return None

    def on_call(self, node: ast.Call) -> Iterator[RawFinding]:
        name = self.dotted(node.func)
        if name is None:
            return
        short = name.rpartition(".")[2]
        if name == "getattr" and len(node.args) >= 2 and self.whole_string(node.args[1]) is None and \
                isinstance(node.args[0], ast.Name | ast.Attribute) and self.names_a_watched_module(node.args[0]):
            yield self.finding(node, "dynamic-code", f"getattr({ast.unparse(node.args[0])}, …) of a name built at "
                               "run time")
            return
        if name in IMPORTERS:  # (the whole name: ``"so" + "cket"`` starts with "so" but names no module)
            literal = self.whole_string(node.args[0]) if node.args else None
            if literal is None:
                yield self.finding(node, "dynamic-code", f"{name}() of a module named at run time")
            else:
                yield from self.module_findings(node, literal, f"{name}({literal!r})")
            return
        if name in CALLS:
            kind, meaning = CALLS[name]
            yield self.finding(node, kind, f"calls {name}() ({meaning})", name)
            return
        for prefix, (kind, meaning) in CALL_PREFIXES.items():
            if name.startswith(prefix):
                yield self.finding(node, kind, f"calls {name}() ({meaning})", name)
                return
        if short == "from_pretrained" and isinstance(node.func, ast.Attribute):
            model = self.literal(node.args[0]) if node.args else None
            if model is not None and outside_reason(model) is not None:
                yield self.finding(node, "file-access", f"{name}({model!r}): {outside_reason(model)}", model)
            elif model is None or not model.startswith("."):
                shown = f"{model!r}" if model is not None else ""
                yield self.finding(node, "download", f"calls {name}({shown}) (may download model files)",
                                   model or name)
            return
        if name in ("os.path.join", "pathlib.Path", "pathlib.PurePath"):
            yield from self.on_path_join(node, node.args[1:])
        if name in FILE_CALLS or (short in {"Path", "PurePath"} and name.endswith("Path")):
            for argument in node.args[:2]:
                path = self.literal(argument)
                reason = outside_reason(path) if path is not None else None
                if reason is not None:
                    yield self.finding(node, "file-access", f"{name}({path!r}): {reason}", path or "")
                    return

    def names_a_watched_module(self, node: ast.expr) -> bool:
        """Whether the expression is builtins, or a module this file imported (or a member of one) whose members can
        reach the network, start programs, run code or open files (`WATCHED_MODULES`: not ``numpy``, whose
        ``getattr(np, dtype)`` is ordinary code)."""
        name = self._dotted(node) or ""
        return any(name == module or name.startswith(f"{module}.") for module in WATCHED_MODULES)

    def whole_string(self, node: ast.expr) -> str | None:
        """The whole string the expression is: a constant or a module-level string constant."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return self.constants.get(node.id) if isinstance(node, ast.Name) else None

    def literal(self, node: ast.expr) -> str | None:
        """A string the expression certainly starts with: a constant (bytes too), a module constant, an
        f-string's head, the first part of os.path.join(...), or the head of ``+``, ``%`` and ``.format()``."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            return node.value if isinstance(node.value, str) else node.value.decode("utf-8", "replace")
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            return str(node.values[0].value)
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("os.path.join", "pathlib.Path") and node.args:
            return self.literal(node.args[0])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add | ast.Mod):
            return self.literal(node.left)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            return self.literal(node.func.value)
        return None
