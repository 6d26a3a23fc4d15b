"""JSON text of values, and values given as JSON text (raw_json) to be sent byte for byte."""
import json
from typing import Any, List, Optional, Tuple


class RawJson:
    """JSON text sent as it is: a result already serialised, or one whose exact text matters."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"raw_json({self.text[:40]!r}{'…' if len(self.text) > 40 else ''})"


def raw_json(text: str) -> RawJson:
    """Marks JSON text to be sent as is. The server validates it; malformed text is a 400 INVALID_JSON."""
    if not isinstance(text, str) or text.strip() == "":
        raise TypeError("raw_json needs a non-empty JSON text")
    return RawJson(text)


def json_text_of(value: Any) -> str:
    """A RawJson's own text; anything else as compact JSON (Python's ints stay exact; NaN is refused)."""
    if isinstance(value, RawJson):
        return value.text
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def object_body(members: List[Tuple[str, Optional[str]]]) -> bytes:
    """A JSON object from members already in JSON text; members whose text is None are left out."""
    parts = [f"{json.dumps(key)}:{text}" for key, text in members if text is not None]
    return ("{" + ",".join(parts) + "}").encode("utf-8")
