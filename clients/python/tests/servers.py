"""Servers for the tests: the real Horologium server (a child process, as `npm start` runs it) and a
scripted stub for the failures a real server cannot be made to produce on demand (a 503 with
Retry-After, a proxy's 502, a reply that never comes)."""
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RealServer:
    """``node --import tsx src/server.ts`` on a free port with a store of its own (memory by default);
    ``settings`` are more environment variables (HOROLOGIUM_TOKENS=…)."""

    def __init__(self, store: str = "memory:", **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PORT": str(self.port), "HOROLOGIUM_STORE": store, "LOG_LEVEL": "warn", **settings}
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", "src/server.ts"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.process.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server did not start within 30 s")

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as reply:
            return json.loads(reply.read().decode())

    def get_text(self, path: str) -> str:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as reply:
            return reply.read().decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.process.stderr:
            self.process.stderr.close()


class StubServer:
    """Answers each request with the next scripted reply: (status, headers, body) or "hang" (no reply
    for ``hang`` seconds). Records what it received: (method, path, body, authorization), and each
    request's headers in ``headers``."""

    def __init__(self, replies, hang: float = 2.0) -> None:
        self.replies = list(replies)
        self.received = []
        self.headers = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                stub.received.append((self.command, self.path, self.rfile.read(length).decode(), self.headers.get("authorization")))
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = stub.replies.pop(0) if stub.replies else (500, {}, "no more replies")
                if reply == "hang":
                    time.sleep(hang)
                    return
                status, headers, body = reply
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = handle_one

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
