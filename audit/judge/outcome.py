"""Plain values passed between the judge backends (llm.py, offline.py) and the runner."""

from dataclasses import dataclass, field

# cache_write counts every token written to the cache, cache_write_1h the part of them written for an hour.
ZERO_USAGE = {"input": 0, "output": 0, "cache_write": 0, "cache_write_1h": 0, "cache_read": 0}


@dataclass
class Outcome:
    """One decompose or verify call: parsed data, or an error (with the raw text when there was one)."""

    data: object = None
    raw: str = ""
    usage: dict = field(default_factory=lambda: dict(ZERO_USAGE))
    error: str = ""
    bill_unknown: bool = False  # the request went out and no reply came back: the API may have billed it

    @property
    def ok(self):
        return not self.error


class FatalJudgeError(RuntimeError):
    """No retry can fix it (missing or rejected key, unknown model): the run stops as failed."""
