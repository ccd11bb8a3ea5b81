"""The test's own DevTools connection to one tab of the launched Chromium (never Browser Pilot's):
Chromium's accessibility tree per frame, and the page's DOM nodes by backend id."""

from bp.pytest_plugin import DevTools


class Tab(DevTools):
    """One page target, by its DevTools id, over a WebSocket of the test's own."""

    def __init__(self, port, target_id, timeout=30):
        super().__init__(f"ws://127.0.0.1:{port}/devtools/page/{target_id}")
        self.ws.settimeout(timeout)

    @classmethod
    def by_url(cls, chromium, url):
        """The one page whose URL is `url` (each task of the suite has a host of its own)."""
        targets = [t for t in chromium.http("/json/list") if t["type"] == "page" and t["url"] == url]
        if len(targets) != 1:
            raise RuntimeError(f"expected one tab at {url}, found {len(targets)}")
        return cls(chromium.port, targets[0]["id"])

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def frames(self):
        """Frame ids of this tab's process, depth-first (the top document first). Cross-site
        (out-of-process) frames are other targets, and are not measured: see measure.py."""
        out = []

        def walk(node):
            out.append(node["frame"]["id"])
            for child in node.get("childFrames", []):
                walk(child)

        walk(self.call("Page.getFrameTree")["frameTree"])
        return out

    def ax_nodes(self):
        """Chromium's full accessibility tree of every frame of the tab's process: {nodeId: node}
        per frame, in a list."""
        trees = []
        for frame in self.frames():
            try:
                nodes = self.call("Accessibility.getFullAXTree", {"frameId": frame})["nodes"]
            except RuntimeError:
                # A cross-site frame is listed in the tree but its document is another process's.
                continue
            trees.append({n["nodeId"]: n for n in nodes})
        return trees
