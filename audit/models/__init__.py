from audit.models.answers import Answer, Claim, ClaimOrigin, Dataset, ImportBatch, Passage, Verdict
from audit.models.audits import Audit, AuditAnswer, AuditStatus, Policy
from audit.models.definitions import AnswerVerdict, JudgeDefinition, JudgeEdit, JudgeLevel
from audit.models.history import HistoryEvent
from audit.models.judge import JudgeFailure, JudgeRun, JudgeVerdict, JudgeVersion
from audit.models.judgements import AnswerJudgement, AnswerJudgementSync
from audit.models.notify import NotificationSent, NotificationSettings, WebhookDelivery

__all__ = [
    "Answer",
    "AnswerJudgement",
    "AnswerJudgementSync",
    "AnswerVerdict",
    "Audit",
    "AuditAnswer",
    "AuditStatus",
    "Claim",
    "ClaimOrigin",
    "Dataset",
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
