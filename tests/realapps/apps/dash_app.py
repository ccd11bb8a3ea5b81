"""Plotly Dash (PyPI dash: React components, Python callbacks on the server, every asset served by
the app itself): one page per task, /w/<task>, with every widget kind Dash's own component
libraries have (dcc, dash_table): checkbox, radio, slider, select, searchable dropdown, tabs,
date picker, a confirm dialog, an editable table, file upload and a live region. Dash has no
switch, menu or tree of its own. Run by the apps' own venv (.realapps/venv), never imported by
the tests.

Its state, which the tests check: REALAPPS_STATE, one JSON line per change a callback saw
({"task", "key", "value"})."""

import json
import os
import random
import threading

from dash import Dash, Input, Output, State, dash_table, dcc, html

STATE = os.environ["REALAPPS_STATE"]
_lock = threading.Lock()
COUNTRIES = ["Argentina", "Brazil", "Canada", "Denmark", "Norway", "Peru", "Portugal", "Spain", "Sweden"]
PRODUCTS = [{"product": "Coffee", "price": 4}, {"product": "Tea", "price": 3}, {"product": "Cocoa", "price": 5}]


def record(pathname, key, value):
    task = (pathname or "/w/").rsplit("/", 1)[-1]
    with _lock, open(STATE, "a") as fh:
        fh.write(json.dumps({"task": task, "key": key, "value": value}) + "\n")


app = Dash(__name__, title="Dash widgets", serve_locally=True)
app.layout = html.Main([
    dcc.Location(id="url"),
    html.H1("Report settings"),
    html.Section([html.H2("Consent"), dcc.Checklist(["Accept the terms"], [], id="terms")]),
    html.Section([html.H2("T-shirt size"), dcc.RadioItems(["Small", "Medium", "Large"], "Small", id="size")]),
    html.Section([html.H2("Volume"), dcc.Slider(0, 100, 1, value=30, id="volume", marks={0: "0", 50: "50", 100: "100"})],
                 style={"width": "320px"}),
    html.Section([html.H2("Plan"), dcc.Dropdown(["Free", "Team", "Pro", "Enterprise"], "Free", id="plan",
                                                clearable=False, searchable=False)], style={"width": "240px"}),
    html.Section([html.H2("Country"), dcc.Dropdown(COUNTRIES, id="country", placeholder="Choose a country")],
                 style={"width": "240px"}),
    html.Section([html.H2("Details"), dcc.Tabs(id="tab", value="overview", children=[
        dcc.Tab(label="Overview", value="overview", children=html.P("The report overview.")),
        dcc.Tab(label="Billing", value="billing", children=html.P("Invoices are sent monthly.")),
        dcc.Tab(label="Team", value="team", children=html.P("Three members."))])]),
    html.Section([html.H2("Launch date"), dcc.DatePickerSingle(id="date", date="2026-03-01")]),
    html.Section([html.H2("Draft"), html.Button("Delete draft", id="delete"),
                  dcc.ConfirmDialog(id="confirm", message="Delete the draft for good?"),
                  html.P("Draft kept.", id="draft")]),
    html.Section([html.H2("Prices"), dash_table.DataTable(
        id="prices", data=[dict(r) for r in PRODUCTS],
        columns=[{"name": "Product", "id": "product", "editable": False},
                 {"name": "Price", "id": "price", "type": "numeric", "editable": True}])], style={"width": "320px"}),
    html.Section([html.H2("Attachment"), dcc.Upload(html.Button("Attach a file"), id="upload"),
                  html.P(id="uploaded")]),
    html.Section([html.H2("Notifications"), html.Label("Confirmation code", htmlFor="confirmation"),
                  dcc.Input(id="confirmation"),
                  html.Button("Send code", id="send"), html.Div(id="notice", role="status")]),
    dcc.Store(id="code"),
])


def recorder(key, prop="value"):
    @app.callback(Output(f"{key}-seen", "data"), Input(key, prop), State("url", "pathname"), prevent_initial_call=True)
    def seen(value, pathname):
        record(pathname, key, value)
        return value

    app.layout.children.append(dcc.Store(id=f"{key}-seen"))


for name in ("terms", "size", "volume", "plan", "country", "tab", "confirmation"):
    recorder(name)
recorder("date", "date")


@app.callback(Output("prices-seen", "data"), Input("prices", "data"), State("url", "pathname"), prevent_initial_call=True)
def prices_changed(rows, pathname):
    record(pathname, "products", [{"product": r["product"], "price": r["price"]} for r in rows])
    return rows


app.layout.children.append(dcc.Store(id="prices-seen"))


@app.callback(Output("confirm", "displayed"), Input("delete", "n_clicks"), prevent_initial_call=True)
def ask(_clicks):
    return True


@app.callback(Output("draft", "children"), Input("confirm", "submit_n_clicks"), State("url", "pathname"),
              prevent_initial_call=True)
def delete(_clicks, pathname):
    record(pathname, "draft", "deleted")
    return "Draft deleted."


@app.callback(Output("uploaded", "children"), Input("upload", "filename"), State("url", "pathname"),
              prevent_initial_call=True)
def uploaded(filename, pathname):
    record(pathname, "upload", [filename])
    return f"Attached {filename}"


@app.callback(Output("notice", "children"), Output("code", "data"), Input("send", "n_clicks"),
              State("url", "pathname"), prevent_initial_call=True)
def send(_clicks, pathname):
    code = f"K{random.randint(1000, 9999)}"
    record(pathname, "code", code)
    return f"Your code is {code}", code


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ["REALAPPS_PORT"]), debug=False)
