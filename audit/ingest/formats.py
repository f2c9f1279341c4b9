"""The shapes teams already have, turned into the native record before validation (parse.normalise).

Formats: `native` (id, question, answer, passages, ...), `ragas` evaluation samples (user_input, response,
retrieved_contexts, optional reference), `deepeval` test cases (input, actual_output, retrieval_context),
`langchain` chain outputs (input/question/query, answer/result/output, context/source_documents of
documents), and `mapping` (any shape, through `target=source` pairs such as `question=prompt` or
`passage.text=content`; a source may be a dotted path into nested objects). `auto` detects the format of
each record from its fields. In every format a passage may be a plain string or a LangChain-style document
(page_content, metadata with id/source/title/url/...); fields with no native home end up in `meta`.

A record or passage without an id gets a stable one derived from its content, so importing the same file
twice is a no-op. Errors name the field as the file spells it (`user_input`, not `question`).
"""

import hashlib
import json

FORMATS = ("auto", "native", "ragas", "deepeval", "langchain", "mapping")
NATIVE_KEYS = ("id", "question", "answer", "created_at", "meta", "claims", "passages")
PASSAGE_TARGETS = ("passage.id", "passage.text", "passage.source")
TARGETS = (*NATIVE_KEYS, *PASSAGE_TARGETS)

# Each named shape: native field -> the field its tool writes (the first present of several).
SHAPES = {
    "ragas": {"question": ("user_input",), "answer": ("response",), "passages": ("retrieved_contexts",)},
    "deepeval": {"question": ("input",), "answer": ("actual_output",), "passages": ("retrieval_context",)},
    "langchain": {
        "question": ("input", "question", "query"),
        "answer": ("answer", "result", "output"),
        "passages": ("context", "source_documents", "documents"),
    },
}
# Fields that hold JSON in a CSV cell, per shape (a cell may also hold a Python list as pandas writes it).
CSV_JSON = {
    "native": ("passages", "claims", "meta"),
    "ragas": ("retrieved_contexts", "reference_contexts"),
    "deepeval": ("retrieval_context", "context"),
}


class MappingError(ValueError):
    pass


def parse_mapping(pairs):
    """["question=prompt", ...] -> {"question": "prompt", ...}; MappingError naming the bad pair."""
    out = {}
    for pair in pairs or ():
        target, sep, source = (pair or "").partition("=")
        target, source = target.strip(), source.strip()
        if not sep or not target or not source:
            raise MappingError(f"{pair!r} is not target=source (e.g. question=prompt)")
        if target not in TARGETS:
            raise MappingError(f"{target!r} is not a target (allowed: {', '.join(TARGETS)})")
        out[target] = source
    return out


def check_format(fmt, mapping):
    """The format to use: `mapping` whenever a mapping is given. MappingError when they do not fit."""
    fmt = fmt or "auto"
    if fmt not in FORMATS:
        raise MappingError(f"unknown format {fmt!r} (allowed: {', '.join(FORMATS)})")
    if mapping and fmt not in ("auto", "mapping"):
        raise MappingError(f"a field mapping goes with the mapping format, not {fmt!r}")
    if fmt == "mapping" and not mapping:
        raise MappingError("the mapping format needs at least one target=source pair")
    return "mapping" if mapping else fmt


def detect(keys):
    """The shape whose fields a record (or a CSV header) has."""
    keys = set(keys)
    if {"user_input", "response"} <= keys:
        return "ragas"
    if {"input", "actual_output"} <= keys:
        return "deepeval"
    if "passages" not in keys and any(k in keys for k in SHAPES["langchain"]["passages"]):
        return "langchain"
    return "native"


def sources(fmt, mapping, keys):
    """native field -> the field of this record (or CSV header) that holds it."""
    if fmt == "mapping":
        return {k: v for k, v in mapping.items() if k in NATIVE_KEYS}
    if fmt == "native":
        return {}
    return {native: next((c for c in cands if c in keys), cands[0]) for native, cands in SHAPES[fmt].items()}


def csv_columns(fmt, mapping, header):
    """(format, required columns, JSON columns) for a CSV file with this header."""
    if fmt == "auto":
        fmt = detect(header)
    if fmt == "native":
        return fmt, ("id", "question", "answer", "passages"), CSV_JSON["native"]
    src = sources(fmt, mapping, header)
    required = tuple(src[k].split(".")[0] for k in ("question", "answer", "passages") if k in src)
    json_cols = CSV_JSON.get(fmt, ()) + tuple(src[k].split(".")[0] for k in ("passages", "claims", "meta") if k in src)
    return fmt, required, json_cols


def to_native(obj, fmt, mapping):
    """(native object, renames) where renames maps a native field back to the file's own name."""
    if not isinstance(obj, dict):
        return obj, {}
    if fmt == "auto":
        fmt = detect(obj)
    src = sources(fmt, mapping, obj)
    out = {} if src else dict(obj)
    if src:
        used = {path for path in src.values() if "." not in path}
        meta = {}
        for key, value in obj.items():
            if key in used:
                continue
            (meta if key in NATIVE_KEYS else out)[key] = value  # a stray native name keeps its value in meta
        for native, path in src.items():
            value = _get(obj, path)
            if value is not None:
                out[native] = value
        if meta:
            own = out.get("meta")
            out["meta"] = {**meta, **own} if isinstance(own, dict) else meta
    if "id" not in out:
        out["id"] = _derived_id("a", obj)
    out["passages"] = _passages(out.get("passages"), mapping)
    return out, src


def _get(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _derived_id(prefix, value):
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return f"{prefix}-{hashlib.sha256(canonical.encode()).hexdigest()[:16]}"


def _passages(items, mapping):
    if not isinstance(items, list):
        return items
    out, seen = [], set()
    for item in items:
        p = _passage(item, mapping)
        if isinstance(p, dict) and "id" not in p:
            pid = base = _derived_id("p", p.get("text"))
            n = 1
            while pid in seen:  # the same text twice in one answer
                n += 1
                pid = f"{base}-{n}"
            p["id"] = pid
        if isinstance(p, dict) and isinstance(p.get("id"), str):
            seen.add(p["id"])
        out.append(p)
    return out


def _passage(item, mapping):
    if isinstance(item, str):
        return {"text": item}
    if not isinstance(item, dict):
        return item
    pmap = {k.split(".", 1)[1]: v for k, v in (mapping or {}).items() if k in PASSAGE_TARGETS}
    if pmap:
        used = {path for path in pmap.values() if "." not in path}
        p = {k: v for k, v in item.items() if k not in used and k not in pmap}
        for native, path in pmap.items():
            value = _get(item, path)
            if value is not None:
                p[native] = value
        item = p
    if "page_content" in item and "text" not in item:
        return _document(item)
    return item


def _document(doc):
    """A LangChain-style document: page_content, metadata {id, source, title, url, ...}."""
    md = doc.get("metadata")
    md = dict(md) if isinstance(md, dict) else {}
    p = {"text": doc["page_content"]}
    pid = doc.get("id") or md.pop("id", None) or md.pop("doc_id", None)
    if pid is not None:
        p["id"] = pid if isinstance(pid, str) else str(pid)
    if "source" in md:
        p["source"] = md.pop("source")
    extra = {k: v for k, v in doc.items() if k not in ("page_content", "metadata", "id", "text", "source")}
    meta = {**extra, **md}
    if meta:
        p["meta"] = meta
    return p


def renamed(errors, renames):
    """Errors with their native field names spelled as in the file (question -> user_input)."""
    if not renames:
        return errors
    out = []
    for e in errors:
        head = e.field.split(".")[0].split("[")[0]
        name = renames.get(head)
        out.append(e if not name else type(e)(e.line, name + e.field[len(head) :], e.message))
    return out
