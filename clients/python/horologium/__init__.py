"""Horologium's Python client (standard library only, Python 3.9+).

``Producer`` posts tool calls, tool results and other status events; ``QueueConsumer`` reads a
session's model queue and acknowledges what was consumed. Both retry what is worth retrying (the
server unreachable, a timeout, 429 and 503 with their ``Retry-After``, a proxy's 502 or 504) with
full-jitter backoff, and raise ``HorologiumRequestError`` with the server's error code otherwise.
"""
from ._http import CallIdConflictError, HorologiumRequestError
from ._json import RawJson, raw_json
from .consumer import QueueConsumer
from .producer import Producer, TrackedCall

__all__ = [
    "CallIdConflictError",
    "HorologiumRequestError",
    "Producer",
    "QueueConsumer",
    "RawJson",
    "TrackedCall",
    "raw_json",
]
