"""Human (TTY) views of shared result shapes. Page-derived strings are escaped so a crafted
label cannot forge a ref line or a terminal control sequence."""

from cli.output import escape


def _quote(text):
    return '"' + escape(text).replace('"', '\\"') + '"'


def observation(r):
    lines = [f"[page] {escape(r.get('title', ''))} | {escape(r.get('url', ''))}"]
    page = r.get("page")
    if page:
        lines += ["", f"[viewport] {page['viewportWidth']}x{page['viewportHeight']} at {page['scrollX']},{page['scrollY']}"
                      f" | {page['pixelsBelow']}px below"]
    lines.append("")
    elements = r.get("elements")
    if elements is not None:
        if not elements:
            lines.append("(no interactive elements)")
        for e in elements:
            line = f"[{e['ref']}] {escape(e['role'])} {_quote(e['name'])}"
            if "value" in e:
                line += f" value={_quote(e['value'])}"
            if e.get("checked"):
                line += " checked"
            lines.append(line)
    if r.get("truncated"):
        lines.append(f"[truncated: {', '.join(r['truncationReasons'])}]")
    for hint in r.get("hints") or []:
        refs = f" refs {','.join(map(str, hint['refs']))}" if hint.get("refs") else ""
        lines.append(f"[hint] {hint['code']} -> {hint.get('recommendedAction')}{refs}")
    evidence = r.get("evidence")
    if evidence:
        detail = ", ".join(evidence.get("effects") or []) or evidence.get("reason") or ""
        lines.append(f"[evidence] {evidence.get('action')}: {evidence.get('status')}" + (f" ({escape(detail)})" if detail else "")
                     + (f" ({escape(evidence['navigationError'])})" if evidence.get("navigationError") else ""))
    return "\n".join(lines)
