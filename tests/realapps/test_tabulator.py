"""Tabulator (npm tabulator-tables) and Choices (npm choices.js) on one plain page (issue 38 item
4): an editable, sortable grid with column resize handles, a single select and a multi select.
Driven only through `bp`, judged from the page's own state (localStorage "state")."""

import pytest

from tests.realapps.widgets import Named

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]
LIBRARY = "tabulator"


def named(observation, name):
    return [(e["role"], e["name"]) for e in observation["elements"] if e["name"] == name]


def test_choices_single_select_is_one_listbox_to_select_in(app):
    app.open()
    # Choices draws a role=listbox box around its transparent <select>: the box is the control.
    assert named(app.seen, "Warehouse") == [("listbox", "Warehouse")]
    app.act("select", Named("listbox", "Warehouse"), "Lima").expect(warehouse="lima")
    assert app.seen["evidence"]["selected"] == ["Lima"], app.seen["evidence"]


def test_choices_multi_select_is_one_combobox_and_takes_two_tags(app):
    app.open()
    # A role=combobox box around the search field one types in: one control, the field, named Tags.
    assert named(app.seen, "Tags") == [("combobox", "Tags")]
    assert not [e for e in app.seen["elements"] if e["role"] == "combobox" and not e["name"]]
    hint = [h for h in app.seen.get("hints", []) if h["code"] == "autocomplete"]
    assert hint and hint[0]["refs"] == [int(Named("combobox", "Tags").ref(app.seen))], hint
    app.act("select", Named("combobox", "Tags"), "Cold chain")
    assert app.seen["evidence"]["selected"] == ["Cold chain"], app.seen["evidence"]  # not the list's highlight
    app.act("select", Named("combobox", "Tags"), "Express").expect(tags=["cold", "express"])
    assert named(app.seen, "Tags") == [("combobox", "Tags")]  # the chosen items' remove buttons aside


def test_tabulator_grid_offers_cells_not_resize_handles(app):
    app.open()
    assert not [e for e in app.seen["elements"] if not e["name"] and e["role"] == "button"], app.seen["elements"]
    headers = [e["name"] for e in app.seen["elements"] if e["role"] == "columnheader"]
    assert headers == ["Item", "Quantity", "Price"]


def test_tabulator_edit_the_quantity_of_coffee(app):
    app.open().click(Named("gridcell", "12"))
    editor = [e for e in app.seen["elements"] if e["role"] == "spinbutton"]
    assert [(e.get("value"), e.get("context"), e.get("min"), e.get("max")) for e in editor] == [("12", "Coffee", 0, 999)]
    app.act("type", str(editor[0]["ref"]), "15", "--clear", "--submit").expect(**{"Coffee.qty": 15})


def test_tabulator_sort_by_quantity(app):
    app.open().click(Named("columnheader", "Quantity")).expect(sorted=["qty asc"])
    cells = [e["name"] for e in app.seen["elements"] if e["role"] == "gridcell"]
    assert cells[0::2] == ["7", "12", "40"], cells


def test_sortable_reorder_the_picking_list(app):
    # SortableJS (HTML5 drag and drop in Chromium): its <li> items are no controls of their own.
    app.open().act("drag", "#picking li:nth-child(3)", "#picking li:first-child").expect(
        picking=["cocoa", "tea", "coffee"])
    assert app.seen["evidence"]["kind"] == "native", app.seen["evidence"]
