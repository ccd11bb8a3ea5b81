"""Human (TTY) views of shared result shapes. Page-derived strings are escaped so a crafted
label cannot forge a ref line or a terminal control sequence."""

from cli.output import escape


def _quote(text):
    return '"' + escape(text).replace('"', '\\"') + '"'


def _element(e, prefix=""):
    line = f"{prefix}[{e['ref']}] {escape(e['role'])} {_quote(e['name'])}"
    if "value" in e:
        line += f" value={_quote(e['value'])}"
    if e.get("checked"):
        line += " checked"
    return line


def _span(first, last):
    return str(first) if first == last else f"{first}-{last}"


BASES = {"none": "no previous snapshot of this tab", "navigation": "the tab shows a new document",
         "expired": "the previous snapshot expired"}


def _diff(d, lines):
    """--diff: `+` added, `~` changed, `-` removed refs (an element keeps its number)."""
    if d.get("base") != "previous":
        lines.append(f"[diff] full snapshot: {BASES.get(d.get('base'), escape(d.get('base')))}")
        return
    counts = (f"{len(d['added'])} added, {len(d['changed'])} changed, {len(d['removed'])} removed, "
              f"{d['unchanged']} unchanged")
    lines.append(f"[diff] {counts}")
    moved = [run for run in d.get("refMap") or () if run[0] != run[2]]  # a broker before stable refs
    if moved:
        shown = "; ".join(f"{_span(a, b)} -> {_span(n, n + b - a)}" for a, b, n in moved[:20])
        lines.append(f"[renumbered] {shown}" + (f"; … {len(moved) - 20} more" if len(moved) > 20 else ""))
    for e in d["added"]:
        lines.append(_element(e, "+"))
    for e in d["changed"]:
        was = f"was [{e['was']}]: " if e["was"] != e["ref"] else ""
        line = _element(e, "~") + f" ({was}{', '.join(e['fields'])})"
        if "checked" in e["fields"] and not e.get("checked"):
            line += " unchecked"
        lines.append(line)
    if d["removed"]:
        lines.append("- removed " + ", ".join(f"[{r}]" for r in d["removed"]))
    if not (d["added"] or d["changed"] or d["removed"] or moved):
        lines.append("(no changes)")


def observation(r):
    lines = [f"[page] {escape(r.get('title', ''))} | {escape(r.get('url', ''))}"]
    page = r.get("page")
    if page:
        lines += ["", f"[viewport] {page['viewportWidth']}x{page['viewportHeight']} at {page['scrollX']},{page['scrollY']}"
                      f" | {page['pixelsBelow']}px below"]
    lines.append("")
    if r.get("diff"):
        _diff(r["diff"], lines)
    elements = r.get("elements")
    if elements is not None:
        if not elements:
            lines.append("(no interactive elements)")
        for e in elements:
            lines.append(_element(e))
    if "matches" in r:  # --grep / --role
        lines.append(f"[matches] {r['matches']}")
    if r.get("truncated"):
        lines.append(f"[truncated: {', '.join(r['truncationReasons'])}]")
    for hint in r.get("hints") or []:
        refs = f" refs {','.join(map(str, hint['refs']))}" if hint.get("refs") else ""
        lines.append(f"[hint] {hint['code']} -> {hint.get('recommendedAction')}{refs}")
    dialog = r.get("dialog")
    if dialog:  # a JavaScript dialog now blocks the tab (bp dialogs / bp dialog)
        lines.append(f"[dialog] {escape(dialog.get('type'))} {escape(dialog.get('dialogId', ''))} pending:"
                     f" bp dialog {escape(dialog.get('dialogId', '<id>'))} --accept|--dismiss")
    evidence = r.get("evidence")
    if evidence:
        detail = ", ".join(evidence.get("effects") or []) or evidence.get("reason") or ""
        lines.append(f"[evidence] {evidence.get('action')}: {evidence.get('status')}" + (f" ({escape(detail)})" if detail else "")
                     + (f" ({escape(evidence['navigationError'])})" if evidence.get("navigationError") else ""))
    return "\n".join(lines)
