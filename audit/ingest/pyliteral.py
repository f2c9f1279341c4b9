"""A dict or list written as a Python literal, as pandas writes an object column to CSV, read as its JSON value.

pandas' `to_csv()` writes a cell holding a dict or a list with Python's repr: single quotes, `True`, `None`
(RAGTruth's merged frame: `{'question': 'x', 'passages': 'passage 1:...'}`; Ragas: `['a', "b's"]`). Only literals
are read: strings, numbers, True/False/None, and lists, tuples and dicts of them with string keys; `nan` (a
missing float inside a dict) is null, as pandas' to_json writes it. Anything else (a call such as numpy's
`np.float64(0.5)`, a name, an expression, bytes, a set, a key that is not a string) raises ValueError saying what.

A numpy array of strings (a Hugging Face dataset turned into a frame keeps its list columns as arrays) is written
without commas, `['a' 'b']`, which Python reads as one joined string ['ab']: a list whose items are only strings
with nothing between them is read as those strings, one item each.
"""

import ast
import io
import math
import tokenize

MAX_CHARS = 4 << 20  # a cell is bounded by the line limit already; this bounds the parser whatever calls it
MAX_DEPTH = 50


def read(text):
    """The dict or list a Python literal writes, else ValueError."""
    text = text.strip()
    if len(text) > MAX_CHARS:
        raise ValueError(f"over {MAX_CHARS:,} characters: not read as a Python literal")
    if not text.startswith(("[", "{", "(")):
        raise ValueError("not a Python list or dict")
    items = _numpy_strings(text)
    if items is not None:
        return items
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise ValueError(f"not a Python literal ({getattr(e, 'msg', e)})") from None
    return _value(tree.body, 0)


def _value(node, depth):
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bool, int, float))):
        return _number(node.value)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(x, depth + 1) for x in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise ValueError("a dict key that is not a string")
            out[k.value] = _value(v, depth + 1)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = node.operand
        if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
            return _number(-inner.value if isinstance(node.op, ast.USub) else inner.value)
    if isinstance(node, ast.Name) and node.id == "nan":
        return None
    raise ValueError(f"{ast.unparse(node)[:40]!r} is not a literal")


def _number(value):
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    return value


def _numpy_strings(text):
    """The items of `['a' 'b' ...]` (numpy's text for an array of strings: no commas), else None."""
    if not text.startswith("["):
        return None
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    inner = tokens[1:-1]
    if len(inner) < 2 or tokens[-1].string != "]" or any(t.type != tokenize.STRING for t in inner):
        return None
    try:
        items = [ast.literal_eval(t.string) for t in inner]
    except (ValueError, SyntaxError):
        return None
    return items if all(isinstance(x, str) for x in items) else None
