"""RAGTruth's own records, a response joined to its source (the `ragtruth` import shape).

RAGTruth (Niu et al., 2024) ships `response.jsonl` (id, source_id, model, temperature, labels, split, quality,
response) and `source_info.jsonl` (source_id, task_type, source, source_info, prompt), where a QA source's
`source_info` is {"question": str, "passages": "passage 1:...\\n\\npassage 2:...\\n\\n"}. Users join the two on
source_id (pandas' merge, as RAGTruth's baseline/prepare_dataset.py does; that script also drops `prompt` and adds
copies: `question`, and `reference` holding the passages string). A joined record has `response` and
`source_info`: the answer is `response`, the question `source_info.question`, the passages `source_info.passages`
split on their markers (audit.ingest.numbered), the string kept in meta.passages_raw; `labels` (the human spans),
`model`, `quality` and the rest go into meta. The copies prepare_dataset.py adds are left out when they equal what
was taken, so nothing is stored twice. Summary and Data2txt sources have no question: such a record is refused,
its error naming `source_info.question`.
"""

SHAPE = {
    "question": ("source_info.question", "question"),
    "answer": ("response",),
    "passages": ("source_info.passages", "reference"),
}


def joined(keys):
    """Whether a record (or a CSV header) is a RAGTruth response joined to its source_info."""
    return {"response", "source_info"} <= set(keys)


def tidy(out, passages):
    """Leave out prepare_dataset.py's copies of the question and of the passages string (`passages`, as taken),
    when they are copies."""
    if "reference" in out and out["reference"] == passages:
        del out["reference"]
    meta = out.get("meta")
    if isinstance(meta, dict) and "question" in meta and meta["question"] == out.get("question"):
        del meta["question"]
