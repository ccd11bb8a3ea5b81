"""bp trace of a real-app task (the Flask shop's order form), exported and opened in Chromium over
the test's own DevTools connection: every step in order, every thumbnail decoded, and the text
the Agent typed nowhere in the file."""

import os
import sqlite3
import time

import pytest

from tests.realapps.agent import ref_of

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def test_a_traced_order_exports_as_a_page_a_person_can_open(agent, site, chromium):
    customer = f"cust{os.urandom(5).hex()}"  # typed, and shown back by the shop: never in the trace
    agent.ok("trace", "start", "--screenshots")
    page = agent.ok("open", site.url(agent.host, "/orders/new"))
    page = agent.act("type", ref_of(page, "textbox", "Customer"), customer)
    page = agent.act("type", ref_of(page, "textbox", "Item"), "teapot")
    page = agent.act("type", ref_of(page, "spinbutton", "Quantity"), "3", "--clear")
    page = agent.act("select", ref_of(page, "combobox", contains="Delivery"), "express")
    done = agent.act("click", ref_of(page, "button", "Place order"))
    with sqlite3.connect(site.db) as conn:
        (order_id,) = conn.execute("SELECT id FROM orders WHERE customer = ?", (customer,)).fetchone()
    assert done["title"] == f"Order {order_id}"
    shown = agent.ok("read")
    assert customer in shown["text"]  # the shop shows the typed name back on the order's page
    agent.ok("trace", "stop")
    exported = agent.ok("trace", "export", "order-trace.html")
    assert exported["steps"] == 7 and exported["images"] == 6
    path = exported["file"]
    data = open(path, "rb").read()
    assert customer.encode() not in data and b"teapot" not in data  # typed text, whatever it was

    target = chromium.new_user_tab("file://" + path)
    try:
        def js(expression):
            reply = chromium.evaluate(target, expression)
            return reply["result"]["result"].get("value")

        deadline = time.monotonic() + 20
        # The new tab is about:blank (complete, no images) until the file's document commits.
        loaded = ("location.protocol === 'file:' && document.readyState === 'complete'"
                  " && Array.from(document.images).every(i => i.complete)")
        while not js(loaded):
            assert time.monotonic() < deadline, "the exported trace did not load"
            time.sleep(0.1)
        steps = js("""Array.from(document.querySelectorAll('#steps > li.step')).map(li => [
            li.dataset.command, li.dataset.outcome,
            Array.from(li.querySelectorAll('img.thumb')).map(i => i.naturalWidth > 0 && i.naturalHeight > 0)])""")
        assert [s[0] for s in steps] == ["open", "type", "type", "type", "select", "click", "read"]
        assert all(s[1] == "ok" for s in steps)
        assert [s[2] for s in steps] == [[True]] * 6 + [[]]  # every action has its decoded picture
        titles = js("Array.from(document.querySelectorAll('#steps .where .title')).map(e => e.textContent)")
        assert titles[0] == "New order" and titles[5] == f"Order {order_id}"
    finally:
        chromium.close_tab(target)
