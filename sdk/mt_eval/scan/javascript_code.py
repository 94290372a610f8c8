"""The static scan of JavaScript, by a real parser: tree-sitter with its JavaScript grammar (Python
wheels, so the scan runs wherever ``mt-eval validate`` runs and the Node kit keeps no dependency).

What is looked at: ``import``/``export … from``/``require()``/``import()`` of modules that reach the network,
start programs or run code; ``fetch``, ``WebSocket``, ``XMLHttpRequest``, ``EventSource``; ``eval`` and
``Function``; ``require``/``import()`` of a name computed at run time; ``process.binding`` and
``process.dlopen`` (Node's internals and native code); and file-system calls naming a path outside the plugin
(``fs.readFileSync("/etc/passwd")``, or by its literal head: ``"/etc/" + name``, `` `/proc/${pid}/environ` ``),
through the names modules were bound to — a function ``module.createRequire`` made is ``require``, and
``globalThis["fetch"]`` is ``fetch``; a global looked up by a name built at run time (``globalThis["fe" + "tch"]``)
is dynamic code.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from mt_eval.scan.findings import Kind, RawFinding
from mt_eval.scan.paths import outside_reason

NETWORK_MODULES = ("http", "https", "http2", "net", "dgram", "tls", "dns", "undici", "axios", "node-fetch",
                   "got", "ws", "superagent", "request", "openai", "@anthropic-ai/sdk", "socket.io-client",
                   "ky", "needle", "cross-fetch", "isomorphic-fetch")
SUBPROCESS_MODULES = ("child_process", "execa", "cross-spawn", "shelljs", "zx")
DYNAMIC_MODULES = ("vm", "node:vm")
MODULE_KINDS: tuple[tuple[tuple[str, ...], Kind, str], ...] = (
    (NETWORK_MODULES, "network", "network access"),
    (SUBPROCESS_MODULES, "subprocess", "starts programs"),
    (DYNAMIC_MODULES, "dynamic-code", "runs code the scan cannot see"),
)
NETWORK_GLOBALS = {"fetch": "calls fetch()", "WebSocket": "opens a WebSocket", "XMLHttpRequest": "makes an "
                   "XMLHttpRequest", "EventSource": "opens an EventSource"}
GLOBAL_OBJECTS = {"globalThis", "global", "window", "self"}
FS_MODULES = {"fs", "fs/promises"}
FS_FUNCTIONS = {"readFile", "readFileSync", "writeFile", "writeFileSync", "appendFile", "appendFileSync", "open",
                "openSync", "readdir", "readdirSync", "opendir", "opendirSync", "createReadStream",
                "createWriteStream", "rm", "rmSync", "rmdir", "rmdirSync", "unlink", "unlinkSync", "mkdir",
                "mkdirSync", "copyFile", "copyFileSync", "cp", "cpSync", "rename", "renameSync", "stat", "statSync",
                "lstat", "lstatSync", "access", "accessSync", "existsSync", "watch", "symlink", "symlinkSync"}
NATIVE_CALLS = {"process.binding": "reaches Node's internal bindings", "process._linkedBinding": "reaches Node's "
                "internal bindings", "process.dlopen": "loads native code"}
LOCAL_PATH_CALLS = {"path.join", "path.resolve", "join", "resolve"}  # (__dirname, "literal") stays in the plugin
UNPARSEABLE = "JavaScript the scan cannot parse"


@cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_javascript

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))


class JavaScriptSyntaxError(ValueError):
    """The parser could not read the file; ``line`` is where its first error is."""

    def __init__(self, line: int) -> None:
        super().__init__(f"{UNPARSEABLE}, near line {line}")
        self.line = line


def scan_javascript(text: str, file: str) -> list[RawFinding]:
    """Findings in one JavaScript file (``file`` is its path relative to the plugin)."""
    source = text.encode("utf-8")
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        raise JavaScriptSyntaxError(_first_error(tree.root_node))
    return list(_Scanner(file, source).run(tree.root_node))


def _first_error(node: Any) -> int:
    for child in _walk(node):
        if child.type == "ERROR" or child.is_missing:
            return int(child.start_point[0]) + 1
    return 1


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _module_name(specifier: str) -> str:
    return specifier.removeprefix("node:")


class _Scanner:
    def __init__(self, file: str, source: bytes) -> None:
        self.file = file
        self.source = source
        self.bindings: dict[str, str] = {}  # local name → module (or module.member)

    def text(self, node: Any) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def finding(self, node: Any, kind: Kind, what: str, subject: str = "") -> RawFinding:
        return RawFinding(file=self.file, line=int(node.start_point[0]) + 1, kind=kind, what=what, subject=subject)

    def run(self, root: Any) -> Iterator[RawFinding]:
        nodes = list(_walk(root))
        for node in nodes:
            if node.type in ("import_statement", "export_statement") and node.child_by_field_name("source"):
                yield from self.on_import(node)
            elif node.type == "variable_declarator":
                self.bind_require(node)
        for node in nodes:
            if node.type == "call_expression":
                yield from self.on_call(node)
            elif node.type == "new_expression":
                yield from self.on_new(node)
            elif node.type == "subscript_expression":
                yield from self.on_subscript(node)

    def on_subscript(self, node: Any) -> Iterator[RawFinding]:
        """``globalThis[name]``: a global the scan cannot name (not ``self[name]``, which is often ``this``)."""
        obj, index = node.child_by_field_name("object"), node.child_by_field_name("index")
        if obj is not None and self.text(obj) in ("globalThis", "global") and self.string(index) is None:
            yield self.finding(node, "dynamic-code", f"looks up {self.text(obj)}[…] by a name built at run time")

    def string(self, node: Any | None) -> str | None:
        """The value of a string literal, or of a template literal without substitutions."""
        if node is None:
            return None
        if node.type == "string":
            return "".join(self.text(c) for c in node.children if c.type in ("string_fragment", "escape_sequence"))
        if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children):
            return self.text(node)[1:-1]
        return None

    def head(self, node: Any | None) -> str | None:
        """A string the expression certainly starts with: a literal, a template literal's text before its first
        substitution, or the left of ``+``."""
        if node is not None and node.type == "template_string":
            head = []
            for child in node.children[1:]:
                if child.type not in ("string_fragment", "escape_sequence"):
                    break
                head.append(self.text(child))
            return "".join(head)
        if node is not None and node.type == "binary_expression" and \
                self.text(node.child_by_field_name("operator")) == "+":
            return self.head(node.child_by_field_name("left"))
        return self.string(node)

    def module_findings(self, node: Any, specifier: str, what: str) -> Iterator[RawFinding]:
        module = _module_name(specifier)
        for modules, kind, meaning in MODULE_KINDS:
            if module in modules or any(module.startswith(m + "/") for m in modules):
                yield self.finding(node, kind, f"{what} ({meaning})", module)
                return

    def on_import(self, node: Any) -> Iterator[RawFinding]:
        specifier = self.string(node.child_by_field_name("source"))
        if specifier is None:
            return
        module = _module_name(specifier)
        for child in _walk(node):
            if child.type == "import_specifier":
                name = child.child_by_field_name("name")
                alias = child.child_by_field_name("alias") or name
                if name is not None and alias is not None:
                    self.bindings[self.text(alias)] = f"{module}.{self.text(name)}"
            elif child.type in ("namespace_import", "import_clause"):
                for part in child.children:
                    if part.type == "identifier":
                        self.bindings[self.text(part)] = module
        yield from self.module_findings(node, specifier, f"imports {specifier!r}")

    def bind_require(self, node: Any) -> None:
        value = node.child_by_field_name("value")
        if value is None or value.type != "call_expression":
            return
        target = node.child_by_field_name("name")
        if self.callee(value) == "module.createRequire" and target is not None and target.type == "identifier":
            self.bindings[self.text(target)] = "require"  # (const require = createRequire(import.meta.url))
            return
        if self.callee(value) != "require":
            return
        specifier = self.string(self.first_argument(value))
        if specifier is None or target is None:
            return
        module = _module_name(specifier)
        if target.type == "identifier":
            self.bindings[self.text(target)] = module
        elif target.type == "object_pattern":
            for part in _walk(target):
                if part.type == "shorthand_property_identifier_pattern":
                    self.bindings[self.text(part)] = f"{module}.{self.text(part)}"
                elif part.type == "pair_pattern":
                    key, value_node = part.child_by_field_name("key"), part.child_by_field_name("value")
                    if key is not None and value_node is not None and value_node.type == "identifier":
                        self.bindings[self.text(value_node)] = f"{module}.{self.text(key)}"

    def callee(self, node: Any) -> str | None:
        """The dotted name called (``fs.readFileSync``, ``fetch``, ``import``), through module bindings."""
        function = node.child_by_field_name("function")
        if function is None:
            return None
        if function.type == "import":
            return "import"
        if function.type == "call_expression" and self.callee(function) == "module.createRequire":
            return "require"  # createRequire(import.meta.url)("net")
        return self.dotted(function)

    def dotted(self, node: Any) -> str | None:
        if node.type == "identifier":
            name = self.text(node)
            return self.bindings.get(name, name)
        if node.type == "member_expression":
            obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
            base = self.dotted(obj) if obj is not None else None
            if base is not None and prop is not None:
                return f"{base}.{self.text(prop)}"
        if node.type == "subscript_expression":  # globalThis["fetch"]
            obj, index = node.child_by_field_name("object"), node.child_by_field_name("index")
            base = self.dotted(obj) if obj is not None else None
            key = self.string(index)
            if base is not None and key is not None:
                return f"{base}.{key}"
        return None

    @staticmethod
    def first_argument(node: Any) -> Any | None:
        arguments = node.child_by_field_name("arguments")
        named = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
        return named[0] if named else None

    def on_call(self, node: Any) -> Iterator[RawFinding]:
        name = self.callee(node)
        if name is None:
            return
        name = name.partition(".")[2] if name.partition(".")[0] in GLOBAL_OBJECTS else name
        if name in ("require", "import"):
            argument = self.first_argument(node)
            specifier = self.string(argument)
            if specifier is not None:
                if name == "import":
                    yield from self.module_findings(node, specifier, f"import({specifier!r})")
                else:
                    yield from self.module_findings(node, specifier, f"requires {specifier!r}")
            elif not self.stays_local(argument):
                yield self.finding(node, "dynamic-code", f"{name}() of a module named at run time")
        elif name in ("eval", "Function"):
            yield self.finding(node, "dynamic-code", f"calls {name}() (runs code built at run time)", name)
        elif name in NETWORK_GLOBALS:
            url = self.string(self.first_argument(node))
            yield self.finding(node, "network", NETWORK_GLOBALS[name] + (f" ({url})" if url else ""), url or name)
        elif name in NATIVE_CALLS:
            yield self.finding(node, "dynamic-code", f"calls {name}() ({NATIVE_CALLS[name]}, which the scan cannot "
                               "see)", name)
        elif name in ("os.homedir", "os.userInfo"):
            yield self.finding(node, "file-access", f"calls {name}() (the user's home directory)", name)
        else:
            module, _, function = name.rpartition(".")
            if function in FS_FUNCTIONS and (_module_name(module) in FS_MODULES or module.startswith("fs")):
                path = self.head(self.first_argument(node))
                reason = outside_reason(path)
                if reason is not None:
                    yield self.finding(node, "file-access", f"{name}({path!r}): {reason}", path or "")

    def stays_local(self, argument: Any | None) -> bool:
        """``path.join(__dirname, "lit", …)`` or ``new URL("lit", import.meta.url)``: a file of the plugin."""
        if argument is None:
            return False
        if argument.type == "call_expression" and self.callee(argument) in LOCAL_PATH_CALLS:
            parts = [c for c in argument.child_by_field_name("arguments").named_children]
            return bool(parts) and self.text(parts[0]) in ("__dirname", "import.meta.dirname") and all(
                (value := self.string(p)) is not None and outside_reason(value) is None for p in parts[1:])
        if argument.type == "new_expression" and self.text(argument.child_by_field_name("constructor")) == "URL":
            parts = [c for c in argument.child_by_field_name("arguments").named_children]
            return len(parts) == 2 and self.text(parts[1]) == "import.meta.url" and \
                (value := self.string(parts[0])) is not None and outside_reason(value) is None
        return False

    def on_new(self, node: Any) -> Iterator[RawFinding]:
        constructor = node.child_by_field_name("constructor")
        name = self.dotted(constructor) if constructor is not None else None
        if name is None:
            return
        name = name.partition(".")[2] if name.partition(".")[0] in GLOBAL_OBJECTS else name
        if name in NETWORK_GLOBALS:
            url = self.string(self.first_argument(node))
            yield self.finding(node, "network", NETWORK_GLOBALS[name] + (f" ({url})" if url else ""), url or name)
        elif name == "Function":
            yield self.finding(node, "dynamic-code", "new Function() (runs code built at run time)", name)
