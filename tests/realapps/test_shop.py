"""Flask shop (PyPI flask): a POST/redirect order form, a CSV download, a confirm() before
delete. Checked against the shop's SQLite database and the downloaded file."""

import csv
import os
import sqlite3

import pytest

from tests.realapps.agent import ref_of

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def orders(site, customer):
    with sqlite3.connect(site.db) as conn:
        return conn.execute("SELECT id, customer, item, quantity, delivery FROM orders WHERE customer = ? ORDER BY id",
                            (customer,)).fetchall()


def place(agent, site, customer, item, quantity="1", delivery=None):
    page = agent.ok("open", site.url(agent.host, "/orders/new"))
    # Each action's observation gives the refs for the next (refs are the latest observation's).
    page = agent.act("type", ref_of(page, "textbox", "Customer"), customer)
    page = agent.act("type", ref_of(page, "textbox", "Item"), item)
    page = agent.act("type", ref_of(page, "spinbutton", "Quantity"), quantity, "--clear")
    if delivery:
        page = agent.act("select", ref_of(page, "combobox", contains="Delivery"), delivery)
    return page


def test_order_form_posts_and_follows_the_redirect(agent, site):
    page = place(agent, site, agent.host, "teapot", "3", "express")
    done = agent.act("click", ref_of(page, "button", "Place order"))
    rows = orders(site, agent.host)
    assert [(r[2], r[3], r[4]) for r in rows] == [("teapot", 3, "express")]
    assert done["url"].endswith(f"/orders/{rows[0][0]}")
    assert done["title"] == f"Order {rows[0][0]}"


def test_enter_in_a_field_submits_the_form_once(agent, site):
    page = place(agent, site, agent.host, "kettle")
    item = ref_of(page, "textbox", "Item")
    agent.act("type", item, " lid", "--submit")
    assert [(r[2], r[3]) for r in orders(site, agent.host)] == [("kettle lid", 1)]


def test_csv_export_downloads_the_database_rows(agent, site):
    page = place(agent, site, agent.host, "mug", "2")
    agent.act("click", ref_of(page, "button", "Place order"))
    listing = agent.ok("open", site.url(agent.host, "/orders"))
    agent.act("click", ref_of(listing, "link", "Export CSV"))
    agent.ok("wait", "--download")
    downloads = agent.ok("downloads")["downloads"]
    assert downloads[0]["fileName"] == "orders.csv"
    target = os.path.join(agent.out_dir, "export.csv")
    os.makedirs(agent.out_dir, exist_ok=True)
    saved = agent.ok("download", "1", target)
    with open(saved["file"], newline="") as fh:
        exported = list(csv.reader(fh))
    with sqlite3.connect(site.db) as conn:
        rows = conn.execute("SELECT id, customer, item, quantity, delivery FROM orders ORDER BY id").fetchall()
    # Other tasks add orders concurrently: every row of the export is in the database, ours included.
    assert exported[0] == ["id", "customer", "item", "quantity", "delivery"]
    assert set(map(tuple, exported[1:])) <= {tuple(map(str, r)) for r in rows}
    assert [r for r in exported[1:] if r[1] == agent.host] == [[str(r[0]), agent.host, "mug", "2", "standard"]
                                                               for r in orders(site, agent.host)]


def test_confirmed_delete_removes_the_order(agent, site):
    page = place(agent, site, agent.host, "spoon")
    agent.act("click", ref_of(page, "button", "Place order"))
    (order_id,) = [r[0] for r in orders(site, agent.host)]
    listing = agent.ok("open", site.url(agent.host, "/orders"))
    agent.ok("click", ref_of(listing, "button", f"Delete #{order_id}"))
    dialogs = agent.ok("dialogs")["dialogs"]
    assert [d["type"] for d in dialogs] == ["confirm"]
    answered = agent.ok("dialog", dialogs[0]["dialogId"], "--accept")
    # The answer waits for the form's POST and the page it leads to (a wait for the URL would
    # match the listing already shown, before the POST reached the shop).
    assert answered["settle"]["status"] == "navigated", answered
    assert orders(site, agent.host) == []


def test_click_that_opens_a_confirm_tells_its_message(agent, site):
    page = place(agent, site, agent.host, "fork")
    agent.act("click", ref_of(page, "button", "Place order"))
    (order_id,) = [r[0] for r in orders(site, agent.host)]
    listing = agent.ok("open", site.url(agent.host, "/orders"))
    clicked = agent.ok("click", ref_of(listing, "button", f"Delete #{order_id}"))
    message = f"Delete order #{order_id} of {agent.host}?"
    assert "dialog_opened" in clicked["evidence"]["effects"], clicked["evidence"]
    assert clicked["dialog"]["type"] == "confirm" and clicked["dialog"]["message"] == message, clicked.get("dialog")
    dialog = agent.ok("wait", "--dialog")
    assert dialog["matched"].get("message") == message
