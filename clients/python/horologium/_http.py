"""One HTTP request with a timeout, retried with full-jitter backoff on what is worth retrying.

The rules are the JavaScript SDK's (docs/sdk-and-cli.md, "What each SDK does on each failure"):
the server unreachable, a connection cut and a timeout are retried (trying the next base URL when
there are several), as are 429 and 503 (after their ``Retry-After``) and a proxy's 502 and 504.
Any other error reply raises ``HorologiumRequestError`` carrying the error envelope's code.
"""
import email.utils
import http.client
import json
import random
import socket
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: A Retry-After is honoured up to this many seconds; a longer one is the backoff ceiling's business.
MAX_RETRY_AFTER = 60.0

Token = Union[None, str, Callable[[], str]]


def inject_trace_context(headers: dict) -> None:
    """Adds the active OpenTelemetry context as W3C headers (traceparent, tracestate) when the
    application uses OpenTelemetry (opentelemetry-api, optional): the server makes each tool
    execution's span a child of the span active when the call was posted. An application that has
    not imported opentelemetry has no active span, so nothing is looked up then."""
    if "opentelemetry" not in sys.modules:
        return
    try:
        from opentelemetry import propagate
    except ImportError:
        return
    propagate.inject(headers)

class HorologiumRequestError(Exception):
    """An error reply, or a request that ran out of retries.

    ``status`` is the HTTP status (0 when no reply came); ``code`` the envelope's ``error.code``, or
    ``NETWORK_ERROR``, ``TIMEOUT`` or ``HTTP_<status>`` when there was no envelope.
    """

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class CallIdConflictError(HorologiumRequestError):
    """A call_id reused with a different name, args or result (409 CALL_ID_CONFLICT): never retried."""

    def __init__(self, call_id: str, message: str) -> None:
        super().__init__(409, "CALL_ID_CONFLICT", message)
        self.call_id = call_id


def full_jitter_delay(initial: float, maximum: float, attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (1, 2, …): random in [0, min(max, initial * 2^(attempt-1))]."""
    return random.uniform(0, min(maximum, initial * 2 ** max(0, attempt - 1)))


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if parsed is None:
            return None
        seconds = parsed.timestamp() - time.time()
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


def _error_of(status: int, text: str, what: str) -> HorologiumRequestError:
    try:
        envelope = json.loads(text)["error"]
        return HorologiumRequestError(status, str(envelope["code"]), str(envelope["message"]), envelope.get("details"))
    except (ValueError, KeyError, TypeError):
        return HorologiumRequestError(status, f"HTTP_{status}", f"{what}: HTTP {status}")


class _Failure:
    """An attempt that got no 2xx reply: the error, whether to retry, to try the next URL, and after how long."""

    __slots__ = ("error", "retry", "rotate", "retry_after")

    def __init__(self, error: HorologiumRequestError, retry: bool, rotate: bool = False, retry_after: Optional[float] = None) -> None:
        self.error = error
        self.retry = retry
        self.rotate = rotate
        self.retry_after = retry_after


class HttpClient:
    def __init__(
        self,
        url: Union[str, Sequence[str]],
        token: Token = None,
        timeout: float = 30.0,
        retries: int = 8,
        backoff: Tuple[float, float] = (0.1, 5.0),
        on_retry: Optional[Callable[[dict], None]] = None,
    ) -> None:
        urls: List[str] = [url] if isinstance(url, str) else list(url)
        if not urls:
            raise ValueError("at least one server URL is needed")
        self.urls = [u.rstrip("/") for u in urls]
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.on_retry = on_retry
        self._next = 0

    def request(self, method: str, path: str, body: Optional[bytes] = None, extra_timeout: float = 0.0) -> Tuple[int, str]:
        """A 2xx reply's status and text, after retries; anything else raises HorologiumRequestError."""
        attempt = 0
        while True:
            base = self.urls[self._next % len(self.urls)]
            outcome = self._attempt(base, method, path, body, self.timeout + extra_timeout)
            if not isinstance(outcome, _Failure):
                return outcome
            error, retry, rotate, retry_after = outcome.error, outcome.retry, outcome.rotate, outcome.retry_after
            if not retry or attempt >= self.retries:
                raise error
            attempt += 1
            if rotate:
                self._next += 1
            delay = retry_after if retry_after is not None else full_jitter_delay(self.backoff[0], self.backoff[1], attempt)
            if self.on_retry:
                self.on_retry({"attempt": attempt, "delay": delay, "reason": error.message, "url": base})
            time.sleep(delay)

    def _attempt(self, base: str, method: str, path: str, body: Optional[bytes], timeout: float) -> Union[Tuple[int, str], _Failure]:
        headers = {"accept": "application/json"}
        if body is not None:
            headers["content-type"] = "application/json"
        token = self.token() if callable(self.token) else self.token
        if token:
            headers["authorization"] = f"Bearer {token}"
        inject_trace_context(headers)
        request = urllib.request.Request(base + path, data=body, method=method, headers=headers)
        what = f"{method} {base}{path}"
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read().decode("utf-8")
        except urllib.error.HTTPError as reply:
            text = reply.read().decode("utf-8", errors="replace")
            error = _error_of(reply.code, text, f"{method} {path}")
            if reply.code not in RETRY_STATUSES:
                return _Failure(error, retry=False)
            return _Failure(error, retry=True, retry_after=_retry_after(reply.headers.get("retry-after")))
        except (socket.timeout, TimeoutError):
            return _Failure(HorologiumRequestError(0, "TIMEOUT", f"{what}: no reply within {timeout} s"), retry=True, rotate=True)
        except urllib.error.URLError as failure:
            if isinstance(failure.reason, (socket.timeout, TimeoutError)):
                return _Failure(HorologiumRequestError(0, "TIMEOUT", f"{what}: no reply within {timeout} s"), retry=True, rotate=True)
            return _Failure(HorologiumRequestError(0, "NETWORK_ERROR", f"{what}: {failure.reason}"), retry=True, rotate=True)
        except (ConnectionError, http.client.HTTPException, OSError) as failure:
            return _Failure(HorologiumRequestError(0, "NETWORK_ERROR", f"{what}: {failure}"), retry=True, rotate=True)
