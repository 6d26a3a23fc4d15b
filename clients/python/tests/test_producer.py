"""The producer against a real server: what it posts, big integers and key order kept, idempotency,
track as a context manager and as a decorator."""
import json
import unittest

from horologium import CallIdConflictError, HorologiumRequestError, Producer, QueueConsumer, raw_json

from .servers import RealServer

BIG = '{"n":123456789012345678901234567890,"z":1,"a":[1.0,-0,1e400]}'


class ProducerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RealServer()
        cls.producer = Producer(cls.server.url, retries=2)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def entries(self, session: str) -> list:
        return self.server.get(f"/v1/sessions/{session}/queue?after=0")["entries"]

    def test_a_raw_json_result_reaches_the_queue_byte_for_byte(self) -> None:
        reply = self.producer.tool_result("raw", "c1", "grep", raw_json(BIG))
        self.assertEqual((reply["queue_seq"], reply["duplicate"]), (1, False))
        text = self.server.get_text("/v1/sessions/raw/queue?after=0")
        self.assertIn(f'"result":{BIG}', text, "the result member is the text that was sent")
        self.assertEqual(self.entries("raw")[0]["message"]["content"], BIG)

    def test_python_values_keep_big_integers_and_key_order(self) -> None:
        value = {"z": 1, "big": 2**100, "a": "é😀", "nested": {"b": [1, 2], "a": None}}
        self.producer.tool_result("py", "c1", "grep", value)
        entry = self.entries("py")[0]
        self.assertEqual(entry["result"], value)
        self.assertEqual(list(entry["result"]), ["z", "big", "a", "nested"])
        self.assertEqual(entry["message"]["content"], json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    def test_tool_call_then_result_is_one_call(self) -> None:
        started = self.producer.tool_call("pair", None, "read_file", {"path": "a.txt"})
        self.assertFalse(started["duplicate"])
        self.assertEqual(len(started["call_id"]), 36, "a generated UUID")
        self.producer.tool_result("pair", started["call_id"], "read_file", {"content": "x"})
        events = self.server.get("/v1/sessions/pair/events?after=0")["events"]
        self.assertEqual([e["result"]["type"] for e in events], ["tool_starting", "tool_completed"])
        completed = events[1]["result"]["data"]
        self.assertEqual(completed["arguments"], {"path": "a.txt"}, "the call's args, from tool_starting")
        self.assertIsInstance(completed["execution_time"], float, "measured by the server")

    def test_repeats_are_duplicates_and_changes_are_conflicts(self) -> None:
        first = self.producer.tool_result("idem", "c1", "grep", {"a": 1})
        again = self.producer.tool_result("idem", "c1", "grep", {"a": 1})
        self.assertEqual((again["duplicate"], again["queue_seq"]), (True, first["queue_seq"]))
        with self.assertRaises(CallIdConflictError) as caught:
            self.producer.tool_result("idem", "c1", "grep", {"a": 2})
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.call_id), (409, "CALL_ID_CONFLICT", "c1"))
        self.assertEqual(len(self.entries("idem")), 1, "nothing stored twice")

    def test_events_are_idempotent_by_event_id(self) -> None:
        first = self.producer.event("ev", "thinking", {"text": "hm"}, event_id="e-1")
        again = self.producer.event("ev", "thinking", {"text": "hm"}, event_id="e-1")
        self.assertEqual((again["duplicate"], again["event_seq"]), (True, first["event_seq"]))
        other = self.producer.event("ev", "thinking", {"text": "hm"})
        self.assertEqual((other["duplicate"], other["event_seq"]), (False, first["event_seq"] + 1), "a new event_id each call")
        with self.assertRaises(HorologiumRequestError) as caught:
            self.producer.event("ev", "thinking", {"text": "other"}, event_id="e-1")
        self.assertEqual(caught.exception.code, "EVENT_ID_CONFLICT")

    def test_a_refused_body_raises_with_the_server_code_and_is_not_retried(self) -> None:
        attempts = []
        producer = Producer(self.server.url, retries=5, on_retry=attempts.append)
        with self.assertRaises(HorologiumRequestError) as caught:
            producer.event("bad", "tool_completed", {})
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "RESERVED_EVENT_TYPE"))
        self.assertEqual(attempts, [])
        with self.assertRaises(HorologiumRequestError) as caught:
            producer.tool_result("bad", "c1", "grep", raw_json("{not json"))
        self.assertEqual(caught.exception.code, "INVALID_JSON")

    def test_track_as_a_context_manager(self) -> None:
        with self.producer.track("track", "grep", {"q": "x"}) as call:
            call.result = {"matches": 3}
        with self.assertRaises(ValueError):
            with self.producer.track("track", "grep", {"q": "y"}):
                raise ValueError("no such file")
        entries = self.entries("track")
        self.assertEqual([(e["result"], e["is_error"]) for e in entries], [({"matches": 3}, False), ({"error": "no such file"}, True)])
        self.assertTrue(all(isinstance(e["execution_time"], float) for e in entries), "measured around the body")
        self.assertEqual(entries[0]["call_id"], call.call_id)

    def test_track_as_a_decorator(self) -> None:
        @self.producer.track("deco", "add")
        def add(a: int, b: int = 2) -> int:
            return a + b

        self.assertEqual(add(40), 42)
        self.assertEqual(add(1, b=1), 2)
        entries = self.entries("deco")
        self.assertEqual([e["result"] for e in entries], [42, 2])
        self.assertEqual([e["args"] for e in entries], [{"a": 40, "b": 2}, {"a": 1, "b": 1}])
        self.assertNotEqual(entries[0]["call_id"], entries[1]["call_id"], "a call_id per run")


class ConsumerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RealServer()
        cls.producer = Producer(cls.server.url)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_the_loop_acknowledges_what_it_consumed(self) -> None:
        for k in range(1, 4):
            self.producer.tool_result("q", f"c{k}", "grep", raw_json(f'{{"k":{k},"big":98765432109876543210}}'))
        seen = []
        for entry in QueueConsumer(self.server.url, "q", wait=0):
            seen.append(entry)
            if entry["queue_seq"] == 2:
                break
        self.assertEqual([e["queue_seq"] for e in seen], [1, 2])
        self.assertEqual(seen[0]["result"]["big"], 98765432109876543210)
        self.assertEqual(seen[0]["message"]["content"], '{"k":1,"big":98765432109876543210}')
        self.assertEqual(self.server.get("/v1/sessions/q/queue")["committed"], 1, "the entry before the last one given")
        rest = []
        consumer = QueueConsumer(self.server.url, "q", wait=0)
        for entry in consumer:
            rest.append(entry["queue_seq"])
            if entry["queue_seq"] == 3:
                consumer.close()
        self.assertEqual(rest, [2, 3], "the unacknowledged entry is handed out again")
        self.assertEqual(self.server.get("/v1/sessions/q/queue")["committed"], 3)

    def test_a_long_poll_returns_what_arrives_meanwhile(self) -> None:
        import threading

        consumer = QueueConsumer(self.server.url, "lp", ack="manual", wait=10)
        timer = threading.Timer(0.3, lambda: self.producer.tool_result("lp", "c1", "grep", {"late": True}))
        timer.start()
        batch = consumer.read()
        timer.join()
        self.assertEqual([e["result"] for e in batch["entries"]], [{"late": True}])
        self.assertEqual(consumer.ack(1), 1)

    def queue_reads(self) -> int:
        """Reads the server answered on the queue route, from its own metrics."""
        import re
        import urllib.request

        with urllib.request.urlopen(self.server.url + "/metrics", timeout=10) as reply:
            text = reply.read().decode()
        pattern = r'^horologium_http_requests_total\{route="/v1/sessions/:session/queue",method="GET",status="200"\} (\d+)$'
        return sum(int(m) for m in re.findall(pattern, text, re.M))

    def test_an_idle_consumer_with_wait_0_backs_off(self) -> None:
        import threading
        import time

        consumer = QueueConsumer(self.server.url, "idle", wait=0)
        seen = []
        loop = threading.Thread(target=lambda: seen.extend(e["queue_seq"] for e in consumer))
        before = self.queue_reads()
        loop.start()
        time.sleep(3)
        reads = self.queue_reads() - before
        self.assertTrue(0 < reads <= 30, f"{reads} reads in 3 s on an empty queue (at most 10 a second)")
        self.producer.tool_result("idle", "c1", "grep", {"n": 1})
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)
        consumer.close()
        loop.join(10)
        self.assertFalse(loop.is_alive(), "close() ends the loop")
        self.assertEqual(seen, [1], "the new entry arrives within the longest pause")

    def test_until_empty_ends_the_loop_once_the_queue_is_drained(self) -> None:
        for k in range(1, 4):
            self.producer.tool_result("drain", f"c{k}", "grep", {"k": k})
        seen = [e["queue_seq"] for e in QueueConsumer(self.server.url, "drain", wait=0, until_empty=True)]
        self.assertEqual(seen, [1, 2, 3])
        self.assertEqual(self.server.get("/v1/sessions/drain/queue")["committed"], 3)
        self.assertEqual([e for e in QueueConsumer(self.server.url, "drain", wait=0, until_empty=True)], [])


if __name__ == "__main__":
    unittest.main()
