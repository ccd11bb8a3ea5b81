"""The real-app suite's web server: a small Flask shop (POST/redirect order form, CSV download,
a confirm() before delete, a Quill rich-text editor, a Tom Select combobox) plus the installed
static apps (TodoMVC, the MkDocs-Material site, Swagger UI with the shop's own API, Debian's
Python docs). Run by the apps' own venv (.realapps/venv), never imported by the tests.

Its state, which the tests check: the SQLite database REALAPPS_DB and the request log
REALAPPS_LOG (one JSON line per request: method, path, query, status)."""

import csv
import io
import json
import os
import sqlite3
import threading

from flask import Flask, Response, abort, g, jsonify, redirect, request, send_from_directory

ROOT = os.environ["REALAPPS_ROOT"]
NPM = os.path.join(ROOT, "npm", "node_modules")
MOUNTS = {
    "todomvc": os.path.join(NPM, "todomvc", "examples", "vanillajs"),
    "mkdocs": os.path.join(ROOT, "mkdocs-site"),
    "swagger": os.path.join(NPM, "swagger-ui-dist"),
    "pydocs": os.path.realpath("/usr/share/doc/python3/html"),
    "npm": NPM,
    # Component-library pages: the bundles scripts/ensure-realapps.sh built, their page sources.
    "bundles": os.path.join(ROOT, "bundles"),
    "components": os.path.join(os.path.dirname(os.path.abspath(__file__)), "components"),
}
DB = os.environ["REALAPPS_DB"]
LOG = os.environ["REALAPPS_LOG"]
_log_lock = threading.Lock()

app = Flask(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer TEXT, item TEXT, quantity INTEGER,
                                   delivery TEXT);
CREATE TABLE IF NOT EXISTS documents (id INTEGER PRIMARY KEY, text TEXT, html TEXT);
CREATE TABLE IF NOT EXISTS shipments (id INTEGER PRIMARY KEY, country TEXT);
CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY, name TEXT, status TEXT);
"""
COUNTRIES = ["Argentina", "Brazil", "Canada", "Denmark", "Egypt", "Finland", "Ghana", "Hungary", "India",
             "Japan", "Kenya", "Mexico", "Norway", "Peru", "Portugal", "Spain", "Sweden", "Uruguay"]


def db():
    if "db" not in g:
        g.db = sqlite3.connect(DB)
        g.db.row_factory = sqlite3.Row
    return g.db


@app.teardown_appcontext
def close_db(_exc):
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


@app.after_request
def log_request(response):
    line = json.dumps({"method": request.method, "path": request.path, "query": request.query_string.decode(),
                       "status": response.status_code})
    with _log_lock, open(LOG, "a") as fh:
        fh.write(line + "\n")
    return response


def page(title, body, head=""):
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title>{head}</head>"
            f"<body><main><h1>{title}</h1>{body}</main></body></html>")


@app.get("/")
def home():
    return page("Shop", '<p><a href="/orders/new">New order</a> · <a href="/orders">Orders</a> · '
                        '<a href="/editor">Editor</a> · <a href="/ship">Ship</a></p>')


@app.get("/orders/new")
def order_form():
    return page("New order", """
<form method="post" action="/orders">
  <label>Customer <input name="customer" required></label>
  <label>Item <input name="item" required></label>
  <label>Quantity <input name="quantity" type="number" min="1" value="1"></label>
  <label>Delivery <select name="delivery"><option>standard</option><option>express</option>
     <option>pickup</option></select></label>
  <button type="submit">Place order</button>
</form>""")


@app.post("/orders")
def place_order():
    form = request.form
    cur = db().execute("INSERT INTO orders (customer, item, quantity, delivery) VALUES (?, ?, ?, ?)",
                       (form.get("customer", ""), form.get("item", ""), int(form.get("quantity") or 1),
                        form.get("delivery", "")))
    db().commit()
    return redirect(f"/orders/{cur.lastrowid}", code=303)


@app.get("/orders/<int:order_id>")
def show_order(order_id):
    row = db().execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        abort(404)
    return page(f"Order {order_id}", f"<p>Thank you, {row['customer']}: {row['quantity']} × {row['item']} "
                                     f"({row['delivery']}).</p><p><a href=\"/orders\">All orders</a></p>")


@app.get("/orders")
def list_orders():
    rows = db().execute("SELECT * FROM orders ORDER BY id").fetchall()
    items = "".join(
        f"<li>#{r['id']} {r['customer']}: {r['quantity']} × {r['item']} "
        f"<form method=post action=\"/orders/{r['id']}/delete\" style=display:inline "
        f"onsubmit=\"return confirm('Delete order #{r['id']} of {r['customer']}?')\">"
        f"<button>Delete #{r['id']}</button></form></li>" for r in rows)
    return page("Orders", f'<ul>{items}</ul><p><a href="/orders.csv">Export CSV</a></p>')


@app.post("/orders/<int:order_id>/delete")
def delete_order(order_id):
    db().execute("DELETE FROM orders WHERE id = ?", (order_id,))
    db().commit()
    return redirect("/orders", code=303)


@app.get("/orders.csv")
def export_orders():
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "customer", "item", "quantity", "delivery"])
    for r in db().execute("SELECT id, customer, item, quantity, delivery FROM orders ORDER BY id"):
        writer.writerow(list(r))
    return Response(out.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": "attachment; filename=orders.csv"})


@app.get("/editor")
def editor():
    head = '<link rel=stylesheet href="/npm/quill/dist/quill.snow.css"><script src="/npm/quill/dist/quill.js"></script>'
    return page("Editor", """
<div id="editor"><p>Draft</p></div>
<button id="save" type="button">Save document</button> <span id="status" role="status"></span>
<script>
  const quill = new Quill('#editor', {theme: 'snow', placeholder: 'Write here'});
  document.getElementById('save').addEventListener('click', async () => {
    const resp = await fetch('/api/documents', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({text: quill.getText(), html: quill.root.innerHTML})});
    document.getElementById('status').textContent = resp.ok ? 'Saved' : 'Save failed';
  });
</script>""", head)


@app.post("/api/documents")
def save_document():
    data = request.get_json()
    db().execute("INSERT INTO documents (text, html) VALUES (?, ?)", (data["text"], data["html"]))
    db().commit()
    return jsonify(ok=True)


@app.get("/ship")
def ship_form():
    head = ('<link rel=stylesheet href="/npm/tom-select/dist/css/tom-select.css">'
            '<script src="/npm/tom-select/dist/js/tom-select.complete.js"></script>')
    options = "".join(f"<option value=\"{c}\">{c}</option>" for c in COUNTRIES)
    return page("Ship", f"""
<form method="post" action="/ship">
  <label for="country">Destination country</label>
  <select id="country" name="country" placeholder="Pick a country…"><option value="">Pick a country…</option>{options}</select>
  <button type="submit">Ship it</button>
</form>
<script>new TomSelect('#country', {{create: false}});</script>""", head)


@app.post("/ship")
def ship():
    cur = db().execute("INSERT INTO shipments (country) VALUES (?)", (request.form.get("country", ""),))
    db().commit()
    return redirect(f"/ship/{cur.lastrowid}", code=303)


@app.get("/ship/<int:shipment_id>")
def shipped(shipment_id):
    row = db().execute("SELECT * FROM shipments WHERE id = ?", (shipment_id,)).fetchone()
    return page(f"Shipment {shipment_id}", f"<p>Shipping to {row['country']}.</p>")


@app.get("/api/openapi.json")
def openapi():
    return jsonify({
        "openapi": "3.0.3",
        "info": {"title": "Pet shop API", "version": "1.0.0"},
        "paths": {
            "/api/pets": {
                "get": {"summary": "List pets", "operationId": "listPets",
                        "parameters": [{"name": "status", "in": "query", "required": False,
                                        "schema": {"type": "string", "enum": ["available", "pending", "sold"]}}],
                        "responses": {"200": {"description": "The pets"}}},
                "post": {"summary": "Add a pet", "operationId": "addPet",
                         "requestBody": {"required": True, "content": {"application/json": {"schema": {
                             "type": "object", "properties": {"name": {"type": "string"},
                                                              "status": {"type": "string"}},
                             "example": {"name": "Rex", "status": "available"}}}}},
                         "responses": {"201": {"description": "Added"}}},
            }
        },
    })


@app.get("/api/pets")
def list_pets():
    status = request.args.get("status")
    query, args = "SELECT id, name, status FROM pets", ()
    if status:
        query, args = query + " WHERE status = ?", (status,)
    return jsonify([dict(r) for r in db().execute(query + " ORDER BY id", args)])


@app.post("/api/pets")
def add_pet():
    data = request.get_json(force=True)
    cur = db().execute("INSERT INTO pets (name, status) VALUES (?, ?)", (data.get("name"), data.get("status")))
    db().commit()
    return jsonify(id=cur.lastrowid, name=data.get("name"), status=data.get("status")), 201


@app.get("/swagger/swagger-initializer.js")
def swagger_initializer():
    # Swagger UI's own initializer points at its demo petstore on the internet; ours at our spec.
    return Response("window.onload = function () { window.ui = SwaggerUIBundle({url: '/api/openapi.json', "
                    "dom_id: '#swagger-ui', presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout'}); };",
                    mimetype="application/javascript")


@app.get("/library/<name>")
def component_library(name):
    """A component library's page: its bundle (a React app) on an empty document with its own
    stylesheet if it has one, or a plain HTML page of its own (Bootstrap)."""
    here = MOUNTS["components"]
    if os.path.exists(os.path.join(here, f"{name}.html")):
        return send_from_directory(here, f"{name}.html")
    if not os.path.exists(os.path.join(MOUNTS["bundles"], f"{name}.js")):
        abort(404)
    style = f"<link rel=stylesheet href=/components/{name}.css>" if os.path.exists(os.path.join(here, f"{name}.css")) else ""
    if os.path.exists(os.path.join(MOUNTS["bundles"], f"{name}.css")):
        style += f"<link rel=stylesheet href=/bundles/{name}.css>"  # the stylesheets the bundle imports
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{name} widgets</title>{style}</head>"
            f"<body><div id=root></div><script src=/bundles/{name}.js></script></body></html>")


@app.get("/<mount>/")
@app.get("/<mount>/<path:path>")
def static_app(mount, path=""):
    base = MOUNTS.get(mount)
    if base is None:
        abort(404)
    if path == "" or path.endswith("/"):
        path += "index.html"
    return send_from_directory(base, path)


if __name__ == "__main__":
    conn = sqlite3.connect(DB)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO pets (name, status) VALUES (?, ?)",
                     [("Bella", "available"), ("Milo", "sold"), ("Luna", "pending"), ("Otis", "sold")])
    conn.commit()
    conn.close()
    app.run(host="127.0.0.1", port=int(os.environ["REALAPPS_PORT"]), threaded=True)
