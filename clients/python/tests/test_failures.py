"""What the client does on each failure (docs/sdk-and-cli.md, "What each SDK does on each failure"),
against a scripted stub server: the same rules as the JavaScript SDK."""
import json
import time
import unittest

from horologium import HorologiumRequestError, Producer

from .servers import RealServer, StubServer, free_port

ACCEPTED = (202, {}, {"event_seq": 1})


def envelope(code: str, message: str = "no") -> dict:
    return {"error": {"code": code, "message": message}}


class FailureTest(unittest.TestCase):
    def stub(self, replies, hang: float = 2.0) -> StubServer:
        server = StubServer(replies, hang)
        self.addCleanup(server.stop)
        return server

    def test_503_and_429_are_retried_after_their_retry_after_with_the_same_body(self) -> None:
        stub = self.stub([(503, {"retry-after": "0"}, envelope("SHUTTING_DOWN")), (429, {"retry-after": "1"}, envelope("RATE_LIMITED")), ACCEPTED])
        retries = []
        reply = Producer(stub.url, on_retry=retries.append).event("s", "note", {"a": 1})
        self.assertEqual(reply, {"event_seq": 1, "duplicate": False})
        self.assertEqual([r["delay"] for r in retries], [0.0, 1.0], "Retry-After honoured")
        bodies = {body for _, _, body, _ in stub.received}
        self.assertEqual((len(stub.received), len(bodies)), (3, 1), "one body (one event_id) for every attempt")

    def test_a_proxy_502_and_504_are_retried(self) -> None:
        stub = self.stub([(502, {}, "bad gateway"), (504, {}, "gateway timeout"), ACCEPTED])
        self.assertEqual(Producer(stub.url, backoff=(0.01, 0.01)).event("s", "note", {})["event_seq"], 1)

    def test_other_errors_raise_at_once_with_the_envelope_code(self) -> None:
        for status, code in [(400, "INVALID_BODY"), (401, "UNAUTHORIZED"), (403, "FORBIDDEN"), (413, "BODY_TOO_LARGE"), (500, "INTERNAL")]:
            stub = self.stub([(status, {}, envelope(code, "why")), ACCEPTED])
            with self.assertRaises(HorologiumRequestError) as caught:
                Producer(stub.url).event("s", "note", {})
            self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.message), (status, code, "why"))
            self.assertEqual(len(stub.received), 1, f"{status} is not retried")

    def test_an_error_without_the_envelope_is_named_by_its_status(self) -> None:
        stub = self.stub([(418, {}, "teapot")])
        with self.assertRaises(HorologiumRequestError) as caught:
            Producer(stub.url).event("s", "note", {})
        self.assertEqual((caught.exception.status, caught.exception.code), (418, "HTTP_418"))

    def test_an_unreachable_server_is_retried_then_raised_as_a_network_error(self) -> None:
        url = f"http://127.0.0.1:{free_port()}"
        retries = []
        with self.assertRaises(HorologiumRequestError) as caught:
            Producer(url, retries=2, backoff=(0.01, 0.01), on_retry=retries.append).event("s", "note", {})
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "NETWORK_ERROR"))
        self.assertEqual(len(retries), 2)

    def test_no_reply_within_the_timeout_is_retried_then_raised(self) -> None:
        stub = self.stub(["hang", "hang"], hang=1.0)
        started = time.monotonic()
        with self.assertRaises(HorologiumRequestError) as caught:
            Producer(stub.url, timeout=0.2, retries=1, backoff=(0.01, 0.01)).event("s", "note", {})
        self.assertEqual(caught.exception.code, "TIMEOUT")
        self.assertEqual(len(stub.received), 2)
        self.assertLess(time.monotonic() - started, 1.5)

    def test_a_connection_error_tries_the_next_url(self) -> None:
        stub = self.stub([ACCEPTED])
        dead = f"http://127.0.0.1:{free_port()}"
        self.assertEqual(Producer([dead, stub.url], backoff=(0.01, 0.01)).event("s", "note", {})["event_seq"], 1)

    def test_the_token_is_sent_as_a_bearer_and_may_be_a_function_asked_each_time(self) -> None:
        stub = self.stub([ACCEPTED, (503, {"retry-after": "0"}, envelope("SHUTTING_DOWN")), ACCEPTED])
        tokens = iter(["t-2", "t-3"])
        Producer(stub.url, token="t-1").event("s", "note", {})
        Producer(stub.url, token=lambda: next(tokens)).event("s", "note", {})
        self.assertEqual([auth for *_, auth in stub.received], ["Bearer t-1", "Bearer t-2", "Bearer t-3"])


PUBLISHER = "publisher-token-0123456789"
READER = "reader-token-0123456789ab"


class RealServerFailureTest(unittest.TestCase):
    """The rows a real server produces on demand: 429 with Retry-After under a rate limit, 401, 403."""

    @classmethod
    def setUpClass(cls) -> None:
        tokens = [{"token": PUBLISHER, "scopes": ["publish", "consume"], "sessions": ["*"]}, {"token": READER, "scopes": ["subscribe"], "sessions": ["*"]}]
        cls.server = RealServer(HOROLOGIUM_TOKENS=json.dumps(tokens), HOROLOGIUM_RATE_LIMIT="2")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_a_rate_limit_is_waited_out_and_nothing_is_stored_twice(self) -> None:
        retries = []
        producer = Producer(self.server.url, token=PUBLISHER, on_retry=retries.append)
        replies = [producer.event("rl", "step", {"k": k}) for k in range(6)]
        self.assertEqual([r["event_seq"] for r in replies], [1, 2, 3, 4, 5, 6])
        self.assertTrue(any("per second" in r["reason"] for r in retries), "429s were retried")
        self.assertTrue(all(r["delay"] >= 0 for r in retries))

    def test_a_refused_token_and_a_missing_scope_raise_at_once(self) -> None:
        for token, status, code in [("not-a-token-at-all-0000", 401, "UNAUTHORIZED"), (READER, 403, "FORBIDDEN")]:
            retries = []
            with self.assertRaises(HorologiumRequestError) as caught:
                Producer(self.server.url, token=token, on_retry=retries.append).tool_result("auth", "c1", "grep", {})
            self.assertEqual((caught.exception.status, caught.exception.code, retries), (status, code, []))


if __name__ == "__main__":
    unittest.main()
