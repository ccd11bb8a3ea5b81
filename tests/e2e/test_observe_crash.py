"""Observation never crashes the renderer (issue 15 §1): long tables whose header icons only a
JavaScript listener makes clickable crashed the tab on the 2nd-5th snapshot while pointer
listeners were listed through an isolated world (broker/observe/listeners.py)."""

import json
import threading

import pytest

from tests.helpers import bp

# The shape of ../shared/repro/listener-table.html (and of a Datasette table page): sort links and
# an SVG icon with a click listener in every column header, then ROWS rows of links.
TABLE = """<label>Genre <select id=genre><option>all</option><option>Poetry</option><option>Prose</option></select></label>
<p id=state>none</p>
<table><thead><tr id=h></tr></thead><tbody id=b></tbody></table>
<script>
const h = document.getElementById('h'), b = document.getElementById('b');
function rows(order, genre) {
  const n = [];
  for (let i = 0; i < ROWS; i++) n.push(i);
  if (order === 'desc') n.reverse();
  b.innerHTML = n.filter((i) => genre === 'all' || (i % 2 ? 'Prose' : 'Poetry') === genre).map((i) =>
    '<tr><td><a href="#r' + i + '">' + i + '</a></td><td>Book ' + i + '</td><td>' + (1950 + i % 70) +
    '</td><td>' + (i % 2 ? 'Prose' : 'Poetry') + '</td></tr>').join('');
}
let order = 'asc';
for (const c of ['id', 'title', 'year', 'genre']) {
  const th = document.createElement('th');
  th.innerHTML = '<a href="#s-' + c + '">' + c + '</a>';
  const s = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  s.setAttribute('width', '14'); s.setAttribute('height', '14');
  s.innerHTML = '<path d="M1 1h12v12H1z"/>';
  s.addEventListener('click', () => { order = order === 'asc' ? 'desc' : 'asc'; rows(order, genre.value);
    document.getElementById('state').textContent = 'sorted ' + c + ' ' + order; });
  th.appendChild(s); h.appendChild(th);
}
const genre = document.getElementById('genre');
genre.addEventListener('change', () => { rows(order, genre.value); document.getElementById('state').textContent = 'genre ' + genre.value; });
rows('asc', 'all');
</script>"""


class CrashWatch:
    """The test's own DevTools connection to the tab, listening for Inspector.targetCrashed."""

    def __init__(self, chromium, target_id):
        import websocket

        self.ws = websocket.create_connection(f"ws://127.0.0.1:{chromium.port}/devtools/page/{target_id}",
                                              suppress_origin=True, timeout=None)
        self.events = []
        self.ws.send(json.dumps({"id": 1, "method": "Inspector.enable"}))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            while True:
                message = json.loads(self.ws.recv())
                if "method" in message:
                    self.events.append(message["method"])
        except Exception:
            pass  # closed

    def crashed(self):
        return "Inspector.targetCrashed" in self.events

    def close(self):
        self.ws.close()


def ok(home, env, *args):
    result = bp(home, *args, env=env)
    assert result.rc == 0, result
    return result.json


def listener_icons(observation):
    return [e for e in observation["elements"] if e["role"] == "button" and e["name"] == ""]


def open_table(home, env, pages, chromium, rows, title):
    observation = ok(home, env, "open", "--new", pages.page(TABLE.replace("ROWS", str(rows)), title=title))
    raw = [t for t, i in chromium.pages().items() if i["title"] == title][0]
    return observation, raw, CrashWatch(chromium, raw)


def page_answers(chromium, raw):
    reply = chromium.evaluate(raw, "document.querySelectorAll('tbody tr').length")
    return reply["result"]["result"]["value"]


@pytest.mark.parametrize("rows", [300, 2000])
def test_thirty_snapshots_of_a_long_listener_table_keep_the_tab_alive(home, connected, pages, chromium, rows):
    observation, raw, watch = open_table(home, connected, pages, chromium, rows, f"table-{rows}")
    try:
        assert len(listener_icons(observation)) == 4, observation["elements"][:8]
        for _ in range(30):
            observation = ok(home, connected, "snapshot")
            assert len(listener_icons(observation)) == 4, observation["elements"][:8]
            assert not watch.crashed()
        assert page_answers(chromium, raw) == rows
        assert not watch.crashed()
    finally:
        watch.close()


def test_sort_and_select_flow_on_a_listener_table_keeps_the_tab_alive(home, connected, pages, chromium):
    """Datasette's failing steps: a header click that re-renders the table, a select in the
    filter form, snapshots in between."""
    observation, raw, watch = open_table(home, connected, pages, chromium, 500, "table-flow")
    try:
        for round_ in range(5):
            icon = listener_icons(observation)[round_ % 4]["ref"]
            clicked = ok(home, connected, "click", str(icon))
            assert clicked["evidence"]["status"] != "mismatch", clicked["evidence"]
            genre = [e["ref"] for e in ok(home, connected, "snapshot")["elements"] if e["role"] == "combobox"][0]
            ok(home, connected, "select", str(genre), ["Poetry", "Prose", "all"][round_ % 3])
            for _ in range(3):
                observation = ok(home, connected, "snapshot")
            assert len(listener_icons(observation)) == 4
            assert not watch.crashed()
        state = chromium.evaluate(raw, "document.getElementById('state').textContent")["result"]["result"]["value"]
        assert state == "genre Prose", state  # the last select (round 4) reached the page
        assert page_answers(chromium, raw) == 250
        assert not watch.crashed()
    finally:
        watch.close()
