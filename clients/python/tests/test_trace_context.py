"""The active OpenTelemetry context goes with every request as W3C headers when the application uses
OpenTelemetry (docs/operations.md, "Traces"). opentelemetry-api cannot be installed where these tests
run (no PyPI), so a stand-in module with its API (``opentelemetry.propagate.inject(carrier)``) plays
the application's OpenTelemetry; the server side of the headers is tested in the JavaScript suite."""
import sys
import types
import unittest

from horologium import Producer

from .servers import StubServer

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
ACCEPTED = (202, {}, {"call_id": "c1", "queue_seq": 1, "event_seq": 1, "duplicate": False})


class TraceContextTest(unittest.TestCase):
    def stub(self) -> StubServer:
        server = StubServer([ACCEPTED, ACCEPTED])
        self.addCleanup(server.stop)
        return server

    def test_without_opentelemetry_no_trace_headers_are_sent(self) -> None:
        self.assertNotIn("opentelemetry", sys.modules)
        stub = self.stub()
        Producer(stub.url).tool_result("s", call_id="c1", name="grep", result="x")
        self.assertNotIn("traceparent", stub.headers[0])

    def test_with_opentelemetry_the_active_context_is_injected(self) -> None:
        injected = []

        def inject(carrier, context=None, setter=None) -> None:
            injected.append(context)
            carrier["traceparent"] = TRACEPARENT
            carrier["tracestate"] = "vendor=1"

        package = types.ModuleType("opentelemetry")
        propagate = types.ModuleType("opentelemetry.propagate")
        propagate.inject = inject
        package.propagate = propagate
        sys.modules.update({"opentelemetry": package, "opentelemetry.propagate": propagate})
        self.addCleanup(lambda: [sys.modules.pop(name, None) for name in ("opentelemetry", "opentelemetry.propagate")])
        stub = self.stub()
        Producer(stub.url).tool_result("s", call_id="c1", name="grep", result="x")
        self.assertEqual((stub.headers[0]["traceparent"], stub.headers[0]["tracestate"]), (TRACEPARENT, "vendor=1"))
        self.assertEqual(injected, [None], "the active context (inject's default)")


if __name__ == "__main__":
    unittest.main()
