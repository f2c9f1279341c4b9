"""The shapes teams already have, turned into the native record before validation (parse.normalise).

Formats: `native` (id, question, answer, passages, ...), `ragas` evaluation samples (user_input, response,
retrieved_contexts, optional reference; Ragas 0.1's question, answer, contexts), `deepeval` test cases and goldens
(input, actual_output or actualOutput, retrieval_context or retrievalContext; a list DeepEval's save_as wrote as one
string joined with "|" is split again), `langchain` chain outputs (input/question/query,
answer/result/output/response, context/source_documents/documents/contexts/passage of documents), also as a
LangSmith run (the same fields under `inputs` and `outputs`, start_time as created_at), `ragtruth` (a RAGTruth
response joined to its source_info: see ragtruth.py), and `mapping` (any shape,
through `target=source` pairs such as `question=prompt` or `passage.text=content`; a source may be a dotted path
into nested objects and lists, e.g. `observations.0.output`; a field named with dots, as flattened tables have,
is read whole, and a string of JSON on the way, as TruLens' record_json, is read through). `auto` detects the
format of each record from its fields. In every format a passage may be a plain string or a LangChain-style
document (page_content, metadata with id/source/title/url/..., also as LangChain serialises it: {"lc": 1,
"kwargs": {...}}); in a tool's shape (not native) the passages field may also be one string of context, taken as
one passage (or, when it is clearly a numbered list, "passage 1:...\n\npassage 2:...", as its passages: see
numbered.py), or a list written as text (JSON, or the Python literal pandas writes).

A field with a native name (id, created_at, meta, claims, ...) keeps its meaning unless the shape takes that native
field from another one: then it goes into `meta`. The fields a shape takes are left out of `meta`, down to the leaf
of a dotted path (what else `inputs` holds stays, `inputs.question` does not), so nothing is stored twice; every
other field ends up in `meta`.

A record or passage without an id gets a stable one derived from its content, so importing the same file twice is a
no-op. Errors name the field as the file spells it (`user_input`, not `question`).
"""

import hashlib
import json
import re

from audit.ingest import expertqa, numbered, pyliteral, ragtruth

FORMATS = ("auto", "native", "ragas", "deepeval", "langchain", "ragtruth", "mapping")
NATIVE_KEYS = ("id", "question", "answer", "created_at", "meta", "claims", "passages")
PASSAGE_TARGETS = ("passage.id", "passage.text", "passage.source")
TARGETS = (*NATIVE_KEYS, *PASSAGE_TARGETS)

# Each named shape: native field -> the field its tool writes (the first present of several).
SHAPES = {
    "ragas": {  # Ragas samples; Ragas 0.1 (and the public sets made with it) wrote question, answer, contexts
        "question": ("user_input", "question"),
        "answer": ("response", "answer"),
        "passages": ("retrieved_contexts", "contexts"),
    },
    "deepeval": {
        "question": ("input",),
        "answer": ("actual_output", "actualOutput"),  # a test run file spells its fields in camelCase
        "passages": ("retrieval_context", "retrievalContext"),
    },
    "langchain": {  # a chain's output, or a LangSmith run (inputs, outputs, start_time); RAGChecker's results too
        "id": ("id", "query_id"),
        "question": ("input", "question", "query", "inputs.question", "inputs.query", "inputs.input"),
        "answer": ("answer", "result", "output", "outputs.answer", "outputs.result", "outputs.output", "response"),
        "passages": (
            "context",
            "source_documents",
            "documents",
            "outputs.source_documents",
            "outputs.context",
            "outputs.documents",
            "contexts",
            "passage",
            "retrieved_context",
        ),
        "created_at": ("created_at", "start_time"),
    },
    "ragtruth": ragtruth.SHAPE,  # a RAGTruth response joined to its source_info (see ragtruth.py)
}
# Fields that hold JSON in a CSV cell, per shape (a cell may also hold a Python literal as pandas writes it).
CSV_JSON = {
    "native": ("passages", "claims", "meta"),
    "ragas": ("retrieved_contexts", "reference_contexts", "contexts", "ground_truths"),
    "deepeval": (
        "retrieval_context",
        "context",
        "tools_called",
        "expected_tools",
        "additional_metadata",
        "custom_column_key_values",
    ),
    "ragtruth": ("labels", "format_label"),  # a merged frame's list and dict columns (source_info: a path's column)
}
# List fields a shape's own tool may write as one string, joined with "|" (DeepEval's save_as, CSV and JSONL).
JOINED = {"deepeval": ("retrieval_context", "context")}
# A .json file holding one object may keep its records in a list under one of these keys (a DeepEval test
# run: testCases; a pulled DeepEval dataset: goldens; evaluate()'s EvaluationResult dumped: test_results);
# multi-turn lists beside them are not answers.
RECORD_LISTS = ("testCases", "test_cases", "goldens", "test_results")
# A file that is one object holding its records under a general name (RAGChecker writes "results"): taken when
# the list holds objects
LISTS_OF_RECORDS = ("results", "records", "data", "examples", "samples", "rows", "items")
# how a file holding its records under one of those keys starts (a long one-line file is seen by its start only)
HOLDS_RECORDS = re.compile(rb'^\{\s*"(?:%s)"\s*:\s*\[\s*\{' % "|".join((*LISTS_OF_RECORDS, *RECORD_LISTS)).encode())
MULTI_TURN = ("conversationalTestCases", "conversational_test_cases", "conversationalGoldens")


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
    if ragtruth.joined(keys):
        return "ragtruth"
    if {"user_input", "response"} <= keys or ({"question", "answer", "contexts"} <= keys and "passages" not in keys):
        return "ragas"
    if "input" in keys and keys & {"actual_output", "actualOutput"}:
        return "deepeval"
    if "passages" not in keys and (keys & set(SHAPES["langchain"]["passages"]) or {"inputs", "outputs"} <= keys):
        return "langchain"
    return "native"


def sources(fmt, mapping, keys):
    """native field -> the field of this record (or CSV header) that holds it: a name or a dotted path."""
    if fmt == "mapping":
        return {k: v for k, v in mapping.items() if k in NATIVE_KEYS}
    if fmt == "native":
        return {}
    return {native: next((c for c in cands if _has(keys, c)), cands[0]) for native, cands in SHAPES[fmt].items()}


def _has(keys, path):
    if isinstance(keys, dict):  # a record: the path is there, even holding null (then its error names it)
        return _get(keys, path, _GONE) is not _GONE
    return _column(keys, path) in keys  # a CSV header: a dotted path goes into a column of JSON


def _column(header, path):
    """The CSV column a path reads: a column named with dots (pandas' json_normalize writes
    `inputs.question`), else the column of JSON the path starts in."""
    return path if path in header else path.split(".")[0]


def csv_columns(fmt, mapping, header):
    """(format, required columns, JSON columns) for a CSV file with this header."""
    if fmt == "auto":
        fmt = detect(header)
    if fmt == "native":
        return fmt, ("id", "question", "answer", "passages"), CSV_JSON["native"]
    src = sources(fmt, mapping, header)
    required = tuple(_column(header, src[k]) for k in ("question", "answer", "passages") if k in src)
    # A mapped list or object, or a dotted path into a column, means that column's cells hold JSON.
    nested = tuple(
        _column(header, v) for k, v in src.items() if k in ("passages", "claims", "meta") or _column(header, v) != v
    )
    return fmt, required, CSV_JSON.get(fmt, ()) + nested


def to_native(obj, fmt, mapping):
    """(native object, renames) where renames maps a native field back to the file's own name, or to the names
    its shape looked for when the record has none of them."""
    if not isinstance(obj, dict):
        return obj, {}
    if fmt == "auto":
        fmt = detect(obj)
    if fmt in JOINED:
        obj = {k: _split(v) if k in JOINED[fmt] and isinstance(v, str) else v for k, v in obj.items()}
    src = sources(fmt, mapping, obj)
    out = {} if src else dict(obj)
    if src:
        meta = {}
        for key, value in _rest(obj, src.values()).items():
            (meta if key in src else out)[key] = value  # a native name the shape takes from elsewhere: meta
        for native, path in src.items():
            value = _get(obj, path)
            if value is not None:
                out[native] = value
        _fold(out, meta)
    if fmt == "ragtruth":
        ragtruth.tidy(out, out.get("passages"))
    if "id" not in out:
        out["id"] = _derived_id("a", obj)
    passages = out.get("passages")
    if src and listed(passages) is not None:
        passages = listed(passages)
    elif src and isinstance(passages, str) and (parts := numbered.split(passages)):
        passages = parts  # "passage 1:...\n\npassage 2:..." (RAGTruth): its passages
        _fold(out, {"passages_raw": out["passages"]})  # the string as written, in the answer's meta
    elif src and isinstance(passages, str) and passages.strip():
        passages = [passages]  # a tool's one string of context (a chain's formatted "context"): one passage
    out["passages"] = _passages(passages, mapping)
    absent = {k: c for k, c in SHAPES.get(fmt, {}).items() if len(c) > 1 and not any(_has(obj, x) for x in c)}
    return out, {**src, **absent}


def _fold(out, stray):
    """Fields with a native name the shape took from elsewhere, into out's meta (its own keys win a clash)."""
    own = out.get("meta")
    if stray and (own is None or isinstance(own, dict)):
        out["meta"] = {**stray, **(own or {})}


def _split(text):
    return text.split("|") if text else []


_GONE = object()


def _index(part):
    """The list position a path part names (ASCII digits: "0", "12"), else None ("²" is a digit to
    str.isdigit, not to int())."""
    return int(part) if part.isascii() and part.isdecimal() and len(part) < 10 else None


def _json_text(value):
    """A string holding a JSON object or list (TruLens' record_json, a pandas frame's dict column written by
    to_json), or a dict or list as the Python literal pandas writes to CSV (a frame read back with read_csv and
    saved as JSON: see pyliteral), as that object or list; else the value itself."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            try:
                parsed = pyliteral.read(value)
            except ValueError:
                return value
        return parsed if isinstance(parsed, (dict, list)) else value
    return value


def _key(obj, parts):
    """How many of the path's parts the longest key of obj spelt with their dots takes (flattened exports name
    fields `attributes.input.value`, Phoenix's documents `document.metadata`), else 0."""
    return next((j for j in range(len(parts), 0, -1) if ".".join(parts[:j]) in obj), 0)


def listed(text):
    """A list written as text: JSON (a log table's text column), or a Python literal (how pandas writes a list
    column to CSV; read back and saved with to_json, it is that string; numpy's "['a' 'b']" too). Else None."""
    if not isinstance(text, str) or not text.lstrip().startswith("["):
        return None
    value = _json_text(text.strip())
    return value if isinstance(value, list) else None


def _get(obj, path, missing=None):
    """The value at a dotted path; at each level the longest key spelt with the path's dots wins, a list takes
    an index, and a string of JSON is read through."""
    parts = path.split(".")
    while parts:
        j = _key(obj, parts) if isinstance(obj, dict) else 0
        n = _index(parts[0]) if isinstance(obj, list) else None
        if j:
            obj, parts = obj[".".join(parts[:j])], parts[j:]
        elif n is not None and n < len(obj):
            obj, parts = obj[n], parts[1:]
        else:
            return missing
        obj = _json_text(obj) if parts else obj
    return obj


def _rest(obj, paths):
    """obj without what the shape takes from it: whole fields, and the leaves of dotted paths."""
    out = dict(obj)
    for path in paths:
        left = _without(out, path.split("."))
        out = {} if left is _GONE else left
    return out


def _without(value, parts):
    """A copy of value (object or list) without the leaf at a path, read as _get reads it (JSON text a path
    goes into stays as its object); _GONE when nothing else is left."""
    j = _key(value, parts) if isinstance(value, dict) else 0
    n = _index(parts[0]) if isinstance(value, list) else None
    if j:
        key, out = ".".join(parts[:j]), dict(value)
    elif n is not None and n < len(value):
        key, out, j = n, list(value), 1
    else:
        return value
    left = _without(_json_text(value[key]), parts[j:]) if parts[j:] else _GONE
    if isinstance(out, list):
        out[key] = None if left is _GONE else left  # the other items keep their positions
        return out
    if left is _GONE:
        del out[key]
    else:
        out[key] = left
    return out or _GONE


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


def passages_of_text(text):
    """One string of context as the one passage it was before numbered lists were split (see unsplit.py)."""
    return _passages([text], None)


def _passage(item, mapping):
    if isinstance(item, str):
        return {"text": item}
    if _titled_sentences(item):  # HotpotQA's context: [title, [sentence, ...]], sentences keep their spaces
        return {"text": "".join(item[1]), "meta": {"title": item[0]}}
    if not isinstance(item, dict):
        return item
    if item.get("lc") and isinstance(item.get("kwargs"), dict) and "page_content" in item["kwargs"]:
        item = item["kwargs"]  # LangChain's serialised form: {"lc": 1, "type": "constructor", "id": [...], "kwargs"}
    pmap = {k.split(".", 1)[1]: v for k, v in (mapping or {}).items() if k in PASSAGE_TARGETS}
    if pmap:
        rest = _rest(item, pmap.values())
        p = {k: v for k, v in rest.items() if k not in pmap}
        _fold(p, {k: v for k, v in rest.items() if k in pmap})
        for native, path in pmap.items():
            value = _get(item, path)
            if value is not None:
                p[native] = value
        item = p
    if "page_content" in item and "text" not in item:
        return _document(item)
    if "id" not in item and "doc_id" in item:  # RAGChecker's retrieved_context: {doc_id, text}
        item = {"id": item["doc_id"], **{k: v for k, v in item.items() if k != "doc_id"}}
    return item


def _titled_sentences(item):
    return (
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], list)
        and all(isinstance(x, str) for x in item[1])
    )


def _document(doc):
    """A LangChain-style document: page_content, metadata {id, source, title, url, ...}."""
    md = doc.get("metadata")
    md = dict(md) if isinstance(md, dict) else {}
    p = {"text": doc["page_content"]}
    pid = _document_id(doc, md)
    if pid is not None:
        p["id"] = pid  # an integer becomes its decimal string in validation (parse.normalise)
    if "source" in md:
        p["source"] = md.pop("source")
    extra = {k: v for k, v in doc.items() if k not in ("page_content", "metadata", "id", "text", "source")}
    meta = {**extra, **md}
    if meta:
        p["meta"] = meta
    return p


def _document_id(doc, md):
    """The document's own id, else its metadata's id or doc_id (taken out of the metadata)."""
    pid = doc.get("id")
    for key in ("id", "doc_id"):
        if pid is not None and pid != "":
            return pid
        pid = md.pop(key, None)
    return pid


def record_list(obj):
    """The key of the list of records in a file that is one object (formats.RECORD_LISTS), or None."""
    if isinstance(obj, dict):
        key = next((k for k in RECORD_LISTS if isinstance(obj.get(k), list)), None)
        if key or _a_record(obj):  # a record's own field called data or items stays its field
            return key
        return next((k for k in LISTS_OF_RECORDS if _objects(obj.get(k))), None)
    return None


def _a_record(obj):
    """Whether an object has a question or an answer of some shape (native or a tool's)."""
    return any(
        _has(obj, c)
        for shape in ({"question": ("question",), "answer": ("answer",)}, *SHAPES.values())
        for c in (*shape["question"], *shape["answer"])
    )


def _objects(value):
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value[:20])


def file_fields(obj, key):
    """(the fields that go with each record, [(field, message)]): the file's fields beside `key`, lists aside
    (summaries such as DeepEval's metricsScores); multi-turn test cases are refused, not skipped."""
    errors = [(k, "multi-turn test cases are not answers: not imported") for k in MULTI_TURN if obj.get(k)]
    return {k: v for k, v in obj.items() if k != key and not isinstance(v, list)}, errors


def unknown_shape(fmt, fields):
    """For a record (or CSV header) read with format auto that has no question, answer or passages of any shape:
    what to say after "missing", naming its own fields, else ""."""
    fields = list(fields)
    if fmt != "auto" or detect(fields) != "native" or {"question", "answer", "passages"} & set(fields):
        return ""
    names = ", ".join(fields[:12]) + (", ..." if len(fields) > 12 else "")
    return f" (no known shape has these fields: {names}; name yours with the mapping format, e.g. question=...)"


def hinted(errors, fmt, obj):
    """A record's errors, its missing question saying so when no shape knows the record's fields; an ExpertQA
    example's, one error on its `answers` (see expertqa.py)."""
    why = expertqa.refusal(obj) if errors and fmt in ("auto", "native") else None
    if why:
        return [type(errors[0])(errors[0].line, "answers", why)]
    hint = unknown_shape(fmt, obj) if errors and isinstance(obj, dict) else ""
    if not hint:
        return errors
    return [type(e)(e.line, e.field, e.message + hint) if e.field == "question" else e for e in errors]


def renamed(errors, renames):
    """Errors with their native field names spelled as in the file (question -> user_input); a field the record
    has under none of its shape's names is named by the first, its message listing them all."""
    if not renames:
        return errors
    out = []
    for e in errors:
        head = e.field.split(".")[0].split("[")[0]
        name, message = renames.get(head), e.message
        if isinstance(name, tuple):
            name, message = name[0], f"{message} (looked for {', '.join(name)})" if e.field == head else message
        out.append(e if not name else type(e)(e.line, name + e.field[len(head) :], message))
    return out
