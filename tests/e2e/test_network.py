"""Network journal and rules, cookies, HTTP auth, console and page-error journals on real
Chromium: per key, bounded, redacted by default, visible in page behaviour, gone on release."""

import os

import subprocess
from urllib.parse import quote

from tests import helpers
from tests.helpers import bp, ok, logs_of

FETCHES = """
<p id="out">working</p>
<script>
Promise.all([
  fetch('/json?pad=10').then(r => r.text()),
  fetch('/status?code=404').then(r => r.text()),
  fetch('/echo-headers', {method: 'POST', body: 'hello=1', headers: {'Authorization': 'Bearer tok-123'}})
    .then(r => r.text()),
]).then(() => { document.getElementById('out').textContent = 'all-done'; });
</script>
"""

CONSOLE = """
<p>console page</p>
<script>
console.log('hello-console', 42);
console.error('bad-thing');
setTimeout(() => { throw new Error('boom-err'); }, 0);
</script>
"""


def fetch_outcome(home, env, path, then="r.text()"):
    expression = (f"fetch({path!r}).then(r => {then}).catch(e => 'failed:' + e.name)")
    return ok(home, env, "eval", expression)["value"]


def test_journal_show_rules_and_isolation(home, connected, pages):
    # The journal starts when the tab is held: the first page load is in it already.
    ok(home, connected, "open", pages.page("<p>before</p>", title="before"))
    assert [r["type"] for r in ok(home, connected, "net", "--url", "*before*")["requests"]] == ["document"]
    ok(home, connected, "open", pages.page(FETCHES, title="net"))
    ok(home, connected, "wait", "--text", "all-done")
    listed = ok(home, connected, "net", "--limit", "50")
    assert set(listed) >= {"ok", "requests", "total", "truncated", "nextCursor"}
    by_path = {r["url"].split(str(pages.port), 1)[1]: r for r in listed["requests"]}
    assert by_path["/json?pad=10"]["status"] == 200 and by_path["/json?pad=10"]["type"] == "fetch"
    assert by_path["/status?code=404"]["status"] == 404
    document = [r for r in listed["requests"] if r["type"] == "document"]
    assert document and document[0]["method"] == "GET" and document[0]["id"].startswith("req-")
    # Filters: status class, URL glob, method, limit (the latest) and --after paging.
    assert [r["url"] for r in ok(home, connected, "net", "--status", "4xx")["requests"]] == [pages.url("/status?code=404")]
    assert [r["status"] for r in ok(home, connected, "net", "--url", "*/JSON*")["requests"]] == [200]
    posted = ok(home, connected, "net", "--method", "post")["requests"]
    assert len(posted) == 1
    first = ok(home, connected, "net", "--limit", "1", "--after", "req-0")
    assert first["truncated"] is True and len(first["requests"]) == 1
    # show: bounded body, redacted secrets unless --reveal, post data.
    shown = ok(home, connected, "net", "show", by_path["/json?pad=10"]["id"])
    assert shown["bodyAvailable"] is True and shown["bodyEncoding"] == "text"
    assert '"items": [1, 2, 3]' in shown["responseBody"] and shown["mimeType"] == "application/json"
    out_dir = os.path.join(home, "out")
    saved = ok(home, dict(connected, BROWSER_PILOT_OUTPUT_DIR=out_dir), "net", "show", by_path["/json?pad=10"]["id"],
               "--save", "body.json")
    assert saved == {"ok": True, "file": os.path.join(out_dir, "body.json"), "mimeType": "application/json",
                     "sizeBytes": os.path.getsize(saved["file"])}
    with open(saved["file"]) as fh:
        assert fh.read() == shown["responseBody"]
    assert os.stat(saved["file"]).st_mode & 0o777 == 0o600
    echo = ok(home, connected, "net", "show", posted[0]["id"])
    assert echo["postData"] == "hello=1"
    auth_header = [h["value"] for h in echo["requestHeaders"] if h["name"].lower() == "authorization"]
    assert auth_header == ["[redacted]"] and "authorization" in echo["redactedHeaders"]
    assert "tok-123" not in str(echo["requestHeaders"])  # (the echo route's body repeats it)
    revealed = ok(home, connected, "net", "show", posted[0]["id"], "--reveal")
    assert [h["value"] for h in revealed["requestHeaders"] if h["name"].lower() == "authorization"] == ["Bearer tok-123"]
    unknown = bp(home, "net", "show", "req-99999", env=connected)
    assert unknown.code == "invalid_argument" and unknown.json["context"]["field"] == "id", unknown
    # Another key sees none of it and its rules do not touch this key's tab.
    other = dict(connected, BROWSER_PILOT_CLIENT_KEY="other-agent")
    assert ok(home, other, "net")["requests"] == []
    ok(home, other, "net", "block", "*")
    assert fetch_outcome(home, connected, "/json") .startswith("{")

    # Rules: block > mock > headers; remove one, then all.
    block = ok(home, connected, "net", "block", "*/json*")["rule"]
    assert block["type"] == "block" and block["id"].startswith("rule:")
    mock = ok(home, connected, "net", "mock", "*/json*", "--body", "mocked-body", "--status", "201")["rule"]
    assert mock == {"id": mock["id"], "type": "mock", "pattern": "*/json*", "status": 201, "bodySize": 11}
    headers = ok(home, connected, "net", "headers", "*/echo-headers*", "X-Test: yes")["rule"]
    assert headers["headers"] == [{"name": "X-Test", "value": "yes"}]
    assert [r["id"] for r in ok(home, connected, "net", "rules")["rules"]] == [headers["id"], mock["id"], block["id"]]
    assert fetch_outcome(home, connected, "/json") == "failed:TypeError"
    # Rules follow into a cross-site (out-of-process) iframe of the tab.
    inner = pages.page("<p>inner</p>", site="a")
    ok(home, connected, "open", pages.page(f"<iframe src='{inner}'></iframe>"))
    ok(home, connected, "frame", "1")
    assert fetch_outcome(home, connected, "/json") == "failed:TypeError"
    in_frame = ok(home, connected, "net", "--url", pages.url("/json", site="a"))["requests"]
    assert [(r["type"], r.get("failed")) for r in in_frame] == [("fetch", True)], in_frame
    ok(home, connected, "frame", "0")
    ok(home, connected, "net", "remove", block["id"])
    assert fetch_outcome(home, connected, "/json", "r.status + ':' + r.statusText") .startswith("201")
    assert fetch_outcome(home, connected, "/json") == "mocked-body"
    assert fetch_outcome(home, connected, "/echo-headers", "r.json().then(j => j.headers['x-test'])") == "yes"
    blocked = ok(home, connected, "net", "--url", "*/json", "--limit", "5")["requests"]
    assert any(r.get("failed") and r["errorText"] for r in blocked) and any(r.get("status") == 201 for r in blocked)
    ok(home, connected, "net", "remove", "--all")
    assert ok(home, connected, "net", "rules")["rules"] == []
    assert fetch_outcome(home, connected, "/json").startswith("{")
    none = bp(home, "net", "remove", env=connected)
    assert none.code == "invalid_argument" and none.json["context"]["field"] == "ruleId", none
    # clear empties the journal; rules vanish with disconnect.
    ok(home, connected, "net", "clear")
    assert ok(home, connected, "net")["requests"] == []
    ok(home, connected, "net", "block", "*/json*")
    ok(home, other, "disconnect")
    ok(home, connected, "disconnect")
    ok(home, connected, "connect")
    ok(home, connected, "open", pages.page("<p>again</p>"))
    assert ok(home, connected, "net", "rules")["rules"] == []
    assert fetch_outcome(home, connected, "/json").startswith("{")


def test_cookies_auth_console_errors(home, connected, pages):
    origin = pages.url("/")
    ok(home, connected, "open", pages.page(CONSOLE, title="console"))
    # Console and errors: journaled since the tab was held.
    messages = ok(home, connected, "console")
    texts = [m["text"] for m in messages["messages"]]
    assert "hello-console 42" in texts and "bad-thing" in texts, messages
    assert [m["text"] for m in ok(home, connected, "console", "--level", "error")["messages"]] == ["bad-thing"]
    errors = ok(home, connected, "errors")["errors"]
    assert any("boom-err" in e["message"] for e in errors), errors
    other = dict(connected, BROWSER_PILOT_CLIENT_KEY="other-agent")
    assert ok(home, other, "console")["messages"] == []

    # Cookies: set, list (values only on request), by domain, delete.
    ok(home, connected, "cookies", "set", "theme=dark-secret", "--url", origin)
    ok(home, connected, "open", pages.url("/set-cookie?name=sid&value=abc123"))
    listed = {c["name"]: c for c in ok(home, connected, "cookies")["cookies"]}
    assert listed["theme"]["valueLength"] == len("dark-secret") and "value" not in listed["theme"]
    assert listed["sid"]["domain"] == "127.0.0.1"
    with_values = {c["name"]: c["value"] for c in ok(home, connected, "cookies", "--values")["cookies"]}
    assert with_values["theme"] == "dark-secret" and with_values["sid"] == "abc123"
    assert {c["name"] for c in ok(home, connected, "cookies", "127.0.0.1")["cookies"]} >= {"theme", "sid"}
    ok(home, connected, "cookies", "delete", "theme", "--url", origin)
    assert "theme" not in {c["name"] for c in ok(home, connected, "cookies")["cookies"]}
    cleared = ok(home, connected, "cookies", "clear", "--domain", "127.0.0.1")
    assert cleared["deleted"] >= 1
    assert ok(home, connected, "cookies", "--url", origin)["cookies"] == []

    # HTTP auth: without credentials the page gets its 401 and the open fails (not retryable
    # as it is: credentials first); with them the server sees them.
    refused = bp(home, "open", pages.url("/auth"), env=connected)
    assert refused.code == "navigation_failed" and refused.json["retryable"] is False, refused
    assert refused.json["remediation"]["code"] == "give_http_credentials", refused
    assert ok(home, connected, "net", "--url", "*/auth*")["requests"][-1]["status"] == 401
    missing = bp(home, "auth", "ada", env=connected)
    assert missing.code == "invalid_argument" and missing.json["context"]["field"] == "password", missing
    outputs = [helpers.Result(subprocess.run([helpers.BP, "auth", "ada", "-", "--origin", pages.url("").rstrip("/")],
                                             env=connected, input="s3cret-pw\n", capture_output=True, text=True,
                                             timeout=60))]
    assert outputs[0].rc == 0, outputs[0]
    ok(home, connected, "open", pages.url("/auth"))
    assert '"user": "ada"' in ok(home, connected, "eval", "document.body.innerText")["value"]
    # The journal shows the authorization header only redacted.
    shown = ok(home, connected, "net", "show", ok(home, connected, "net", "--url", "*/auth*")["requests"][-1]["id"])
    assert "s3cret" not in str(shown)
    outputs.append(bp(home, "auth", "--clear", env=connected))
    assert outputs[-1].json == {"ok": True, "cleared": True}
    for result in outputs:
        assert "s3cret-pw" not in result.stdout + result.stderr
    assert "s3cret-pw" not in logs_of(home)
    assert "dark-secret" not in logs_of(home)


def test_open_then_net_lists_the_pages_own_document_script_xhr_and_a_cut_data_url(home, connected, pages, tmp_path):
    script = tmp_path / "journal.js"
    script.write_text("document.getElementById('out').dataset.script = 'ran';")
    name = f"journal-{os.path.basename(home)}.js"
    pages.files[name] = str(script)
    image = "data:image/gif;base64," + "R0lGODlhAQABAAAAACw=" * 100
    page = pages.page(f"""<p id="out">waiting</p><script src="/static/{name}"></script>
<img src="{image}" alt="dot">
<script>
const xhr = new XMLHttpRequest();
xhr.open('GET', '/json?pad=3');
xhr.onload = () => {{ document.getElementById('out').textContent = 'xhr-done'; }};
xhr.send();
</script>""", title="journal")
    ok(home, connected, "open", page)
    ok(home, connected, "wait", "--text", "xhr-done")
    listed = ok(home, connected, "net", "--limit", "50")  # the key's first net command
    by_type = {}
    for row in listed["requests"]:
        by_type.setdefault(row["type"], []).append(row)
    assert [r["url"] for r in by_type["document"]] == [page], listed
    assert [r["url"] for r in by_type["script"]] == [pages.url(f"/static/{name}")], listed
    assert [(r["url"], r["status"]) for r in by_type["xhr"]] == [(pages.url("/json?pad=3"), 200)], listed
    # A data: URL is its first characters, with its length; never silently cut.
    cut = [r for r in listed["requests"] if r["url"].startswith("data:")]
    assert len(cut) == 1 and image.startswith(cut[0]["url"]) and len(cut[0]["url"]) <= 64, cut
    assert cut[0]["urlLength"] == len(image)
    assert all("urlLength" not in r for r in listed["requests"] if not r["url"].startswith("data:"))
    # total counts every matching entry, not the rows returned.
    latest = ok(home, connected, "net", "--limit", "2")
    assert len(latest["requests"]) == 2 and latest["total"] == len(listed["requests"]) and latest["truncated"] is True
    assert latest["requests"] == listed["requests"][-2:]
    paged = ok(home, connected, "net", "--limit", "1", "--after", listed["requests"][0]["id"])
    assert paged["total"] == len(listed["requests"]) - 1 and len(paged["requests"]) == 1
    only = ok(home, connected, "net", "--type", "xhr", "--limit", "1")
    assert only["total"] == 1 and only["truncated"] is False


def test_console_and_errors_keep_earlier_documents_from_before_the_first_console_command(home, connected, pages):
    ok(home, connected, "open", pages.page("<script>console.log('first-doc'); throw new Error('first-err');</script>"))
    ok(home, connected, "open", pages.page("<script>console.warn('second-doc');</script>"))
    texts = [m["text"] for m in ok(home, connected, "console")["messages"]]
    assert "first-doc" in texts and "second-doc" in texts, texts
    assert any("first-err" in e["message"] for e in ok(home, connected, "errors")["errors"])


def test_a_user_tab_is_journaled_from_bp_tab_on(home, connected, pages, chromium):
    ticks = f"tick-{os.path.basename(home)}"
    # One query parameter: the DevTools /json/new endpoint takes the whole query as the URL.
    # (Chrome decodes %2B there: no "+" in the script.)
    page = pages.url("/page?body=" + quote(f"<script>setInterval(() => fetch('/json?{ticks}='.concat(Date.now())), 100);"
                                           "</script>", safe=""))
    user_tab = chromium.new_user_tab(page)
    try:
        assert helpers.wait_until(lambda: any(ticks in t["url"] for t in ok(home, connected, "tabs")["tabs"]))
        index = [t["index"] for t in ok(home, connected, "tabs")["tabs"] if ticks in t["url"]][0]
        ok(home, connected, "tab", str(index))
        seen = len([p for p, event, _ in pages.log if ticks in p and event == "get"])
        # Three more ticks reached the server after `bp tab`, before any other command.
        assert pages.wait_for_log(lambda log: len([p for p, e, _ in log if ticks in p and e == "get"]) >= seen + 3)
        journaled = ok(home, connected, "net", "--url", f"*{ticks}*")
        assert journaled["total"] >= 3, journaled
    finally:
        chromium.close_tab(user_tab)
