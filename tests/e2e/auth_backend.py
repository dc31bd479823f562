#!/usr/bin/env python3
"""A small auth backend for the A-6/A-7 tests: a real HTTP server the node calls.

POST /auth with the node's JSON. The viewer's token decides the answer:
  allow-<login>   200 {"login": <login>}
  deny            403 {"reason": "not_subscribed"}
  slow-...        waits 3 s, then 200 (the node's deadline is shorter)
  broken...       200 with a body that is not the protocol's
  anything else   200 {} (admitted, no login)
Every answer waits --delay seconds first (answers that take time, so that concurrent first
requests of a session overlap). GET /calls returns {"session_id": number of calls}, and
{"max_in_flight": n} the most calls it held at once.
With --tls CERT KEY it answers over HTTPS. Binds 127.0.0.1 port 0 and prints
`READY {"port": N}` on stdout.
"""
import argparse
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

calls = {}
lock = threading.Lock()
in_flight = 0
max_in_flight = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            body = {"calls": dict(calls), "max_in_flight": max_in_flight}
        self.answer(200, body)

    def do_POST(self):
        global in_flight, max_in_flight
        length = int(self.headers.get("Content-Length", "0"))
        query = json.loads(self.rfile.read(length) or b"{}")
        with lock:
            calls[query.get("session_id", "")] = calls.get(query.get("session_id", ""), 0) + 1
            in_flight += 1
            max_in_flight = max(max_in_flight, in_flight)
        try:
            time.sleep(self.server.delay)
            token = query.get("token", "")
            if token.startswith("allow-"):
                self.answer(200, {"login": token[len("allow-"):], "dvr": True})
            elif token == "deny":
                self.answer(403, {"reason": "not_subscribed"})
            elif token.startswith("slow-"):
                time.sleep(3)
                self.answer(200, {})
            elif token.startswith("broken"):
                self.answer(200, "yes, sure")
            else:
                self.answer(200, {})
        finally:
            with lock:
                in_flight -= 1


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # listen(2)'s backlog: the node opens a hundred calls at once


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.delay = args.delay
    print("READY " + json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
