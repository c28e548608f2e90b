#!/usr/bin/python3
"""A webhook receiver for tests, written independently of gatewayd (standard library only).

    webhook-receiver.py --secret S [--port 0] [--responses 503,503,200] [--retry-after 2]

Listens on 127.0.0.1, prints {"listening": port}, then one JSON line per POST with what it
received, whether the X-Gateway-Signature checks out (HMAC-SHA256 of the raw body bytes),
and the status it answered. Statuses come from --responses in order, the last one repeating;
a request with a bad signature gets 401 and does not use up a scripted status.
Exits when stdin closes, so it never outlives the test that started it.
"""
import argparse
import hashlib
import hmac
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEADERS = ("content-type", "x-gateway-signature", "x-gateway-delivery", "x-gateway-event", "user-agent")

args = None
lock = threading.Lock()
next_index = 0


def emit(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def signature_ok(body, header):
    if not header:
        return False
    expected = "sha256=" + hmac.new(args.secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    # Header values arrive decoded as latin-1; compare bytes so odd input cannot raise.
    return hmac.compare_digest(expected.encode("ascii"), header.encode("latin-1"))


def scripted_status():
    global next_index
    with lock:
        status = args.responses[min(next_index, len(args.responses) - 1)]
        next_index += 1
    return status


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so a stopped receiver leaves no pooled sockets behind.
    protocol_version = "HTTP/1.0"

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        body = self.read_body()
        ok = signature_ok(body, self.headers.get("X-Gateway-Signature"))
        status = scripted_status() if ok else 401
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        reply = b"bad signature\n" if status == 401 else json.dumps({"status": status}).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if status == 401 else "application/json")
        self.send_header("Content-Length", str(len(reply)))
        if args.retry_after is not None and status in (429, 503):
            self.send_header("Retry-After", str(args.retry_after))
        if 300 <= status < 400:
            # Somewhere a sender that follows redirects would go; it shows up as its own POST.
            self.send_header("Location", "/redirected")
        self.end_headers()
        self.wfile.write(reply)
        emit({
            "path": self.path,
            "headers": {h: self.headers[h] for h in HEADERS if self.headers[h] is not None},
            "body": body.decode("utf-8", errors="replace"),
            "signature_ok": ok,
            "json": parsed,
            "status": status,
        })

    def do_GET(self):
        self.send_error(405)

    def log_message(self, *a):
        pass  # stdout is the protocol; keep stderr quiet


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--secret", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--responses", default="200", type=lambda s: [int(x) for x in s.split(",") if x.strip()])
    p.add_argument("--retry-after", dest="retry_after")
    args = p.parse_args()
    if not args.responses:
        args.responses = [200]
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    emit({"listening": server.server_address[1]})

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
