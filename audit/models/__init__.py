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
from audit.models.audits import Audit, AuditAnswer, AuditClaim, AuditStatus, Policy
from audit.models.definitions import AnswerVerdict, JudgeDefinition, JudgeEdit, JudgeLevel
from audit.models.guidelines import GuidelinesVersion
from audit.models.history import HistoryEvent
from audit.models.judge import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVersion
from audit.models.judgements import AnswerJudgement, AnswerJudgementSync
from audit.models.notify import NotificationSent, NotificationSettings, WebhookDelivery

__all__ = [
    "BAD_VERDICTS",
    "NEEDS_EVIDENCE",
    "SCORED_VERDICTS",
    "Answer",
    "AnswerJudgement",
    "AnswerJudgementSync",
    "AnswerVerdict",
    "Audit",
    "AuditAnswer",
    "AuditClaim",
    "AuditStatus",
    "Claim",
    "ClaimOrigin",
    "Dataset",
    "GuidelinesVersion",
    "HistoryEvent",
    "ImportBatch",
    "JudgeDefinition",
    "JudgeEdit",
    "JudgeFailure",
    "JudgeLevel",
    "JudgeRun",
    "JudgeVerdict",
    "JudgeVersion",
    "Passage",
    "Policy",
    "Verdict",
    "NotificationSent",
    "NotificationSettings",
    "WebhookDelivery",
]
