"""NiceGUI (PyPI nicegui: Python on the server, Vue and Quasar in the page, every asset served by
the app itself): one page per task, /w/<task>, with every widget kind NiceGUI has. Run by the
apps' own venv (.realapps/venv), never imported by the tests.

Its state, which the tests check: REALAPPS_STATE, one JSON line per change the server saw
({"task", "key", "value"}), written by the widgets' own server-side handlers."""

import json
import os
import random
import threading

from nicegui import ui

STATE = os.environ["REALAPPS_STATE"]
_lock = threading.Lock()
COUNTRIES = ["Argentina", "Brazil", "Canada", "Denmark", "Norway", "Peru", "Portugal", "Spain", "Sweden"]


def record(task, key, value):
    with _lock, open(STATE, "a") as fh:
        fh.write(json.dumps({"task": task, "key": key, "value": value}) + "\n")


@ui.page("/w/{task}")
def widgets(task: str):
    code = f"K{random.randint(1000, 9999)}"
    record(task, "code", code)
    ui.label("Team settings").classes("text-h5")
    with ui.row():
        with ui.column():
            ui.label("Consent").classes("text-subtitle2")
            ui.checkbox("Accept the terms", on_change=lambda e: record(task, "terms", e.value))
            ui.label("T-shirt size").classes("text-subtitle2")
            ui.radio(["Small", "Medium", "Large"], value="Small", on_change=lambda e: record(task, "size", e.value))
            ui.switch("Wi-Fi", on_change=lambda e: record(task, "wifi", e.value))
            ui.label("Volume").classes("text-subtitle2")
            ui.slider(min=0, max=100, value=30, on_change=lambda e: record(task, "volume", e.value)).classes("w-64")
            ui.select(["Free", "Team", "Pro", "Enterprise"], value="Free", label="Plan",
                      on_change=lambda e: record(task, "plan", e.value)).classes("w-48")
            ui.select(COUNTRIES, label="Country", with_input=True,
                      on_change=lambda e: record(task, "country", e.value)).classes("w-48")
        with ui.column():
            with ui.button("Actions"):
                with ui.menu():
                    ui.menu_item("Copy link", on_click=lambda: record(task, "action", "copy"))
                    with ui.menu_item("Share ▸", auto_close=False):
                        with ui.menu().props('anchor="top end" self="top start" auto-close'):
                            ui.menu_item("Email", on_click=lambda: record(task, "action", "share-email"))
                            ui.menu_item("Chat", on_click=lambda: record(task, "action", "share-chat"))
                    ui.menu_item("Archive", on_click=lambda: record(task, "action", "archive"))
            with ui.tabs(on_change=lambda e: record(task, "tab", e.value)) as tabs:
                ui.tab("Overview")
                ui.tab("Billing")
                ui.tab("Team")
            with ui.tab_panels(tabs, value="Overview"):
                with ui.tab_panel("Overview"):
                    ui.label("The team overview.")
                with ui.tab_panel("Billing"):
                    ui.label("Invoices are sent monthly.")
                with ui.tab_panel("Team"):
                    ui.label("Three members.")
            ui.label("Launch date").classes("text-subtitle2")
            ui.date(value="2026-03-01", on_change=lambda e: record(task, "date", e.value))
        with ui.column():
            name = ui.label("Team name: Apollo")
            with ui.dialog() as dialog, ui.card():
                ui.label("Rename team")
                new_name = ui.input("New name", value="Apollo")

                def rename():
                    record(task, "project", new_name.value)
                    name.set_text(f"Team name: {new_name.value}")
                    dialog.close()

                with ui.row():
                    ui.button("Save name", on_click=rename)
                    ui.button("Cancel", on_click=dialog.close)
            ui.button("Rename team", on_click=dialog.open)
            rows = [{"product": "Coffee", "price": 4}, {"product": "Tea", "price": 3}, {"product": "Cocoa", "price": 5}]
            record(task, "products", rows)

            def edited(event):
                row = event.args["data"]
                for r in rows:
                    if r["product"] == row["product"]:
                        r["price"] = row["price"]
                record(task, "products", rows)

            ui.aggrid({"columnDefs": [{"field": "product", "headerName": "Product"},
                                      {"field": "price", "headerName": "Price", "editable": True,
                                       "cellDataType": "number"}],
                       "rowData": [dict(r) for r in rows]}).classes("w-72 h-48").on("cellValueChanged", edited)
            # A folder is not selectable (Quasar's node option): a click on it opens or closes it.
            ui.tree([{"id": "Documents", "selectable": False, "children": [{"id": "Report.pdf"}, {"id": "Budget.xlsx"}]},
                     {"id": "Photos"}],
                    label_key="id", on_select=lambda e: record(task, "file", e.value))
            ui.upload(label="Attach a file", auto_upload=True,
                      on_upload=lambda e: record(task, "upload", [e.file.name])).classes("w-64")
            ui.input("Confirmation code", on_change=lambda e: record(task, "confirmation", e.value))
            ui.button("Send code", on_click=lambda: ui.notify(f"Your code is {code}", timeout=0, close_button="Dismiss"))


if __name__ in {"__main__", "__mp_main__"}:
    ui.run(host="127.0.0.1", port=int(os.environ["REALAPPS_PORT"]), reload=False, show=False,
           title="NiceGUI widgets", show_welcome_message=False, storage_secret=None)
