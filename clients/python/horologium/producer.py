"""The producer: post a tool call, its result, or any other status event, and ``track`` a tool run.

Every post is retried (``_http.HttpClient``); tool calls and results are idempotent on the server by
``call_id``, and events by the ``event_id`` this client gives each of them (unless the caller gives
one), so a retry after a lost reply is answered ``duplicate: True`` and nothing is stored twice.
"""
import functools
import inspect
import json
import time
import uuid
from typing import Any, Callable, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from ._http import CallIdConflictError, HorologiumRequestError, HttpClient, Token
from ._json import RawJson, json_text_of, object_body

_ABSENT: Any = object()


class Producer:
    """Posts to one server (or several: connection errors try the next URL).

    ``Producer("http://127.0.0.1:8080", token="…")``; ``timeout`` is per attempt in seconds,
    ``retries`` the retries after the first attempt, ``backoff`` (initial, maximum) in seconds.
    """

    def __init__(
        self,
        url: Union[str, Sequence[str]],
        token: Token = None,
        *,
        timeout: float = 30.0,
        retries: int = 8,
        backoff: Tuple[float, float] = (0.1, 5.0),
        on_retry: Optional[Callable[[dict], None]] = None,
    ) -> None:
        self._http = HttpClient(url, token, timeout, retries, backoff, on_retry)

    def tool_call(self, session: str, call_id: Optional[str] = None, name: str = "", args: Any = _ABSENT) -> dict:
        """Publishes ``tool_starting``; a call_id is generated when None. Returns call_id, event_seq, duplicate."""
        call_id = call_id if call_id is not None else str(uuid.uuid4())
        body = object_body([
            ("call_id", json.dumps(call_id)),
            ("name", json.dumps(name)),
            ("args", None if args is _ABSENT else json_text_of(args)),
        ])
        reply = self._post(session, "tool-calls", body, call_id)
        return {"call_id": call_id, "event_seq": reply["event_seq"], "duplicate": reply.get("duplicate") is True}

    def tool_result(
        self,
        session: str,
        call_id: str,
        name: str,
        result: Any,
        is_error: bool = False,
        execution_time: Optional[float] = None,
        args: Any = _ABSENT,
    ) -> dict:
        """Commits the complete result to the model queue and publishes ``tool_completed``; idempotent by call_id.

        ``result`` may be a ``raw_json(text)``, sent byte for byte. ``execution_time`` in seconds is
        measured by the server from the tool call when None.
        """
        body = object_body([
            ("call_id", json.dumps(call_id)),
            ("name", json.dumps(name)),
            ("args", None if args is _ABSENT else json_text_of(args)),
            ("execution_time", None if execution_time is None else json.dumps(execution_time)),
            ("is_error", "true" if is_error else None),
            ("result", json_text_of(result)),
        ])
        return self._post(session, "tool-results", body, call_id)

    def event(self, session: str, type: str, data: Union[dict, RawJson], event_id: Optional[str] = None) -> dict:
        """Publishes any other status event; ``event_id`` (a new UUID when None) makes its retries idempotent."""
        body = object_body([
            ("type", json.dumps(type)),
            ("data", json_text_of(data)),
            ("event_id", json.dumps(event_id if event_id is not None else str(uuid.uuid4()))),
        ])
        reply = self._post(session, "events", body)
        return {"event_seq": reply["event_seq"], "duplicate": reply.get("duplicate") is True}

    def track(self, session: str, name: str, args: Any = _ABSENT, call_id: Optional[str] = None) -> "TrackedCall":
        """A tool run, as a context manager or a decorator: posts the call, runs the body, posts its result.

        As a context manager, set ``call.result`` inside the block (None when not set); an exception
        is posted as ``{"error": str(exc)}`` with ``is_error`` and raised again. As a decorator, the
        function's return value is the result, and its arguments are the call's ``args`` unless given.
        The execution time is measured around the body. If the call cannot be posted, the body does not run.
        """
        return TrackedCall(self, session, name, args, call_id)

    def _post(self, session: str, what: str, body: bytes, call_id: Optional[str] = None) -> dict:
        try:
            _, text = self._http.request("POST", f"/v1/sessions/{quote(session, safe='')}/{what}", body)
        except HorologiumRequestError as error:
            if error.code == "CALL_ID_CONFLICT" and call_id is not None:
                raise CallIdConflictError(call_id, error.message) from None
            raise
        return json.loads(text)


class TrackedCall:
    """One tracked tool run (``Producer.track``). ``result`` is what will be posted as its result."""

    def __init__(self, producer: Producer, session: str, name: str, args: Any, call_id: Optional[str]) -> None:
        self._producer = producer
        self._session = session
        self._name = name
        self._args = args
        self.call_id = call_id
        self.result: Any = None
        self._started = 0.0

    def __enter__(self) -> "TrackedCall":
        self.call_id = self._producer.tool_call(self._session, self.call_id, self._name, self._args)["call_id"]
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        elapsed = round(time.perf_counter() - self._started, 6)
        if error is not None:
            self._producer.tool_result(self._session, self.call_id, self._name, {"error": str(error)}, True, elapsed, self._args)
            return False
        self._producer.tool_result(self._session, self.call_id, self._name, self.result, False, elapsed, self._args)
        return False

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def run(*a: Any, **kw: Any) -> Any:
            args = self._args if self._args is not _ABSENT else _arguments_of(function, a, kw)
            call = TrackedCall(self._producer, self._session, self._name, args, None)
            with call:
                call.result = function(*a, **kw)
            return call.result

        return run


def _arguments_of(function: Callable, a: tuple, kw: dict) -> Any:
    """The call's arguments by name, as JSON (a value JSON cannot hold is sent as its repr)."""
    try:
        bound = inspect.signature(function).bind(*a, **kw)
        bound.apply_defaults()
        values = dict(bound.arguments)
    except (TypeError, ValueError):
        values = {"args": list(a), "kwargs": kw}
    return RawJson(json.dumps(values, ensure_ascii=False, separators=(",", ":"), default=repr))
