"""Two menu libraries nobody here wrote (issue 38 item 1): jQuery UI's menu and @szhsin/react-menu,
each behind a menu button, each with a submenu. jQuery UI's older markup puts an entry's text right
in its <li>, so the entries have no role of their own inside the role=menu list, and Chromium's
accessibility tree ignores them: bp offers them as the menu items their container implies, with
the submenu they hold as `haspopup` and whether it shows as `expanded`. Judged from the page's
own state (localStorage "state"), never bp's word."""

import pytest

from tests.realapps.widgets import Named

pytestmark = [pytest.mark.realapps, pytest.mark.chromium]


def entry(observation, name):
    found = [e for e in observation["elements"] if e["name"] == name]
    assert len(found) == 1, [(e["ref"], e["role"], e["name"]) for e in observation["elements"]]
    return found[0]


@pytest.mark.parametrize("app", ["jquery-ui"], indirect=True)
def test_role_less_entries_open_their_submenu_and_pick_csv(app):
    app.open().click(Named("button", "More"))
    export = entry(app.seen, "Export")
    assert (export["role"], export.get("haspopup"), export.get("expanded")) == ("menuitem", "menu", False)
    assert entry(app.seen, "Print")["role"] == "menuitem"
    assert not [e for e in app.seen["elements"] if e["name"] in ("CSV", "PDF")]  # the submenu is closed
    app.act("click", str(export["ref"]))
    export = entry(app.seen, "Export")
    assert export.get("expanded") is True, export
    app.act("click", Named("menuitem", "CSV")).expect(action="export-csv")


@pytest.mark.parametrize("app", ["react-menu"], indirect=True)
def test_a_submenu_entry_says_it_opens_a_menu(app):
    app.open().click(Named("button", "Actions"))
    # Named "Share", without the "❯" its stylesheet draws after it (::after, which the engine reads).
    share = entry(app.seen, "Share")
    assert (share["role"], share.get("haspopup"), share.get("expanded")) == ("menuitem", "menu", False), share
    app.act("click", str(share["ref"]))
    assert entry(app.seen, "Share").get("expanded") is True
    app.act("click", Named("menuitem", "Chat")).expect(action="share-chat")
