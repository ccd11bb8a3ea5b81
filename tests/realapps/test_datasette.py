"""Datasette (PyPI datasette): a 2,000-row table page with header menus (the listener-heavy
table that crashes a renderer today), sort links, the filter form, facets, the CSV export, the
SQL editor (CodeMirror 5) and a writable canned query (POST/redirect). Checked against the
SQLite database, Datasette's access log and the downloaded file."""

import csv
import os
import re
import sqlite3
import urllib.parse

import pytest

from tests.realapps.agent import page_eval, ref_of, refs

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]

ROWS_JS = "[...document.querySelectorAll('table.rows-and-columns tbody tr')].map(tr => [...tr.cells].map(c => c.innerText.trim()))"


def sql(datasette, query, *args):
    with sqlite3.connect(datasette.db) as conn:
        return conn.execute(query, args).fetchall()


def requests(datasette):
    """(method, path, query) of each request in Datasette's own access log."""
    with open(datasette.log + ".out") as fh:
        found = re.findall(r'"(GET|POST) (\S+) HTTP/[\d.]+" (\d+)', fh.read())
    out = []
    for method, target, status in found:
        parts = urllib.parse.urlsplit(target)
        out.append((method, parts.path, dict(urllib.parse.parse_qsl(parts.query)), int(status)))
    return out


def shown_rows(chromium, datasette, agent):
    return page_eval(chromium, datasette.url(agent.host, "/"), ROWS_JS)


def test_thirty_snapshots_of_the_big_table_keep_the_page_alive(agent, datasette, chromium):
    agent.ok("open", datasette.url(agent.host, "/atlas/cities"), "--limit", "40")
    for _ in range(30):
        agent.ok("snapshot", "--limit", "40", timeout=120)
    assert len(shown_rows(chromium, datasette, agent)) == sql(datasette, "SELECT count(*) FROM cities")[0][0]


def test_sort_link_orders_the_table_by_population(agent, datasette, chromium):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities"), "--limit", "40")
    sorted_page = agent.act("click", ref_of(page, "link", "population"), "--limit", "40")
    assert ("GET", "/atlas/cities", {"_sort": "population"}, 200) in requests(datasette)
    assert "_sort=population" in sorted_page["url"]
    smallest = sql(datasette, "SELECT id, name FROM cities ORDER BY population, id LIMIT 3")
    assert [row[:2] for row in shown_rows(chromium, datasette, agent)[:3]] == [[str(i), n] for i, n in smallest]
    first = agent.ok("read", "table.rows-and-columns tbody tr")
    assert smallest[0][1] in first["text"]


def test_filter_form_shows_one_country(agent, datasette, chromium):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities"), "--limit", "12")
    column = [e["ref"] for e in page["elements"] if e["role"] == "combobox"][0]
    page = agent.act("select", str(column), "country", "--limit", "12")
    value = [e["ref"] for e in page["elements"] if e["role"] == "textbox"][0]
    page = agent.act("type", str(value), "Norway", "--limit", "12")
    agent.act("click", ref_of(page, "button", "Apply"), "--limit", "12")
    assert any(q.get("_filter_column") == "country" and q.get("_filter_value") == "Norway" or
               q.get("country__exact") == "Norway" for _, path, q, _s in requests(datasette) if path == "/atlas/cities")
    expected = sql(datasette, "SELECT id, name FROM cities WHERE country = 'Norway' ORDER BY id")
    assert [r[:2] for r in shown_rows(chromium, datasette, agent)] == [[str(i), n] for i, n in expected]


def test_row_link_opens_the_row_page(agent, datasette, chromium):
    (name,) = sql(datasette, "SELECT name FROM cities WHERE id = 7")[0]
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities?_size=20"))
    row = agent.act("click", ref_of(page, "link", "7"))
    assert row["url"].endswith("/atlas/cities/7")
    assert ("GET", "/atlas/cities/7", {}, 200) in requests(datasette)
    assert name in agent.ok("read")["text"]


def test_facet_then_facet_value_narrows_the_rows(agent, datasette, chromium):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities?_size=20"))
    # The suggested facet comes before the column header of the same name.
    faceted = agent.act("click", str(refs(page, "link", "country")[0]))
    assert any(path == "/atlas/cities" and q.get("_facet") == "country" for _, path, q, _s in requests(datasette))
    (count,) = sql(datasette, "SELECT count(*) FROM cities WHERE country = 'Peru'")[0]
    agent.act("click", ref_of(faceted, "link", contains="Peru"))
    assert any(path == "/atlas/cities" and q.get("country") == "Peru" for _, path, q, _s in requests(datasette))
    assert f"{count} row" in page_eval(chromium, datasette.url(agent.host, "/"), "document.querySelector('h3').innerText")


def test_advanced_export_downloads_the_table_as_csv(agent, datasette):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities?country=Fiji&_size=20"))
    export = agent.act("click", ref_of(page, "link", "advanced"))
    agent.act("click", ref_of(export, "checkbox", contains="download file"))
    agent.act("click", ref_of(export, "button", "Export CSV"))
    agent.ok("wait", "--download")
    os.makedirs(agent.out_dir, exist_ok=True)
    saved = agent.ok("download", "1", os.path.join(agent.out_dir, "fiji.csv"))
    with open(saved["file"], newline="", encoding="utf-8-sig") as fh:
        exported = list(csv.reader(fh))
    assert exported[0] == ["id", "name", "country", "population"]
    assert exported[1:] == [list(map(str, r)) for r in sql(datasette, "SELECT * FROM cities WHERE country = 'Fiji' ORDER BY id")]
    assert any(q.get("_dl") for _, path, q, _s in requests(datasette) if path == "/atlas/cities.csv")


def test_sql_editor_runs_a_typed_query(agent, datasette, chromium):
    page = agent.ok("open", datasette.url(agent.host, "/atlas"))
    query = "select count(*) as n from cities where country = 'Kenya'"
    typed = agent.act("type", ref_of(page, "textbox"), query, "--clear")
    agent.act("click", ref_of(typed, "button", "Run SQL"))
    assert any(path == "/atlas" and q.get("sql") == query for _, path, q, _s in requests(datasette))
    (count,) = sql(datasette, "SELECT count(*) FROM cities WHERE country = 'Kenya'")[0]
    assert shown_rows(chromium, datasette, agent) == [[str(count)]]


def test_writable_canned_query_posts_and_redirects(agent, datasette):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/add_note"))
    typed = agent.act("type", ref_of(page, "textbox", "title"), f"note of {agent.host}")
    done = agent.act("click", ref_of(typed, "button", "Run SQL"))
    assert sql(datasette, "SELECT count(*) FROM notes WHERE title = ?", f"note of {agent.host}") == [(1,)]
    assert any(m == "POST" and path == "/atlas/add_note" and s in (301, 302, 303)
               for m, path, _q, s in requests(datasette))
    assert "Note added" in agent.ok("read", "body")["text"] or "Note added" in str(done)


def test_unnamed_filter_comboboxes_carry_a_context(agent, datasette):
    page = agent.ok("open", datasette.url(agent.host, "/atlas/cities"), "--limit", "12")
    unnamed = [e for e in page["elements"] if e["role"] == "combobox" and not e["name"]]
    assert unnamed and all(e.get("context") for e in unnamed)
