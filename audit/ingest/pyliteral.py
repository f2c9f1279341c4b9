"""A dict or list written as a Python literal, as pandas writes an object column to CSV, read as its JSON value.

pandas' `to_csv()` writes a cell holding a dict or a list with Python's repr: single quotes, `True`, `None`
(RAGTruth's merged frame: `{'question': 'x', 'passages': 'passage 1:...'}`; Ragas: `['a', "b's"]`). Only literals
are read: strings, numbers, True/False/None, and lists, tuples and dicts of them with string keys; `nan` (a
missing float inside a dict) is null, as pandas' to_json writes it. Anything else (a call such as numpy's
`np.float64(0.5)`, a name, an expression, bytes, a set, a key that is not a string) raises ValueError saying what;
a text holding anything but a literal's tokens is refused before Python's parser sees it.

A numpy array of strings (a Hugging Face dataset turned into a frame keeps its list columns as arrays) is written
without commas, `['a' 'b']`, which Python reads as one joined string ['ab']: a list whose items are only strings
with nothing between them is read as those strings, one item each.
"""

import ast
import math
import re

# A cell longer than this is not read as a literal (parsing takes about 90 bytes of memory per character).
MAX_CHARS = 2 << 20
MAX_DEPTH = 50
# The tokens a literal is made of, as repr writes them; a text with any other is refused before it is parsed
# (Python's parser takes memory and time out of proportion on long expressions such as "1+1+...").
_TOKEN = re.compile(
    r"""(?P<space>\s+)"""
    r"""|(?P<string>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<number>[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?)"""
    r"""|(?P<name>True|False|None|nan)\b"""
    r"""|(?P<mark>[\[\]{}(),:])""",
    re.S,
)
_OPENS = {None, "[", "(", "{", ",", ":"}  # what a signed number may follow: it is a value, not a sum


def read(text):
    """The dict or list a Python literal writes, else ValueError."""
    text = text.strip()
    if len(text) > MAX_CHARS:
        raise ValueError(f"over {MAX_CHARS:,} characters: not read as a Python literal (write the column as JSON)")
    if not text.startswith(("[", "{", "(")):
        raise ValueError("not a Python list or dict")
    tokens = _tokens(text)
    strings = tokens[1:-1]
    if (
        len(strings) > 1
        and tokens[0] == ("mark", "[")
        and tokens[-1] == ("mark", "]")
        and all(kind == "string" for kind, _ in strings)
    ):
        return [ast.literal_eval(t) for _, t in strings]  # numpy's text: the items without commas
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise ValueError(f"not a Python literal ({getattr(e, 'msg', e)})") from None
    return _value(tree.body, 0)


def _tokens(text):
    """(kind, text) of each token but spaces; ValueError at the first character no literal has there."""
    out, pos, last = [], 0, None
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or (m.lastgroup == "number" and text[pos] in "+-" and last not in _OPENS):
            raise ValueError(f"{text[pos : pos + 20]!r} is not a literal")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
            last = m.group() if m.lastgroup == "mark" else m.lastgroup
        pos = m.end()
    return out


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
