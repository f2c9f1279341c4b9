"""The only module that imports the anthropic SDK. It turns request dicts from prompts.py into
plain Outcome values (parsed data, raw text, usage, error), so nothing else sees SDK types.

Retries of 408/409/429/5xx (with backoff, honouring retry-after) are the SDK's own; what is left
after them (a persistent 529 = OverloadedError, a timeout) becomes an Outcome error, recorded by
the runner as a failed item. Errors no retry can fix (bad key, unknown model) abort the run."""

import anthropic
from django.conf import settings

from audit.judge import prompts, rubric
from audit.judge.outcome import FatalJudgeError, Outcome

FATAL = (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError)
PARSERS = {"decompose": prompts.parse_decompose, "verify": prompts.parse_verify, "rubric": rubric.parse_rubric}


_clients = {}


def client_options():
    if not settings.ANTHROPIC_API_KEY:
        raise FatalJudgeError("ANTHROPIC_API_KEY is not set: the anthropic backend needs it (or use --backend offline)")
    return {
        "api_key": settings.ANTHROPIC_API_KEY,
        "base_url": settings.ANTHROPIC_BASE_URL or None,
        "max_retries": settings.JUDGE_MAX_RETRIES,
        "timeout": settings.JUDGE_TIMEOUT,
    }


def make_client():
    """One client per configuration and process: it is thread-safe, and building one costs tens of ms
    (TLS context), while its connection pool is worth keeping warm between runs of a worker."""
    options = client_options()
    key = tuple(options.values())
    if key not in _clients:
        _clients[key] = anthropic.Anthropic(**options)
    return _clients[key]


def _usage(u):
    return {
        "input": u.input_tokens or 0,
        "output": u.output_tokens or 0,
        "cache_write": u.cache_creation_input_tokens or 0,
        "cache_read": u.cache_read_input_tokens or 0,
    }


def outcome_from_message(stage, message):
    raw = "".join(b.text for b in message.content if getattr(b, "type", "") == "text")
    usage = _usage(message.usage)
    if message.stop_reason in ("max_tokens", "refusal"):
        return Outcome(raw=raw, usage=usage, error=f"model stopped: {message.stop_reason}")
    try:
        return Outcome(data=PARSERS[stage](raw), raw=raw, usage=usage)
    except prompts.OutputError as exc:
        return Outcome(raw=raw, usage=usage, error=f"unusable output: {exc}")


def _api_error(exc):
    status = getattr(exc, "status_code", None)
    return Outcome(error=f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {exc}")


def _create_outcome(stage, call):
    """Run call() (returns a Message); SDK errors become Outcome errors, fatal ones FatalJudgeError."""
    try:
        message = call()
    except FATAL as exc:
        raise FatalJudgeError(f"{type(exc).__name__}: {exc}") from exc
    except anthropic.APIError as exc:
        return _api_error(exc)
    return outcome_from_message(stage, message)


class LLMJudge:
    """Thread-safe: one sync SDK client (one connection pool) shared by the runner's worker threads.
    (Measured against AsyncAnthropic on one event loop: threads with the sync client were faster here.)"""

    priced = True

    def __init__(self, spec):
        self.spec = spec
        self.client = make_client()

    def decompose_params(self, answer_text):
        return prompts.decompose_params(self.spec, answer_text)

    def verify_context(self, passages):
        return prompts.verify_system_blocks(self.spec, passages)

    def verify_params(self, context, claim_text):
        return prompts.verify_params(self.spec, context, claim_text)

    def rubric_params(self, question, passages, answer_text):
        """The answer-level rubric call (audit.judge.rubric): one per answer."""
        return rubric.rubric_params(self.spec, question, passages, answer_text)

    def call(self, stage, params):
        return _create_outcome(stage, lambda: self.client.messages.create(**params))

    def batch_submit(self, requests):
        """requests: [(custom_id, params)] -> batch id."""
        try:
            batch = self.client.messages.batches.create(
                requests=[{"custom_id": cid, "params": params} for cid, params in requests]
            )
        except FATAL as exc:
            raise FatalJudgeError(f"{type(exc).__name__}: {exc}") from exc
        return batch.id

    def batch_ended(self, batch_id):
        return self.client.messages.batches.retrieve(batch_id).processing_status == "ended"

    def batch_results(self, batch_id, stage_of):
        """Yields (custom_id, Outcome); stage_of(custom_id) names the parser to use."""
        for item in self.client.messages.batches.results(batch_id):
            result = item.result
            if result.type == "succeeded":
                yield item.custom_id, outcome_from_message(stage_of(item.custom_id), result.message)
            elif result.type == "errored":
                err = getattr(result.error, "error", None)
                yield (
                    item.custom_id,
                    Outcome(
                        error=f"batch item errored: {getattr(err, 'type', '')} {getattr(err, 'message', '')}".strip()
                    ),
                )
            else:
                yield item.custom_id, Outcome(error=f"batch item {result.type}")
