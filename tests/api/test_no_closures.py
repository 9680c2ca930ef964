"""No closures in ``api/`` (docs/decisions.md D-rooms): a route handler parses, calls one
service function in a worker thread and renders; state lives in small classes or is passed
to module functions explicitly, never captured by a function defined inside another.

Counted with ``ast``: a ``def`` or ``async def`` inside a ``def`` or ``async def``, at any
depth (a method of a class defined inside a function counts too). Lambdas are counted
apart and not limited here (a one-line key or default)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

API = Path(__file__).resolve().parents[2] / "api"

LIMIT = 0
"""Nested functions allowed in ``api/``."""

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def nested(tree: ast.AST, inside: bool = False) -> tuple[int, int]:
    """(functions defined inside functions, lambdas) in ``tree``."""
    functions = lambdas = 0
    for child in ast.iter_child_nodes(tree):
        is_function = isinstance(child, _FUNCTIONS)
        functions += is_function and inside
        lambdas += isinstance(child, ast.Lambda)
        more, more_lambdas = nested(child, inside or is_function)
        functions, lambdas = functions + more, lambdas + more_lambdas
    return functions, lambdas


def counts() -> tuple[Counter[str], Counter[str]]:
    """Per module of ``api/`` (its path below ``api/``): nested functions, lambdas."""
    functions: Counter[str] = Counter()
    lambdas: Counter[str] = Counter()
    for path in sorted(API.rglob("*.py")):
        name = path.relative_to(API).as_posix()
        functions[name], lambdas[name] = nested(ast.parse(path.read_text(), str(path)))
    return +functions, +lambdas


def test_the_counter_counts_what_it_says() -> None:
    source = """
def plain(): return [x for x in ()]
class C:
    def method(self):
        def inner(): pass
        key = lambda x: x
        class Local:
            def also(self): pass
        return inner, key, Local
async def outer():
    async def one():
        def two(): pass
"""
    assert nested(ast.parse(source)) == (4, 1)


def test_api_defines_no_function_inside_another() -> None:
    functions, lambdas = counts()
    assert sum(functions.values()) <= LIMIT, (
        f"{sum(functions.values())} functions nested in functions in api/ (limit {LIMIT}): "
        f"{dict(functions)}; lambdas apart: {dict(lambdas)}"
    )
