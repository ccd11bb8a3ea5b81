"""bp trace on real Chromium: the exported HTML opened in Chromium over the test's own DevTools
connection (not through Browser Pilot) and read from its DOM — steps in order, thumbnails
decoded, failures and unknown outcomes marked, filters working — and no secret anywhere in the
file's bytes."""

import json
import os
import stat
import time

from tests.helpers import bp, ok

FORM = """
<label>Note <input id="note"></label>
<label>Password <input id="pw" type="password"></label>
<button id="go" onclick="document.getElementById('out').textContent = 'pressed'">Go</button>
<p id="out">idle</p>
"""

# A page that shows back everything it is given: typed text, the password and its cookies end
# up in its title and URL, where a trace would read them.
ECHO = """
<form method="get" action="/html">
  <label>Query <input id="q" name="q"></label>
  <label>Password <input id="pw" name="pw" type="password"></label>
  <input type="hidden" name="title" value="sent">
  <button type="submit">Send</button>
</form>
<script>
function echo() {
  document.title = 'echo ' + document.getElementById('q').value + ' / ' + document.getElementById('pw').value +
    ' / ' + document.cookie;
}
document.addEventListener('input', echo);
echo();
</script>
"""


def _open_in_chromium(chromium, path):
    """The exported file in a tab of the test's own Chromium; returns an evaluator of its DOM."""
    target = chromium.new_user_tab("file://" + path)

    def js(expression):
        reply = chromium.evaluate(target, expression)
        assert "exceptionDetails" not in reply.get("result", {}), reply
        return reply["result"]["result"].get("value")

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        # The new tab starts at about:blank (complete, no images): wait for the file's own document.
        if js("location.protocol === 'file:' && document.readyState === 'complete' && "
              "Array.from(document.images).every(i => i.complete)"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the exported trace did not load")
    return target, js


def _export(home, env, name, *extra):
    result = bp(home, "trace", "export", name, *extra, env=dict(env, BROWSER_PILOT_OUTPUT_DIR=home))
    return result, os.path.join(home, name)


def test_exported_trace_opens_in_chromium_with_steps_images_marks_and_filters(home, connected, pages, chromium):
    env = connected
    started = ok(home, env, "trace", "start", "--screenshots")
    assert started["trace"] == {**started["trace"], "recording": True, "screenshots": True, "steps": 0}
    page = ok(home, env, "open", pages.page(FORM, title="form"))
    refs = {e["name"]: e["ref"] for e in page["elements"]}
    ok(home, env, "click", refs["Go"])
    ok(home, env, "type", refs["Note"], "hello")
    stale = bp(home, "click", "9999", env=env)
    assert stale.code == "stale_ref", stale
    # A dispatched evaluation that runs past its deadline: unknown_outcome, never a plain failure.
    hung = bp(home, "--timeout", "2000", "eval", "new Promise(() => {})", env=env)
    assert hung.code == "unknown_outcome", hung
    ok(home, env, "snapshot")
    stopped = ok(home, env, "trace", "stop")
    assert stopped["trace"]["recording"] is False and stopped["trace"]["steps"] == 6
    ok(home, env, "snapshot")  # after stop: not recorded

    # Thumbnails are captured after each reply; the export reports how many it holds.
    result, path = _export(home, env, "trace.html")
    assert result.rc == 0, result
    assert result.json["file"] == path and result.json["steps"] == 6 and result.json["mimeType"] == "text/html"
    assert result.json["images"] == 4  # open, click, type, eval acted; stale_ref and snapshot did not
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600

    data = open(path, "rb").read()
    assert b"http://" not in data.replace(pages.url("").encode(), b"")  # no external asset: only the traced page's own URL
    assert b"<link" not in data and b" src=\"http" not in data and b"@import" not in data

    target, js = _open_in_chromium(chromium, path)
    try:
        steps = js("""Array.from(document.querySelectorAll('#steps > li.step')).map(li => ({
            seq: +li.dataset.seq, command: li.dataset.command, outcome: li.dataset.outcome,
            mark: li.querySelector('.mark').textContent, cls: li.className,
            badge: li.querySelector('.badge').textContent, cmd: li.querySelector('code.cmd').textContent,
            images: Array.from(li.querySelectorAll('img.thumb')).map(i => [i.complete, i.naturalWidth, i.naturalHeight,
                                                                           i.src.slice(0, 22)])}))""")
        assert [s["seq"] for s in steps] == [1, 2, 3, 4, 5, 6]
        assert [s["command"] for s in steps] == ["open", "click", "type", "click", "eval", "snapshot"]
        assert [s["outcome"] for s in steps] == ["ok", "ok", "ok", "failed", "unknown_outcome", "ok"]
        failed, unknown = steps[3], steps[4]
        assert failed["mark"] == "✗" and "outcome-failed" in failed["cls"] and failed["badge"] == "stale_ref"
        assert unknown["mark"] == "?" and "outcome-unknown_outcome" in unknown["cls"]
        assert unknown["badge"] == "unknown_outcome"
        assert steps[2]["cmd"] == f"bp type ref={refs['Note']} text=[redacted] limit=50"
        for s in steps:
            if s["command"] in ("open", "click", "type", "eval") and s["outcome"] != "failed":
                assert len(s["images"]) == 1, s
                complete, width, height, prefix = s["images"][0]
                assert complete and width > 0 and height > 0, s  # decoded by Chromium
                assert prefix == "data:image/jpeg;base64"
            else:
                assert s["images"] == [], s
        # Evidence is in the step; the failure's context is open.
        evidence = js("JSON.parse(document.querySelector('#step-3 details.evidence pre').textContent)")
        assert evidence["action"] == "type" and evidence["status"] == "verified"
        assert js("document.querySelector('#step-4 details.context').open") is True

        def shown(command, outcome):
            return js(f"""(() => {{
                const c = document.getElementById('filter-command'), o = document.getElementById('filter-outcome');
                c.value = {json.dumps(command)}; c.dispatchEvent(new Event('change'));
                o.value = {json.dumps(outcome)}; o.dispatchEvent(new Event('change'));
                return [Array.from(document.querySelectorAll('#steps > li.step'))
                          .filter(li => getComputedStyle(li).display !== 'none').map(li => +li.dataset.seq),
                        document.getElementById('shown').textContent];
            }})()""")

        assert shown("click", "") == [[2, 4], "2 of 6 steps shown"]
        assert shown("", "failed") == [[4], "1 of 6 steps shown"]
        assert shown("", "unknown_outcome") == [[5], "1 of 6 steps shown"]
        assert shown("", "problem") == [[4, 5], "2 of 6 steps shown"]
        assert shown("click", "ok") == [[2], "1 of 6 steps shown"]
        assert shown("", "") == [[1, 2, 3, 4, 5, 6], "6 of 6 steps shown"]
        # Opened from a file: the page made no request at all.
        assert js("performance.getEntriesByType('resource').length") == 0
    finally:
        chromium.close_tab(target)


def test_no_secret_reaches_the_exported_file(home, connected, pages):
    env = connected
    secrets = {"typed": "typedSecret7Q2x", "password": "pwSecret9Zk4m", "cookie": "cookieSecret3Hd8",
               "header": "headerSecret5Jp1", "keyboard": "kbSecret8Wv6", "auth": "authSecret2Nc5",
               "eval": "evalSecret4Tq9"}
    ok(home, env, "trace", "start", "--screenshots")
    url = pages.page(ECHO, title="echo")
    page = ok(home, env, "open", url)
    refs = {e["name"]: e["ref"] for e in page["elements"]}
    ok(home, env, "cookies", "set", f"tok={secrets['cookie']}", "--url", pages.url("/"))
    ok(home, env, "net", "headers", "*", f"X-Token: {secrets['header']}")
    ok(home, env, "auth", "someuser", secrets["auth"])
    ok(home, env, "eval", f"'{secrets['eval']}'.length")
    ok(home, env, "open", url)  # the page now shows the cookie in its title
    ok(home, env, "type", refs["Query"], secrets["typed"])
    ok(home, env, "type", refs["Password"], secrets["password"])
    ok(home, env, "keyboard", secrets["keyboard"])  # into the focused password field
    echoed = ok(home, env, "snapshot")
    # The page really shows the secrets back (so the trace had them in front of it).
    assert secrets["typed"] in echoed["title"] and secrets["cookie"] in echoed["title"]
    ok(home, env, "press", "Enter")  # a GET form: the typed text and the password go into the URL
    sent = ok(home, env, "snapshot")
    assert secrets["typed"] in sent["url"]
    result, path = _export(home, env, "secrets.html")
    assert result.rc == 0, result
    data = open(path, "rb").read()
    assert result.json["steps"] == 12 and data.count(b'class="step ') == 12
    for name, secret in secrets.items():
        assert secret.encode() not in data, name
    # What stood there instead: the arguments, the page's echo of them, the query's values.
    for shown in (b"text=[redacted]", b"value=[redacted]", b"password=[redacted]", b"expression=[redacted]",
                  b'headers=[{&quot;name&quot;:&quot;X-Token&quot;,&quot;value&quot;:&quot;[redacted]&quot;}]',
                  b"echo [redacted] / [redacted]", "q=…&amp;pw=…".encode()):
        assert shown in data, shown


def test_export_never_replaces_a_file_unless_asked_and_needs_a_trace(home, connected):
    env = connected
    missing, _ = _export(home, env, "none.html")
    assert missing.code == "invalid_argument" and missing.json["context"] == {"field": "trace", "reason": "no_trace"}
    ok(home, env, "trace", "start")
    ok(home, env, "snapshot")
    existing = os.path.join(home, "keep.html")
    with open(existing, "w") as fh:
        fh.write("the person's own file")
    refused, _ = _export(home, env, "keep.html")
    assert refused.rc == 1 and refused.code == "file_exists" and refused.json["context"]["field"] == "file"
    assert open(existing).read() == "the person's own file"
    assert [n for n in os.listdir(home) if n.startswith(".keep.html")] == []  # no temporary left behind
    replaced, _ = _export(home, env, "keep.html", "--overwrite")
    assert replaced.rc == 0, replaced
    assert open(existing, "rb").read().startswith(b"<!doctype html>")
    # A symbolic link is never written through, --overwrite or not.
    os.symlink(existing, os.path.join(home, "link.html"))
    for extra in ((), ("--overwrite",)):
        linked, _ = _export(home, env, "link.html", *extra)
        assert linked.rc == 1 and linked.code in ("file_exists", "invalid_argument"), linked
    assert open(existing, "rb").read().startswith(b"<!doctype html>")
    # A new trace replaces the old one; disconnect forgets it (another Agent keeps the service up).
    again = ok(home, env, "trace", "start")
    assert again["discardedSteps"] == 1 and again["trace"]["steps"] == 0
    ok(home, env, "--client-key", "keeper", "connect")
    ok(home, env, "disconnect")
    gone, _ = _export(home, env, "after.html")
    assert gone.code == "invalid_argument" and gone.json["context"]["reason"] == "no_trace", gone
