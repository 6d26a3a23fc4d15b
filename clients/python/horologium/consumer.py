"""The model-side queue consumer: an iterator over a session's queue entries, long-polling for more.

It starts from the committed cursor and acknowledges what the loop has consumed (``ack="batch"``,
the default: see ``__iter__`` for exactly which entries count) or leaves it to ``ack`` (``"manual"``).
Reads are retried like every request, so the iteration goes on across a server restart; what was
acknowledged is never handed out again, and what was not is handed out again only to a new consumer.
A read that finds nothing without having waited (``wait=0``, or the server answered early) is
followed by a pause, from 0.1 s doubling to 2 s and reset by the next entry, so an idle consumer never
floods the server; ``until_empty=True`` ends the iteration instead.
"""
import json
import threading
import time
from typing import Iterator, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode

from ._http import HttpClient, Token

#: The pause after an empty read that did not wait: the first and the longest, in seconds.
_IDLE_PAUSE_FIRST = 0.1
_IDLE_PAUSE_MAX = 2.0


class QueueConsumer:
    """``QueueConsumer(url, session, token=None, ack="batch", wait=30, limit=100, after=None, until_empty=False)``.

    With ``until_empty=True`` the iteration ends at the first read that finds no entry (the queue is
    drained).

    Each entry is a dict as the server sends it: ``result`` and ``args`` parsed (integers exact, as
    Python's are), and ``message``, the ``role: "tool"`` message whose ``content`` is the result's
    JSON text byte for byte.
    """

    def __init__(
        self,
        url: Union[str, Sequence[str]],
        session: str,
        token: Token = None,
        *,
        ack: str = "batch",
        wait: float = 30,
        limit: int = 100,
        after: Optional[int] = None,
        until_empty: bool = False,
        timeout: float = 30.0,
        retries: int = 8,
        backoff: Tuple[float, float] = (0.1, 5.0),
    ) -> None:
        if ack not in ("batch", "manual"):
            raise ValueError('ack is "batch" or "manual"')
        self._http = HttpClient(url, token, timeout, retries, backoff)
        self._path = f"/v1/sessions/{quote(session, safe='')}/queue"
        self._auto = ack == "batch"
        self._wait = wait
        self._limit = limit
        #: The last queue_seq handed out; None until the first read (then the server's committed cursor).
        self._position = after
        self._until_empty = until_empty
        #: Set by close(): ends a pause between reads at once.
        self._closing = threading.Event()

    def read(self, wait: Optional[float] = None) -> dict:
        """One read: entries after the position (or the committed cursor), waiting up to ``wait`` seconds."""
        wait = self._wait if wait is None else wait
        query = {"limit": str(self._limit), "wait": str(wait)}
        if self._position is not None:
            query["after"] = str(self._position)
        _, text = self._http.request("GET", f"{self._path}?{urlencode(query)}", extra_timeout=float(wait))
        batch = json.loads(text)
        if self._position is not None and batch["head"] < self._position:
            # The queue is behind where this consumer was: the session was deleted and began again.
            self._position = batch["committed"]
            return self.read(0)
        entries = batch["entries"]
        self._position = entries[-1]["queue_seq"] if entries else max(self._position or 0, batch["committed"])
        return batch

    def ack(self, queue_seq: int) -> int:
        """Commits the cursor through ``queue_seq`` (monotonic on the server); returns the committed cursor."""
        _, text = self._http.request("POST", f"{self._path}/ack", json.dumps({"through": queue_seq}).encode())
        return json.loads(text)["committed"]

    def close(self) -> None:
        """Ends the iteration once the read in progress returns (at most ``wait`` seconds)."""
        self._closing.set()

    def __iter__(self) -> Iterator[dict]:
        """The entries, long-polling for more.

        An entry counts as consumed once the loop asks for the one after it; a whole batch is
        acknowledged when the loop asks for more after its last entry. When the loop ends early
        (``break``, ``return`` or an exception in its body), the entries before the last one it was
        given are acknowledged; the last one is not, since the iterator cannot tell a break after
        handling it from an exception while handling it: ``ack(entry["queue_seq"])`` before leaving
        when it is done, or the next consumer gets it again (at least once).
        """
        done = acked = 0
        pause = 0.0
        try:
            while not self._closing.is_set():
                asked = time.monotonic()
                batch = self.read()
                for entry in batch["entries"]:
                    yield entry
                    done = entry["queue_seq"]
                if self._auto and done > acked:
                    self.ack(done)
                    acked = done
                if batch["entries"]:
                    pause = 0.0
                elif self._until_empty:
                    return
                elif self._wait == 0 or time.monotonic() - asked < self._wait:
                    # Nothing, and the server did not hold the read for ``wait``: asking again at once would spin.
                    pause = min(_IDLE_PAUSE_FIRST if pause == 0 else pause * 2, _IDLE_PAUSE_MAX)
                    self._closing.wait(pause)
        finally:
            if self._auto and done > acked:
                try:
                    self.ack(done)
                except Exception:
                    # Best effort: if this acknowledgement fails, those entries are handed out again.
                    pass
