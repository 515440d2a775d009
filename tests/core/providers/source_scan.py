"""What the registry tests' source scans share: which string constants of a module are
docstrings (prose may name a provider or a host; code may not)."""

from __future__ import annotations

import ast


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants in ``tree`` (modules, classes, functions, and the
    attribute docstrings under assignments)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))  # attribute docstrings
    return out
