"""ExpertQA's examples (Malaviya et al., 2023; r2_compiled_anon.jsonl), told apart so they are refused clearly.

One object per question: `question`, `annotator_id`, `answers: {<system>: {answer_string, attribution, claims:
[{claim_string, evidence, support, ...}], revised_answer_string, usefulness, ...}}`, `metadata`. One object holds
the answers of several systems, so it is not one audit answer; and its `support` (Complete / Partial / Missing) is
an expert's judgement with no audit verdict for Partial. `refusal(obj)` is the message naming the systems, for the
record's `answers` field, or None for any other record. IMPORT_SHAPES.md says how to write one record per system.
"""


def refusal(obj):
    """What to say about an ExpertQA example (its `answers` an object of system -> answer with answer_string)."""
    answers = obj.get("answers") if isinstance(obj, dict) else None
    if not isinstance(answers, dict) or not answers or "answer" in obj:
        return None
    if not all(isinstance(a, dict) and "answer_string" in a for a in answers.values()):
        return None
    systems = list(answers)
    names = ", ".join(systems[:8]) + (", ..." if len(systems) > 8 else "")
    return (
        f"an ExpertQA example holds the answers of {len(systems)} system{'s' if len(systems) != 1 else ''} ({names}),"
        " each with its own claims and evidence: not imported as one answer. Write one record per system first"
        " (answer=answers.<system>.answer_string, passages from its claims' evidence): see IMPORT_SHAPES.md"
    )
