"""Swagger UI (npm swagger-ui-dist) on the shop's own OpenAPI spec: expand an operation, try it
out, execute. Checked against the shop's request log and its SQLite database."""

import json
import sqlite3

import pytest

from tests.realapps.agent import query_of, ref_of, refs
from tests.realapps.conftest import read_log

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def operations(agent, site):
    """The Swagger page once its operations are there: Swagger UI fetches the spec after the page
    has loaded and renders them then, so the open's own observation may come before them. An
    Agent waits for late content as for any other."""
    agent.ok("open", site.url(agent.host, "/swagger/"))
    agent.ok("wait", "--selector", ".opblock-summary-control")
    return agent.ok("snapshot")


def expand(agent, site, summary):
    # The operation's button by its summary: Chromium names it "GET /api /pets List pets" (Swagger
    # breaks the path with <wbr>), and that name is what the observation gives.
    agent.act("click", str(refs(operations(agent, site), "button", contains=summary)[0]))
    return agent.act("click", ref_of(agent.ok("snapshot"), "button", "Try it out"))


def test_execute_lists_pets_by_status(agent, site):
    trying = expand(agent, site, "List pets")
    chosen = agent.act("select", str(refs(trying, "combobox")[0]), "sold")
    agent.act("click", ref_of(chosen, "button", "Execute"))
    agent.ok("wait", "--selector", ".responses-inner .response .microlight")
    assert any(e["path"] == "/api/pets" and query_of(e) == {"status": "sold"} for e in read_log(site))
    with sqlite3.connect(site.db) as conn:
        sold = [n for (n,) in conn.execute("SELECT name FROM pets WHERE status = 'sold' ORDER BY id")]
    shown = agent.ok("read", ".responses-inner .response .microlight")["text"]
    assert [p["name"] for p in json.loads(shown)] == sold


def test_execute_adds_a_pet_from_the_typed_body(agent, site):
    trying = expand(agent, site, "Add a pet")
    name = f"Pet {agent.host}"
    body = json.dumps({"name": name, "status": "pending"})
    typed = agent.act("type", str(refs(trying, "textbox")[0]), body, "--clear")
    # Refs are the latest observation's: the typed body re-rendered the operation.
    agent.act("click", ref_of(typed, "button", "Execute"))
    agent.ok("wait", "--selector", ".responses-inner .response .microlight")
    with sqlite3.connect(site.db) as conn:
        assert conn.execute("SELECT status FROM pets WHERE name = ?", (name,)).fetchall() == [("pending",)]
    assert any(e["method"] == "POST" and e["path"] == "/api/pets" and e["status"] == 201 for e in read_log(site))


def test_expanding_an_operation_reports_its_effect(agent, site):
    clicked = agent.act("click", str(refs(operations(agent, site), "button", contains="List pets")[0]))
    assert refs(clicked, "button", "Try it out")
    assert clicked["evidence"]["status"] == "verified", clicked["evidence"]
