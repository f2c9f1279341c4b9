"""The only module that imports the anthropic SDK. It turns request dicts from prompts.py into
plain Outcome values (parsed data, raw text, usage, error), so nothing else sees SDK types.

Every reply the API produced is billed, so only what it did not bill is retried: an error status
(408/409/429/5xx: no message was produced) and a connection that was never made, with backoff honouring
retry-after. A read timeout or a dropped connection after the request went out may have been billed:
it is not retried (the SDK would retry it, so its own retries are off) but recorded as a failed item
whose bill is unknown. The timeout of a call is long enough for the model to write its max_tokens, so a
reply still being written is not abandoned. The Messages API offers no idempotency key (the SDK sends
none); the Batches API has custom_id, which batch.py uses. Errors no retry can fix (bad key, unknown
model) abort the run."""

import random
import time
import typing

import anthropic
import httpx2
from django.conf import settings

from audit.judge import prompts, rubric
from audit.judge.outcome import FatalJudgeError, Outcome

FATAL = (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError)
RETRY_STATUS = (408, 409, 429)  # and every 5xx
NEVER_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout)
# The slowest output the SDK plans for (without an explicit timeout it refuses non-streaming calls that could
# take longer than 10 minutes at this rate): 128,000 tokens an hour. Every call here passes its own timeout.
SLOWEST_TOKENS_PER_SECOND = 128_000 / 3600
PARSERS = {"decompose": prompts.parse_decompose, "verify": prompts.parse_verify, "rubric": rubric.parse_rubric}


_clients = {}


def sdk_model_ids():
    """The model ids the installed SDK names: its Model type is a Literal of ids beside plain str (any id is
    sent as is), so the Literal's values; () for an SDK that lists none."""
    args = typing.get_args(getattr(anthropic.types, "Model", str))
    return tuple(a for arg in args for a in typing.get_args(arg) if isinstance(a, str))


def client_options():
    if not settings.ANTHROPIC_API_KEY:
        raise FatalJudgeError("ANTHROPIC_API_KEY is not set: the anthropic backend needs it (or use --backend offline)")
    return {
        "api_key": settings.ANTHROPIC_API_KEY,
        "base_url": settings.ANTHROPIC_BASE_URL or None,
        "max_retries": 0,  # retries are ours: only what the API did not bill (call_with_retries)
    }


def make_client():
    """One client per configuration and process: it is thread-safe, and building one costs tens of ms
    (TLS context), while its connection pool is worth keeping warm between runs of a worker."""
    options = client_options()
    key = tuple(options.values())
    if key not in _clients:
        _clients[key] = anthropic.Anthropic(**options)
    return _clients[key]


def _usage(u, ttl="5m"):
    """cache_write is every token written to the cache; cache_write_1h the part written for an hour (billed
    at the 1-hour price): the API's breakdown when it gives one, else the request's ttl decides."""
    write = u.cache_creation_input_tokens or 0
    split = getattr(u, "cache_creation", None)  # the breakdown by ttl; older API versions send none
    said = getattr(split, "ephemeral_1h_input_tokens", None)  # the breakdown, when the API gives one
    one_hour = min(write, said) if said is not None else (write if ttl == "1h" else 0)
    return {
        "input": u.input_tokens or 0,
        "output": u.output_tokens or 0,
        "cache_write": write,
        "cache_write_1h": one_hour,
        "cache_read": u.cache_read_input_tokens or 0,
    }


def outcome_from_message(stage, message, ttl="5m"):
    """ttl: what the request's cache breakpoint asked for (prompts.cache_ttl)."""
    raw = "".join(b.text for b in message.content if getattr(b, "type", "") == "text")
    usage = _usage(message.usage, ttl)
    if message.stop_reason in ("max_tokens", "refusal"):
        cut = stage == "decompose" and message.stop_reason == "max_tokens"
        hint = " (the answer's claims did not fit in one call: import the answer with its claims)" if cut else ""
        return Outcome(raw=raw, usage=usage, error=f"model stopped: {message.stop_reason}{hint}")
    try:
        return Outcome(data=PARSERS[stage](raw), raw=raw, usage=usage)
    except prompts.OutputError as exc:
        return Outcome(raw=raw, usage=usage, error=f"unusable output: {exc}")


def _api_error(exc, note=""):
    status = getattr(exc, "status_code", None)
    return Outcome(
        error=f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {exc}{note}", bill_unknown=bool(note)
    )


def min_cache_tokens(model):
    table = settings.JUDGE_MIN_CACHE_TOKENS
    return table.get(model, max(table.values()))


def call_timeout(max_tokens):
    """JUDGE_TIMEOUT for the queue and the first token, plus the time to write max_tokens slowly."""
    return settings.JUDGE_TIMEOUT + max_tokens / SLOWEST_TOKENS_PER_SECOND


def never_sent(exc):
    return isinstance(exc, anthropic.APIConnectionError) and isinstance(exc.__cause__, NEVER_SENT)


def retryable(exc):
    """Worth sending again: a rate limit, an overload or a server error, or a request that never left."""
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in RETRY_STATUS or exc.status_code >= 500
    return never_sent(exc)


def backoff(exc, attempt):
    headers = getattr(getattr(exc, "response", None), "headers", {})
    for header, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return min(float(headers[header]) / scale, 60.0)
        except (KeyError, ValueError):
            pass
    return min(0.5 * 2**attempt, 8.0) * (0.75 + random.random() / 2)


def call_with_retries(call):
    """call() returns a Message; SDK errors become Outcome errors, fatal ones FatalJudgeError."""
    for attempt in range(settings.JUDGE_MAX_RETRIES + 1):
        try:
            return call()
        except FATAL as exc:
            raise FatalJudgeError(f"{type(exc).__name__}: {exc}") from exc
        except anthropic.APIError as exc:
            # An error status is the API's answer instead of a message: nothing billed. A timeout or a connection
            # lost after sending may have been billed, so it is not sent again.
            if not isinstance(exc, anthropic.APIStatusError) and not never_sent(exc):
                return _api_error(exc, note=" (not retried: the API may have billed it)")
            if not retryable(exc) or attempt == settings.JUDGE_MAX_RETRIES:
                return _api_error(exc)  # an invalid request (400, 413, 422: a prompt over the context window) at once
            time.sleep(backoff(exc, attempt))


def _create_outcome(stage, call, ttl):
    result = call_with_retries(call)
    return result if isinstance(result, Outcome) else outcome_from_message(stage, result, ttl)


class LLMJudge:
    """Thread-safe: one sync SDK client (one connection pool) shared by the runner's worker threads.
    (Measured against AsyncAnthropic on one event loop: threads with the sync client were faster here.)"""

    priced = True

    def __init__(self, spec):
        self.spec = spec
        self.client = make_client()

    def decompose_params(self, answer_text):
        return prompts.decompose_params(self.spec, answer_text)

    def verify_context(self, passages, ttl="5m"):
        return prompts.verify_system_blocks(self.spec, passages, ttl)

    def verify_params(self, context, claim_text):
        return prompts.verify_params(self.spec, context, claim_text)

    def rubric_params(self, question, passages, answer_text):
        """The answer-level rubric call (audit.judge.rubric): one per answer."""
        return rubric.rubric_params(self.spec, question, passages, answer_text)

    def cacheable(self, context):
        """False when the shared prefix is surely under the model's minimum cacheable length: a token
        is at least one byte, so fewer bytes than the minimum cannot reach it."""
        return sum(len(b["text"].encode()) for b in context) >= min_cache_tokens(self.spec["model"])

    def call(self, stage, params):
        timeout = call_timeout(params["max_tokens"])
        ttl = prompts.cache_ttl(params)
        return _create_outcome(stage, lambda: self.client.messages.create(**params, timeout=timeout), ttl)

    def batch_submit(self, requests):
        """requests: [(custom_id, params)] -> batch id."""
        batch = call_with_retries(
            lambda: self.client.messages.batches.create(
                requests=[{"custom_id": cid, "params": params} for cid, params in requests]
            )
        )
        if isinstance(batch, Outcome):  # not resubmitted blindly: a second batch would be billed again
            raise FatalJudgeError(f"batch not submitted: {batch.error}")
        return batch.id

    def batch_ended(self, batch_id):
        batch = call_with_retries(lambda: self.client.messages.batches.retrieve(batch_id))
        return not isinstance(batch, Outcome) and batch.processing_status == "ended"  # failed: poll again

    def batch_results(self, batch_id, stage_of, ttl="5m"):
        """Yields (custom_id, Outcome); stage_of(custom_id) names the parser to use; ttl is the cache ttl the
        batch's requests asked for (bills a write the API does not break down by ttl)."""
        items = call_with_retries(lambda: list(self.client.messages.batches.results(batch_id)))
        if isinstance(items, Outcome):  # the run stops; a resume collects the same batch again
            raise FatalJudgeError(f"results of batch {batch_id} not read: {items.error}")
        for item in items:
            result = item.result
            if result.type == "succeeded":
                cid = item.custom_id
                yield cid, outcome_from_message(stage_of(cid), result.message, ttl)
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
