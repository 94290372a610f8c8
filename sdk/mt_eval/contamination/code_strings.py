"""The text inside source code: string literals and comments of Python and JavaScript/TypeScript.

Python is parsed with the standard library's `ast` (every string and bytes constant, docstrings and the
literal parts of f-strings included; adjacent literals arrive joined, as Python joins them) and `tokenize`
(comments). JavaScript and TypeScript are parsed with tree-sitter's grammars (strings, template literals
split at their ``${…}`` substitutions, JSX text, comments): a maintained parser with prebuilt wheels
that keeps going past syntax errors (the Python ports esprima and pyjsparser are unmaintained).

A file that does not parse returns `None` with the reason, and is read as plain text instead.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from typing import Any

Pieces = list[tuple[int, str]]

_ESCAPED_BREAKS = str.maketrans({"\n": "\t", "\r": "\t"})


def python_pieces(data: bytes) -> tuple[Pieces | None, str | None]:
    """``(line, text)`` of every string constant and comment of a Python source, in source order."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
        why = "nested too deeply to parse" if isinstance(exc, RecursionError | MemoryError) else \
            getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        return None, f"not valid Python{where} ({why})"
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            value = node.value if isinstance(node.value, str) else node.value.decode("utf-8", "replace")
            if node.end_lineno == node.lineno:
                value = value.translate(_ESCAPED_BREAKS)  # line ends written as escapes: keep lines right
            found.append((node.lineno, node.col_offset, value))
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.start[1], token.string.lstrip("#")))
    except (tokenize.TokenError, SyntaxError):
        pass  # ast accepted it; comments are a bonus
    found.sort(key=lambda item: (item[0], item[1]))
    return [(line, text) for line, _column, text in found], None


_JS_QUERY = "(string) @s (template_string) @t (comment) @c (jsx_text) @x"
_JS_GRAMMARS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}


@cache
def _js_parser(grammar: str) -> tuple[Any, Any]:
    import tree_sitter

    if grammar == "javascript":
        import tree_sitter_javascript

        language = tree_sitter.Language(tree_sitter_javascript.language())
    else:
        import tree_sitter_typescript

        language = tree_sitter.Language(tree_sitter_typescript.language_tsx() if grammar == "tsx"
                                        else tree_sitter_typescript.language_typescript())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _JS_QUERY)


def javascript_pieces(data: bytes, suffix: str = ".js") -> tuple[Pieces | None, str | None]:
    """``(line, text)`` of every string, template literal part, JSX text and comment of a JS/TS source."""
    import tree_sitter

    parser, query = _js_parser(_JS_GRAMMARS.get(suffix, "javascript"))
    tree = parser.parse(data)
    if tree.root_node.has_error:
        return None, f"JavaScript syntax error at line {_first_error_line(tree.root_node)}"
    found: list[tuple[int, int, str]] = []
    for name, nodes in tree_sitter.QueryCursor(query).captures(tree.root_node).items():
        for node in nodes:
            row, column = node.start_point
            if name == "c":
                found.append((row + 1, column, _comment_text(_text(node))))
            elif name == "x":
                found.append((row + 1, column, _text(node)))
            else:
                found.extend(_literal_parts(node))
    found.sort(key=lambda item: (item[0], item[1]))
    return [(line, text) for line, _column, text in found], None


def _literal_parts(node: Any) -> list[tuple[int, int, str]]:
    """A string's text, or a template literal's texts between its substitutions, escapes decoded."""
    parts: list[tuple[int, int, str]] = []
    text: list[str] = []
    start = node.start_point
    for child in node.children:
        if child.type == "string_fragment":
            text.append(_text(child))
        elif child.type == "escape_sequence":
            text.append(decode_js_escape(_text(child)).translate(_ESCAPED_BREAKS))
        elif child.type == "template_substitution":
            parts.append((start[0] + 1, start[1], "".join(text)))
            text, start = [], child.end_point
    parts.append((start[0] + 1, start[1], "".join(text)))
    return [part for part in parts if part[2].strip()]


_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_HEX_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\})")


def decode_js_escape(escape: str) -> str:
    """The character a JavaScript escape sequence stands for (``\\n``, ``\\xe9``, ``\\u00e9``, ``\\u{1F600}``)."""
    match = _HEX_ESCAPE.fullmatch(escape)
    if match:
        code = int(next(group for group in match.groups() if group), 16)
        return chr(code) if code <= 0x10FFFF else ""
    body = escape[1:]
    if body.startswith(("\r", "\n", "\u2028", "\u2029")):
        return ""  # a line continuation
    return _SIMPLE_ESCAPES.get(body, body)


def _text(node: Any) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _comment_text(text: str) -> str:
    if text.startswith("//"):
        return text[2:]
    return text.removeprefix("/*").removesuffix("*/")


def _first_error_line(node: Any) -> int:
    for child in node.children:
        if child.type == "ERROR" or child.is_missing:
            return int(child.start_point[0]) + 1
        if child.has_error:
            return _first_error_line(child)
    return int(node.start_point[0]) + 1
