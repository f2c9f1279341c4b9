"""A small fake of the Anthropic Messages and Message Batches APIs on 127.0.0.1, for tests and the bench.

It records every request (method, path, headers, JSON body). Replies come from `handler(kind, body)`
(kind: "decompose", "verify" or "rubric", told apart by the output schema sent), or from `script`, a queue of
replies used first, one per /v1/messages call. A reply is a dict (sent as the JSON text), a str (sent
as raw text, e.g. malformed JSON) or a FakeError (an HTTP error status). Run standalone for the bench:
`python -m tests.fake_anthropic --delay 0.2` prints its URL.

It caches like the API's prompt caching: the prefix up to the last block with cache_control (tokens
counted as characters / 4) is cached only when at least `min_cache_tokens[model]` long, and readable
only once the first response that wrote it has begun (here: is being sent); until then every request
with that prefix writes it again. A write is for the breakpoint's ttl ("5m" unless it says "1h"; the fake
keeps entries forever), billed at that ttl's price and reported by ttl in usage.cache_creation, as newer
API versions do (not when `report_ttl` is False, as older ones). It bills like the API: every reply it
produced is in `billed` (kind, what it was about, usage, batch or not, the ttl of its cacheable prefix),
whether or not the client was still there to read it; a reply longer than the request's max_tokens is
cut there (stop_reason "max_tokens"). A `Gate` decides when a test's "kill" happens: it answers the first
N calls and holds every later one until released, so a test can stop the run after exactly N stored results.
"""

import argparse
import hashlib
import json
import re
import threading
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PASSAGE = re.compile(r'<passage id="(.*?)">\n(.*?)\n</passage>', re.S)
ERROR_TYPES = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error", 400: "invalid_request_error"}


class Gate:
    """Answers the first `after` /v1/messages calls, holds every later one until release(). `limit` only
    bounds how long a held call waits (a test that forgets to release fails instead of hanging)."""

    def __init__(self, after=0, limit=60.0):
        self.left, self.limit, self.held, self.opened = after, limit, 0, False
        self.cond = threading.Condition()

    def admit(self):
        with self.cond:
            if self.left > 0:
                self.left -= 1
                return
            self.held += 1  # every call after the first `after`, held or (once released) let through
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.opened, timeout=self.limit)

    def release(self):
        with self.cond:
            self.opened = True
            self.cond.notify_all()

    def wait_held(self, n):
        with self.cond:
            return self.cond.wait_for(lambda: self.held >= n, timeout=self.limit)


@dataclass
class FakeError:
    status: int
    retry_after_ms: str = "1"  # the SDK honours it; keeps retries fast


def answer_of(body):
    return body["messages"][0]["content"].removeprefix("<answer>\n").removesuffix("\n</answer>")


def rubric_answer_of(body):
    return body["messages"][0]["content"].split("<answer>\n", 1)[1].removesuffix("\n</answer>")


def claim_of(body):
    return body["messages"][0]["content"].removeprefix("<claim>").removesuffix("</claim>")


def passages_of(body):
    return PASSAGE.findall(body["system"][-1]["text"])


def default_handler(kind, body):
    """Decompose: one claim per sentence. Verify: supported, quoting the claim, when a passage contains it."""
    if kind == "decompose":
        return {"claims": [s.strip() for s in re.split(r"(?<=[.!?])\s+", answer_of(body)) if s.strip()]}
    if kind == "rubric":  # score 1 when every sentence of the answer is in a passage
        texts = [t.lower() for _, t in passages_of(body)]
        sentences = [s.strip().rstrip(".").lower() for s in re.split(r"(?<=[.!?])\s+", rubric_answer_of(body))]
        missing = [s for s in sentences if s and not any(s in t for t in texts)]
        return {
            "score": 0 if missing else 1,
            "reason": f"not in the passages: {missing[0]}" if missing else "all found",
        }
    claim = claim_of(body).rstrip(".")
    for pid, text in passages_of(body):
        i = text.lower().find(claim.lower())
        if i >= 0:
            return {"verdict": "supported", "evidence": text[i : i + len(claim)], "passage_id": pid, "reason": "quoted"}
    return {"verdict": "unsupported", "evidence": "", "passage_id": "", "reason": "not found"}


class FakeAnthropic:
    def __init__(self, *, delay=0.0, handler=None, batch_polls=1, min_cache_tokens=None, report_ttl=True):
        self.delay, self.handler, self.batch_polls = delay, handler or default_handler, batch_polls
        self.report_ttl = report_ttl
        self.min_cache_tokens = min_cache_tokens or {}
        self.events = []  # ("arrive" | "reply", prefix key or None): the order the cache depends on
        self.requests, self.script, self.batches = [], deque(), {}
        self.gate = None  # a Gate, or None: every call answered at once
        self.billed = []  # every reply produced: {"kind", "about", "usage"}
        self.active = self.peak = 0  # /v1/messages calls being answered now, and the most at once
        self.lock = threading.Condition()
        self.readable = set()  # cached prefixes a request can read

    # -- lifecycle
    def start(self, port=0):
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self.server = _Server(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self):
        if self.gate:
            self.gate.release()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- what tests read
    def message_calls(self, kind=None):
        with self.lock:
            calls = [r["body"] for r in self.requests if r["path"] == "/v1/messages" and r["method"] == "POST"]
        return [b for b in calls if kind is None or kind_of(b) == kind]

    def wait_idle(self, limit=60.0):
        """Wait until no /v1/messages call is being answered (held ones included)."""
        with self.lock:
            return self.lock.wait_for(lambda: self.active == 0, timeout=limit)

    def bill(self, prices, start=0, end=None):
        """Tokens by usage field and dollars (prices: USD per million tokens) of billed[start:end];
        batch replies at half price. cache_write counts every write, the 1-hour ones at cache_write_1h."""
        tokens, usd = dict.fromkeys(("input", "output", "cache_write", "cache_read"), 0), 0.0
        with self.lock:
            for entry in self.billed[start:end]:
                u = entry["usage"]
                one_hour = u["cache_write"] if entry["ttl"] == "1h" else 0
                for k in tokens:
                    tokens[k] += u[k]
                dollars = sum(u[k] * prices[k] for k in tokens) - one_hour * prices["cache_write"]
                dollars += one_hour * prices["cache_write_1h"] if one_hour else 0
                usd += dollars / 1e6 * (0.5 if entry["batch"] else 1.0)
        return tokens, usd

    # -- replies
    def reply_for(self, body, batch=False):
        with self.lock:
            scripted = self.script.popleft() if self.script else None
        reply = scripted if scripted is not None else self.handler(kind_of(body), body)
        if isinstance(reply, FakeError):
            return reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return self.message(body, text, batch)

    def prefix(self, body):
        """(key, tokens, ttl) of the cacheable prefix, or (None, 0, None): no breakpoint, or under the minimum."""
        system = body.get("system", "")
        blocks = system if isinstance(system, list) else []
        marked = [i for i, b in enumerate(blocks) if b.get("cache_control")]
        if not marked:
            return None, 0, None
        head = blocks[: marked[-1] + 1]
        tokens = sum(len(b["text"]) for b in head) // 4
        if tokens < self.min_cache_tokens.get(body["model"], 0):
            return None, 0, None
        key = hashlib.sha256(json.dumps([body["model"], head], sort_keys=True).encode()).hexdigest()
        return key, tokens, head[-1]["cache_control"].get("ttl", "5m")

    def message(self, body, text, batch=False):
        key, cached, ttl = self.prefix(body)
        system = body.get("system", "")
        everything = (len(system) if isinstance(system, str) else sum(len(b["text"]) for b in system)) // 4
        everything += len(json.dumps(body["messages"])) // 4
        with self.lock:
            hit = key in self.readable
        stop = "end_turn"
        if len(text) // 4 > body["max_tokens"]:  # the model stops at max_tokens, mid-output
            text, stop = text[: body["max_tokens"] * 4], "max_tokens"
        usage = {
            "input": everything - cached,
            "output": max(1, len(text) // 4),
            "cache_write": 0 if hit else cached,
            "cache_read": cached if hit else 0,
        }
        one_hour = usage["cache_write"] if ttl == "1h" else 0
        split = {"ephemeral_5m_input_tokens": usage["cache_write"] - one_hour, "ephemeral_1h_input_tokens": one_hour}
        with self.lock:
            self.billed.append(
                {
                    "kind": kind_of(body),
                    "about": body["messages"][0]["content"],
                    "usage": usage,
                    "batch": batch,
                    "ttl": ttl,  # of the cache write, None without a cacheable breakpoint
                }
            )
            if key:  # the response begins now: later requests can read the prefix
                self.readable.add(key)
                self.events.append(("reply", key))
        return {
            "id": f"msg_{hashlib.sha256(text.encode()).hexdigest()[:12]}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage["input"],
                "output_tokens": usage["output"],
                "cache_creation_input_tokens": usage["cache_write"],
                "cache_read_input_tokens": usage["cache_read"],
                **({"cache_creation": split} if self.report_ttl else {}),
            },
        }

    def batch(self, batch_id):
        b = self.batches[batch_id]
        ended = b["polls"] >= self.batch_polls
        n = len(b["requests"])
        return {
            "id": batch_id,
            "type": "message_batch",
            "created_at": "2026-11-20T10:00:00Z",
            "expires_at": "2026-11-21T10:00:00Z",
            "archived_at": None,
            "cancel_initiated_at": None,
            "ended_at": "2026-11-20T10:01:00Z" if ended else None,
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def batch_results(self, batch_id):
        lines = []
        for req in self.batches[batch_id]["requests"]:
            reply = self.reply_for(req["params"], batch=True)
            if isinstance(reply, FakeError):
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {
                            "type": ERROR_TYPES.get(reply.status, "api_error"),
                            "message": f"fake {reply.status}",
                        },
                    },
                }
            else:
                result = {"type": "succeeded", "message": reply}
            lines.append(json.dumps({"custom_id": req["custom_id"], "result": result}))
        return ("\n".join(lines) + "\n").encode()


def kind_of(body):
    properties = body.get("output_config", {}).get("format", {}).get("schema", {}).get("properties", {})
    return "decompose" if "claims" in properties else "rubric" if "score" in properties else "verify"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 stalls 32 clients connecting at once


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    disable_nagle_algorithm = True  # headers and body go as two writes: no 40 ms delayed-ACK stall
    server_fake = None

    def log_message(self, *args):
        pass

    def _send(self, status, payload, headers=None, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body=None):
        fake = self.server_fake
        with fake.lock:
            fake.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body,
                    "raw": getattr(self, "raw_body", b""),
                }
            )

    def do_POST(self):
        self.raw_body = self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.loads(self.raw_body or b"{}")
        self._record(body)
        fake = self.server_fake
        if self.path == "/v1/messages":
            with fake.lock:
                fake.active += 1
                fake.peak = max(fake.peak, fake.active)
            try:
                self._answer(fake, body)
            finally:
                with fake.lock:
                    fake.active -= 1
                    fake.lock.notify_all()
            return
        if self.path == "/v1/messages/batches":
            with fake.lock:
                batch_id = f"msgbatch_{len(fake.batches) + 1:04d}"
                fake.batches[batch_id] = {"requests": body["requests"], "polls": 0}
            return self._send(200, fake.batch(batch_id))
        self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def _answer(self, fake, body):
        with fake.lock:
            fake.events.append(("arrive", fake.prefix(body)[0]))
        if fake.gate:
            fake.gate.admit()
        if fake.delay:
            time.sleep(fake.delay)
        reply = fake.reply_for(body)
        if isinstance(reply, FakeError):
            err = {
                "type": "error",
                "error": {"type": ERROR_TYPES.get(reply.status, "api_error"), "message": f"fake {reply.status}"},
            }
            return self._send(reply.status, err, {"retry-after-ms": reply.retry_after_ms})
        with suppress(OSError):  # billed even when the client stopped waiting (timed out, killed)
            self._send(200, reply)

    def do_GET(self):
        self._record()
        fake = self.server_fake
        m = re.fullmatch(r"/v1/messages/batches/(\w+)(/results)?", self.path.split("?")[0])
        if not m or m.group(1) not in fake.batches:
            return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
        if m.group(2):
            return self._send(200, fake.batch_results(m.group(1)), content_type="application/binary")
        with fake.lock:
            fake.batches[m.group(1)]["polls"] += 1
        self._send(200, fake.batch(m.group(1)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per /v1/messages call")
    parser.add_argument("--min-cache-tokens", default="{}", help='JSON, e.g. {"claude-sonnet-5-5": 1024}')
    args = parser.parse_args()
    fake = FakeAnthropic(delay=args.delay, min_cache_tokens=json.loads(args.min_cache_tokens)).start(args.port)
    print(fake.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
