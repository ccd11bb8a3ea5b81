"""Fixture pages served on 127.0.0.1 for end-to-end tests, with request bookkeeping."""

import html
import threading
import time
from urllib.parse import parse_qs, urlsplit

from tests.helpers import LocalServer


class PageServer(LocalServer):
    def __init__(self):
        self.lock = threading.Condition()
        self.log = []  # (path, event, time)
        self.in_flight = {}
        self.max_in_flight = {}
        self.arrived = {}
        self.html = {}  # id -> body, registered by tests
        self.files = {}  # name -> local path, served at /static/<name>
        self.serve()

    def url(self, path, site=None):
        """A URL on 127.0.0.1, or on a named site (`a` -> a.test, `www.a` -> www.a.test, mapped
        to 127.0.0.1 by the test browser): another site gets its own renderer process."""
        host = f"{site}.test" if site else "127.0.0.1"
        return f"http://{host}:{self.port}{path}"

    def handle(self, request):
        parts = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        title = query.get("title", parts.path)
        body = ""
        with self.lock:
            self.log.append((request.path, "get", time.monotonic()))
        if parts.path == "/slow":  # holds the response; tracks overlap per group
            group = query.get("group", "")
            with self.lock:
                self.log.append((request.path, "start", time.monotonic()))
                self.in_flight[group] = self.in_flight.get(group, 0) + 1
                self.max_in_flight[group] = max(self.max_in_flight.get(group, 0), self.in_flight[group])
                self.lock.notify_all()
            time.sleep(float(query.get("wait", "0.3")))
            with self.lock:
                self.in_flight[group] -= 1
                self.log.append((request.path, "end", time.monotonic()))
        elif parts.path == "/barrier":  # answers once `n` requests of a group arrived (or 20 s)
            group, n = query.get("group", ""), int(query.get("n", "2"))
            with self.lock:
                self.arrived[group] = self.arrived.get(group, 0) + 1
                self.lock.notify_all()
                together = self.lock.wait_for(lambda: self.arrived[group] >= n, timeout=20)
            title = "together" if together else "alone"
        if parts.path in ("/echo-headers", "/auth", "/json", "/set-cookie", "/status"):
            self.api(request, parts.path, query)
            return
        if parts.path.startswith("/static/") and parts.path[len("/static/"):] in self.files:
            # A file a test registered (an editor library's built JS installed from npm).
            name = parts.path[len("/static/"):]
            with open(self.files[name], "rb") as fh:
                data = fh.read()
            request.send_response(200)
            kind = "text/css" if name.endswith(".css") else "text/javascript"
            request.send_header("Content-Type", f"{kind}; charset=utf-8")
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
            return
        if parts.path == "/see-other":  # a POST answered with 303 See Other (post/redirect/get)
            if "wait" in query:  # a server that takes its time over the POST
                time.sleep(float(query["wait"]))
            length = int(request.headers.get("Content-Length") or 0)
            posted = request.rfile.read(length).decode(errors="replace") if length else ""
            with self.lock:
                self.log.append((request.path, ("posted", posted), time.monotonic()))
            request.send_response(303)
            request.send_header("Location", query.get("to", "/html?title=after-post"))
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        if parts.path == "/attachment":  # a file download (Content-Disposition: attachment)
            data = query.get("content", "attachment body").encode()
            request.send_response(200)
            request.send_header("Content-Type", "application/octet-stream")
            request.send_header("Content-Disposition", f'attachment; filename="{query.get("name", "file.txt")}"')
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            request.wfile.write(data)
            return
        if parts.path.startswith("/corpus/"):
            from tests.corpus import CASES

            case = CASES.get(parts.path[len("/corpus/"):])
            if case:
                title, body = parts.path[len("/corpus/"):], case[0]
        elif parts.path == "/html":  # a page registered by a test
            title, body = query.get("title", "page"), self.html.get(query.get("id"), "")
        body = query.get("body", body)
        page = f"<!doctype html><html><head><title>{html.escape(title)}</title></head><body>{body}</body></html>"
        data = page.encode()
        request.send_response(200)
        request.send_header("Content-Type", "text/html; charset=utf-8")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def api(self, request, path, query):
        """Small JSON routes: request headers echoed (and logged as ("headers", dict)), a Basic
        auth challenge, a JSON body, a Set-Cookie, any status."""
        import base64
        import json

        headers = {k.lower(): v for k, v in request.headers.items()}
        length = int(headers.get("content-length") or 0)
        posted = request.rfile.read(length).decode(errors="replace") if length else None
        status, extra, payload = 200, [], {"ok": True}
        if path == "/echo-headers":
            payload = {"headers": headers, "method": request.command, "body": posted}
            with self.lock:
                self.log.append((request.path, ("headers", headers), time.monotonic()))
        elif path == "/auth":
            expected = "Basic " + base64.b64encode(query.get("cred", "ada:s3cret-pw").encode()).decode()
            if headers.get("authorization") == expected:
                payload = {"user": query.get("cred", "ada:s3cret-pw").split(":")[0]}
            else:
                status, payload = 401, {"ok": False}
                extra.append(("WWW-Authenticate", 'Basic realm="bp-test"'))
        elif path == "/set-cookie":
            extra.append(("Set-Cookie", f"{query.get('name', 'session')}={query.get('value', 'v1')}; Path=/"))
        elif path == "/status":
            status = int(query.get("code", "200"))
        elif path == "/json":
            payload = {"items": [1, 2, 3], "pad": "x" * int(query.get("pad", "0"))}
        data = json.dumps(payload).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        for name, value in extra:
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(data)

    def page(self, body, title="page", site=None):
        """Serve `body` at a fresh URL (on a named site if given); returns that URL."""
        import os

        key = os.urandom(6).hex()
        self.html[key] = body
        return self.url(f"/html?id={key}&title={title}", site)

    def wait_for_log(self, predicate, timeout=10):
        with self.lock:
            return self.lock.wait_for(lambda: predicate(self.log), timeout=timeout)

