from audit.models.answers import (
    BAD_VERDICTS,
    NEEDS_EVIDENCE,
    SCORED_VERDICTS,
    Answer,
    Claim,
    ClaimOrigin,
    Dataset,
    ImportBatch,
    Passage,
    Verdict,
)
from audit.models.audits import Audit, AuditAnswer, AuditStatus
from audit.models.history import HistoryEvent
from audit.models.judge import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVersion
from audit.models.judgements import AnswerJudgement, AnswerJudgementSync

__all__ = [
    "BAD_VERDICTS",
    "NEEDS_EVIDENCE",
    "SCORED_VERDICTS",
    "Answer",
    "AnswerJudgement",
    "AnswerJudgementSync",
    "Audit",
    "AuditAnswer",
    "AuditStatus",
    "Claim",
    "ClaimOrigin",
    "Dataset",
    "HistoryEvent",
    "ImportBatch",
    "JudgeFailure",
    "JudgeRun",
    "JudgeVerdict",
    "JudgeVersion",
    "Passage",
    "Verdict",
]
