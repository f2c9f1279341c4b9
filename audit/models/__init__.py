from audit.models.answers import Answer, Claim, ClaimOrigin, Dataset, ImportBatch, Passage, Verdict
from audit.models.audits import Audit, AuditAnswer, AuditStatus
from audit.models.guidelines import GuidelinesVersion
from audit.models.history import HistoryEvent
from audit.models.judge import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVersion
from audit.models.judgements import AnswerJudgement, AnswerJudgementSync
from audit.models.notify import NotificationSent, NotificationSettings, WebhookDelivery

__all__ = [
    "Answer",
    "AnswerJudgement",
    "AnswerJudgementSync",
    "Audit",
    "AuditAnswer",
    "AuditStatus",
    "Claim",
    "ClaimOrigin",
    "Dataset",
    "GuidelinesVersion",
    "HistoryEvent",
    "ImportBatch",
    "JudgeFailure",
    "JudgeRun",
    "JudgeVerdict",
    "JudgeVersion",
    "Passage",
    "Verdict",
    "NotificationSent",
    "NotificationSettings",
    "WebhookDelivery",
]
