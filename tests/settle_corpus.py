"""The settle corpus (issue 25): pages whose answer to one click (or one typed text) comes by a
different road — at once, a microtask, an animation frame, timers, fetches and XHR at several
delays, a failing fetch, a POST then a location change, a debounced search, a WebSocket answer —
and pages that stay busy on their own (SSE, WebSocket and long-poll open, a clock, an endless
CSS animation, a button's colour transition) that must not hold an action. Served on 127.0.0.1 by `SettleServer`; used by
tests/e2e/test_settle_corpus.py and tests/bench/bench_settle.py.

Each case: (body, action, expected) — the action is ("click", name of the button) or
("type", label, text); `expected` is the name of the element the page's answer adds (a button
"Answer ...") or None when the case checks only that the action is not held.
"""

import base64
import hashlib
import struct
import threading
import time
from urllib.parse import parse_qs, urlsplit

from tests.helpers import LocalServer

SHOW = """<script>
function show(text) { const b = document.createElement('button'); b.textContent = text; document.getElementById('out').appendChild(b); }
</script><div id=out></div>"""


def _click(handler, answer="Answer"):
    return SHOW + f'<button id=go onclick="{handler}">Go</button>', ("click", "Go"), answer


CASES = {
    "sync": _click("show('Answer')"),
    "microtask": _click("Promise.resolve().then(() => show('Answer'))"),
    "animation_frame": _click("requestAnimationFrame(() => show('Answer'))"),
    # How React's scheduler renders: a message posted on a MessageChannel.
    "message_channel": (SHOW + """<script>const channel = new MessageChannel();
        channel.port1.onmessage = () => show('Answer');</script>
        <button id=go onclick="channel.port2.postMessage(null)">Go</button>""", ("click", "Go"), "Answer"),
    "timer_40ms": _click("setTimeout(() => show('Answer'), 40)"),
    "timer_300ms": _click("setTimeout(() => show('Answer'), 300)"),
    # A library's next step from its own timer: the first timer's callback schedules the answer's
    # (as Bootstrap's modal shows its dialog, then moves focus in, each on a timer).
    "timer_chain": _click("setTimeout(() => setTimeout(() => show('Answer'), 200), 150)"),
    # A poll the click starts, re-arming itself for ever: awaited two levels deep, then not.
    "timer_poll": _click("show('Answer'); (function poll() { setTimeout(poll, 100); })()"),
    "fetch_100ms": _click("fetch('/api?wait=100').then(r => r.json()).then(() => show('Answer'))"),
    "fetch_400ms": _click("fetch('/api?wait=400').then(r => r.json()).then(() => show('Answer'))"),
    "fetch_2000ms": _click("fetch('/api?wait=2000').then(r => r.json()).then(() => show('Answer'))"),
    "xhr": _click("const x = new XMLHttpRequest(); x.open('GET', '/api?wait=300');"
                  " x.onload = () => show('Answer'); x.send()"),
    # Dash's shape: the page's handling of a caused answer takes a timer turn (its store observer's
    # `await wait(0)`) and only then sends the next request, whose answer changes the DOM. The
    # network says the first request ended before the page has handled it. (60 ms: no race decides.)
    "fetch_then_timer_then_fetch": _click(
        "fetch('/api?wait=50').then(r => r.json()).then(() => setTimeout(() =>"
        " fetch('/api?wait=50').then(r => r.json()).then(() => show('Answer')), 60))"),
    # Several task turns (zero-delay timers) between the answer and the next request: turns are
    # no levels (Dash's observer yields once per store change; a chain of them ran out of levels).
    "fetch_then_turns_then_fetch": _click(
        "const turn = (n, f) => n ? setTimeout(() => turn(n - 1, f), 0) : f();"
        " fetch('/api?wait=50').then(r => r.json()).then(() => turn(5, () => setTimeout(() =>"
        " fetch('/api?wait=50').then(r => r.json()).then(() => show('Answer')), 60)))"),
    # The same through XMLHttpRequest (axios resolves in onloadend).
    "xhr_then_timer_then_fetch": _click(
        "const x = new XMLHttpRequest(); x.open('GET', '/api?wait=50'); x.onloadend = () =>"
        " Promise.resolve().then(() => setTimeout(() => fetch('/api?wait=50').then(r => r.text())"
        ".then(() => show('Answer')), 60)); x.send()"),
    # A page that guards its fetch (a setter that throws): the tracker arms without it, the broker
    # still hears the request.
    "fetch_guarded": (SHOW + """<script>const own = window.fetch;
        Object.defineProperty(window, 'fetch', {get() { return own; }, set() { throw new Error('mine'); }});
        </script><button onclick="fetch('/api?wait=100').then(r => r.json()).then(() => show('Answer'))">Go</button>""",
                      ("click", "Go"), "Answer"),
    "failing_fetch": _click("fetch('/api?fail=1').catch(() => show('Answer'))"),
    "post_then_location": _click("fetch('/api?wait=200', {method: 'POST', body: 'x=1'})"
                                 ".then(() => { location.href = '/page?case=landed'; })", answer="Landed"),
    "debounced_search": (SHOW + """<input type=search aria-label=Search id=q><script>
        let t = null; const later = window.setTimeout.bind(window);  // its own reference: no wrapper sees it
        document.getElementById('q').addEventListener('input', () => { clearTimeout(t);
          t = later(() => fetch('/api?wait=150').then(r => r.json()).then(() => show('Answer')), 300); });
        </script>""", ("type", "Search", "shoes"), "Answer"),
    # The same debounce through the page's setTimeout at call time (lodash does so): the settle
    # sees the timer, no grace needed.
    "debounced_search_global": (SHOW + """<input type=search aria-label=Search id=q><script>
        let t = null;
        document.getElementById('q').addEventListener('input', () => { clearTimeout(t);
          t = setTimeout(() => fetch('/api?wait=150').then(r => r.json()).then(() => show('Answer')), 300); });
        </script>""", ("type", "Search", "shoes"), "Answer"),
    # A search box that answers nothing: what the grace costs.
    "search_noop": ("<input type=search aria-label=Search>", ("type", "Search", "shoes"), None),
    # The page says when its socket is open (data-ready): a click before that sends nothing.
    "websocket_answer": (SHOW + """<script>const ws = new WebSocket('ws://' + location.host + '/ws?delay=300');
        ws.onopen = () => { document.body.dataset.ready = '1'; };
        ws.onmessage = (e) => show('Answer'); </script><button onclick="ws.send('ask')">Go</button>""",
                         ("click", "Go"), "Answer"),
    "sse_open": (
        SHOW + """<script>new EventSource('/sse');</script><button onclick="show('Answer')">Go</button>""",
        ("click", "Go"), "Answer"),
    "websocket_open": (SHOW + """<script>const ws = new WebSocket('ws://' + location.host + '/ws?delay=0');
        ws.onopen = () => setInterval(() => ws.send('tick'), 200);</script>
        <button onclick="show('Answer')">Go</button>""", ("click", "Go"), "Answer"),
    "long_poll_open": (SHOW + """<script>fetch('/api?wait=60000');</script>
        <button onclick="show('Answer')">Go</button>""", ("click", "Go"), "Answer"),
    "clock": (SHOW + """<p id=clock>0</p><script>let n = 0;
        setInterval(() => { document.getElementById('clock').textContent = String(++n); }, 100);</script>
        <button onclick="show('Answer')">Go</button>""", ("click", "Go"), "Answer"),
    "css_animation": (SHOW + """<style>@keyframes spin { to { transform: rotate(360deg); } }
        .spin { animation: spin 1s linear infinite; width: 20px; height: 20px; background: #08f; }</style>
        <div class=spin></div><button onclick="show('Answer')">Go</button>""", ("click", "Go"), "Answer"),
    # Motion: a panel holding a field fades in, and the page answers when the fade ends (as
    # Bootstrap's modal moves focus then): the settle waits for the motion the click started.
    "fade_in_panel": (SHOW + """<style>.panel { opacity: 0; transition: opacity .4s linear; }
        .panel.open { opacity: 1; }</style><div class=panel id=panel><input aria-label=Name></div><script>
        document.getElementById('panel').addEventListener('transitionend', () => show('Answer'));</script>
        <button onclick="document.getElementById('panel').classList.add('open')">Go</button>""",
                      ("click", "Go"), "Answer"),
    # The button's own colour fading (after a delay) on hover and focus is no answer: not waited for
    # (LATE: its end must not be in the answer).
    "colour_transition": (SHOW + """<style>button { background: #eee; transition: background-color .3s linear .5s; }
        button:hover, button:focus { background: #08f; }</style><script>
        document.addEventListener('transitionend', () => show('Late'));</script>
        <button onclick="show('Answer')">Go</button>""", ("click", "Go"), "Answer"),
    # A toast the click adds slides in from above the viewport (Toastify's 0.4 s `top` transition):
    # out of view until its motion ends, it holds no control but is one (a pointer cursor).
    "toast_slides_in": (SHOW + """<button onclick="const t = document.createElement('div'); t.textContent = 'Answer';
        t.style.cssText = 'position:fixed;top:-150px;right:15px;cursor:pointer;padding:8px;transition:top .4s';
        document.body.appendChild(t); t.getBoundingClientRect(); t.style.top = '15px';">Go</button>""",
                        ("click", "Go"), "Answer"),
    # A ripple: an empty span the click adds, animating for 0.6 s: no answer (LATE: its end is not).
    "ripple": (SHOW + """<style>@keyframes grow { from { transform: scale(0) } to { transform: scale(2) } }
        .ripple { position: absolute; inset: 0; animation: grow .6s; pointer-events: none; }</style>
        <button style="position:relative" onclick="const r = document.createElement('span'); r.className = 'ripple';
        r.addEventListener('animationend', () => show('Late')); this.appendChild(r); show('Answer')">Go</button>""",
               ("click", "Go"), "Answer"),
    "noop": (SHOW + "<button>Go</button>", ("click", "Go"), None),
    "fetch_caused_noop_dom": _click("fetch('/api?wait=300')", answer=None),
}
# What a case's answer must not hold: the end of something the settle must not wait for.
LATE = {"colour_transition": "Late", "ripple": "Late"}
# Pages of the waits' tests (tests/e2e/test_settle_waits.py), not cases of the corpus.
PAGES = {
    "late_fetch": SHOW + "<script>fetch('/api?wait=4000').then(r => r.json()).then(() => show('Late answer'));</script>",
    "stream": SHOW + "<script>new EventSource('/sse');</script><p>streaming</p>",
    "clock": CASES["clock"][0],
    # A combobox whose value is the server's (NiceGUI's loopback): the chosen option goes over the
    # WebSocket and the combobox shows it when the server echoes it back.
    "echoed_select": """<div role=combobox id=cb tabindex=0 aria-label=Plan aria-expanded=false aria-controls=lb
        aria-haspopup=listbox><span id=shown>Free</span></div><ul role=listbox id=lb hidden>
        <li role=option>Free</li><li role=option>Team</li><li role=option>Pro</li></ul><script>
        const ws = new WebSocket('ws://' + location.host + '/ws?delay=300');
        ws.onopen = () => { document.body.dataset.ready = '1'; };
        ws.onmessage = (e) => { document.getElementById('shown').textContent = e.data; };
        const cb = document.getElementById('cb'), lb = document.getElementById('lb');
        cb.onclick = () => { lb.hidden = false; cb.setAttribute('aria-expanded', 'true'); };
        for (const o of lb.children) o.onclick = () => {
          lb.hidden = true; cb.setAttribute('aria-expanded', 'false'); ws.send('echo:' + o.textContent); };
        </script>""",
    "popup_opener": "<button onclick=\"window.open('/page?case=landed&delay=700')\">Open popup</button>",
}
# The same, but the list closes a moment after the click (as a menu's closing transition ends)
# and the echo comes later still: that closing reads as the frame's answer, so the settle ends
# before the echo and the readback must wait for it.
PAGES["echoed_select_late"] = PAGES["echoed_select"].replace("delay=300", "delay=700").replace(
    "lb.hidden = true;", "setTimeout(() => { lb.hidden = true; }, 100);")
# Pages reached by a case, not cases themselves.
LANDED = "<button>Landed</button>"


def _ws_accept(key):
    return base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()


def _ws_frame(text):
    data = text.encode()
    head = bytes([0x81])
    head += bytes([len(data)]) if len(data) < 126 else bytes([126]) + struct.pack(">H", len(data))
    return head + data


def _ws_read(rfile):
    """One client frame's text, or None at close."""
    head = rfile.read(2)
    if len(head) < 2 or head[0] & 0x0F == 8:
        return None
    size = head[1] & 0x7F
    if size == 126:
        size = struct.unpack(">H", rfile.read(2))[0]
    elif size == 127:
        size = struct.unpack(">Q", rfile.read(8))[0]
    mask = rfile.read(4)
    data = bytes(b ^ mask[i % 4] for i, b in enumerate(rfile.read(size)))
    return data.decode(errors="replace")


class SettleServer(LocalServer):
    http11 = True

    def __init__(self):
        self.stopping = threading.Event()
        self.serve()

    def url(self, case):
        return f"http://127.0.0.1:{self.port}/page?case={case}"

    def _send(self, request, status, kind, data):
        try:
            request.send_response(status)
            request.send_header("Content-Type", kind)
            request.send_header("Content-Length", str(len(data)))
            request.send_header("Cache-Control", "no-store")
            request.end_headers()
            request.wfile.write(data)
        except OSError:
            pass  # the page went away first (a long poll of a page since navigated): nobody to answer

    def handle(self, request):
        parts = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(request.headers.get("Content-Length") or 0)
        if length:
            request.rfile.read(length)
        if parts.path == "/page":
            case = query.get("case", "")
            self.stopping.wait(int(query.get("delay", "0")) / 1000.0)  # a slow first byte (a popup's)
            body = LANDED if case == "landed" else PAGES.get(case) or CASES.get(case, ("",))[0]
            page = f"<!doctype html><html><head><title>{case}</title></head><body>{body}</body></html>"
            self._send(request, 200, "text/html; charset=utf-8", page.encode())
        elif parts.path == "/api":
            if query.get("fail"):
                request.close_connection = True
                request.connection.shutdown(2)  # no answer at all: the fetch fails
                return
            self.stopping.wait(int(query.get("wait", "0")) / 1000.0)
            self._send(request, 200, "application/json", b'{"ok": true}')
        elif parts.path == "/sse":
            request.send_response(200)
            request.send_header("Content-Type", "text/event-stream")
            request.send_header("Cache-Control", "no-store")
            request.end_headers()
            while not self.stopping.is_set():
                try:
                    request.wfile.write(b"data: tick\n\n")
                    request.wfile.flush()
                except OSError:
                    return
                self.stopping.wait(0.2)
        elif parts.path == "/ws":
            request.send_response(101)
            request.send_header("Upgrade", "websocket")
            request.send_header("Connection", "Upgrade")
            request.send_header("Sec-WebSocket-Accept", _ws_accept(request.headers.get("Sec-WebSocket-Key", "")))
            request.end_headers()
            request.wfile.flush()
            delay = int(query.get("delay", "0")) / 1000.0
            try:
                while not self.stopping.is_set():
                    text = _ws_read(request.rfile)
                    if text is None:
                        return
                    if text == "ask" or text.startswith("echo:"):
                        time.sleep(delay)
                        request.wfile.write(_ws_frame("answer" if text == "ask" else text[5:]))
                        request.wfile.flush()
            except OSError:
                return
            finally:
                request.close_connection = True
        else:
            self._send(request, 404, "text/plain", b"not found")

    def stop(self):
        self.stopping.set()
        super().stop()
