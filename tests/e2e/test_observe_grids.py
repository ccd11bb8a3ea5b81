"""Grids, structures and file pickers observed as Chromium's accessibility engine exposes them
(issue 26 items 2, 4 and 6), on real Chromium: a data grid's cells and headers are offered and
edited by a double-click; a tab panel or region made focusable to be read is not a button; a
file input drawn as a styled button is that one button."""

import os
import shutil

from tests import helpers
from tests.helpers import bp, ok

# A data grid as MUI and AG Grid write one: roving tabindex (-1 but the current cell), a cell
# holding one checkbox (offered once, as the checkbox), an editor swapped in on double-click
# that commits on Enter. Beside it, a table of text, whose cells are not controls.
GRID = """<div role=grid aria-label=Products>
 <div role=row aria-rowindex=1><div role=columnheader tabindex=0>Product</div><div role=columnheader tabindex=-1>Price</div><div role=columnheader tabindex=-1>Pick</div></div>
 <div role=row aria-rowindex=2><div role=gridcell tabindex=-1>Coffee</div><div role=gridcell tabindex=-1 class=price>4</div><div role=gridcell tabindex=-1><input type=checkbox aria-label="Pick Coffee"></div></div>
 <div role=row aria-rowindex=3><div role=gridcell tabindex=-1>Tea</div><div role=gridcell tabindex=-1 class=price>3</div><div role=gridcell tabindex=-1><input type=checkbox aria-label="Pick Tea"></div></div>
</div>
<table><tr><th>City</th></tr><tr><td>Lyon</td></tr></table>
<table class=sheet><tr><td tabindex=-1>Cell one</td><td>Plain text</td></tr></table>
<script>
for (const cell of document.querySelectorAll('.price')) cell.addEventListener('dblclick', () => {
  const input = document.createElement('input'); input.type = 'number'; input.value = cell.textContent;
  cell.textContent = ''; cell.append(input); input.focus();
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') cell.textContent = input.value; });
});
</script>"""

STRUCTURES = """<div role=tablist><button role=tab aria-selected=true>Overview</button></div>
<div role=tabpanel tabindex=0 aria-label=Overview>The project overview.</div>
<div role=region aria-label=Log tabindex=0 style="height:60px;overflow:auto"><div style="height:600px">lines</div></div>
<div role=tabpanel tabindex=0 aria-label=Settings><button>Save</button></div>"""

FILES = """<label role=button tabindex=0 style="display:inline-block;padding:8px;background:#36c;color:white">Attach a file
<input type=file id=hidden style="position:absolute;width:1px;height:1px;clip:rect(0 0 0 0);overflow:hidden"></label>
<p><input type=file id=plain></p>
<select placeholder="Pick a country"><option>Peru</option></select>"""


def elements(observation, role=None, name=None):
    return [e for e in observation["elements"] if (role is None or e["role"] == role) and (name is None or e["name"] == name)]


def test_a_data_grids_cells_and_headers_are_offered_and_a_cell_is_edited_by_double_click(home, connected, pages):
    page = ok(home, connected, "open", pages.page(GRID))
    assert [e["name"] for e in elements(page, "columnheader")] == ["Product", "Price", "Pick"]
    assert [e["name"] for e in elements(page, "gridcell")] == ["Coffee", "4", "Tea", "3", "Cell one"]
    # The checkbox cells are the checkboxes: one entry per control.
    assert [e["name"] for e in elements(page, "checkbox")] == ["Pick Coffee", "Pick Tea"]
    # A table of text offers nothing; a focusable cell of a native table is a grid cell.
    assert not elements(page, name="Lyon") and not elements(page, name="Plain text")
    assert [e["name"] for e in elements(page, "gridcell", "Cell one")] == ["Cell one"]
    tea = elements(page, "gridcell", "3")[0]["ref"]
    editing = ok(home, connected, "click", str(tea), "--double")
    before = {e["ref"] for e in page["elements"]}
    editor = [e for e in editing["elements"] if e["role"] == "spinbutton" and e["ref"] not in before]
    assert [e.get("value") for e in editor] == ["3"], editing["elements"]
    ok(home, connected, "type", str(editor[0]["ref"]), "6", "--clear", "--submit")
    assert ok(home, connected, "eval", "[...document.querySelectorAll('.price')].map(c => c.textContent)")["value"] == ["4", "6"]


def test_a_focusable_structure_is_read_not_offered(home, connected, pages):
    page = ok(home, connected, "open", pages.page(STRUCTURES))
    # Focus makes a tab panel or a scrolling region readable by keyboard, not something to press:
    # neither is offered (as a button named with its text), the controls inside them are.
    assert [(e["role"], e["name"]) for e in page["elements"]] == [("tab", "Overview"), ("button", "Save")]
    assert "The project overview." in ok(home, connected, "read")["text"]


def test_a_file_input_drawn_as_a_button_is_that_button_and_takes_the_upload(home, connected, pages):
    page = ok(home, connected, "open", pages.page(FILES))
    # The styled label is the control (once, not again as its clipped input); an unlabelled file
    # input is named as Chromium names it; a placeholder on a <select> names nothing.
    assert [(e["role"], e["name"]) for e in page["elements"]] == [
        ("button", "Attach a file"), ("button", "Choose File"), ("combobox", "")]
    folder = helpers.short_tmpdir("bpgrid-")
    try:
        source = os.path.join(folder, "notes.txt")
        with open(source, "w") as fh:
            fh.write("notes\n")
        result = bp(home, "upload", source, "--ref", str(page["elements"][0]["ref"]), env=connected)
        assert result.rc == 0, result
        assert result.json["evidence"]["status"] == "verified"
        assert ok(home, connected, "eval", "[hidden.files.length, hidden.files[0].name, plain.files.length]")["value"] == \
            [1, "notes.txt", 0]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# Tabulator's markup: sortable headers say so (aria-sort) without a tabindex; only the editable
# cells are focusable; the task's name is a plain cell.
SORTABLE = """<div role=grid aria-label=Tasks>
  <div role=row><div role=columnheader aria-sort=none onclick="document.title='sorted'">Task</div>
    <div role=columnheader>Points</div></div>
  <div role=row><div role=gridcell>Fix login bug</div><div role=gridcell tabindex=0>3</div></div>
  <div role=row><div role=gridcell>Upgrade database</div><div role=gridcell tabindex=0>8</div></div></div>"""


def test_a_sortable_header_is_offered_and_a_cell_reads_with_its_row(home, connected, pages):
    page = ok(home, connected, "open", pages.page(SORTABLE))
    assert [e["name"] for e in elements(page, "columnheader")] == ["Task"]  # "Points" neither sorts nor focuses
    assert [(e["name"], e.get("context")) for e in elements(page, "gridcell")] == [
        ("3", "Fix login bug"), ("8", "Upgrade database")]
    assert ok(home, connected, "click", str(elements(page, "columnheader", "Task")[0]["ref"]))["title"] == "sorted"
