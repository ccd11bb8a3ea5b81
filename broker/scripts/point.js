// Browser Pilot's point on an element a CSS selector found (bp drag by selector): where a person's
// pointer would land on it, by the ref resolver's rule (lib.js), after scrolling it into view.
(function (el, opts) {
  "use strict";
  if (!Array.from(el.getClientRects()).some((r) => r.width > 0 && r.height > 0)) return {refuse: "no_layout"};
  if (!scrollReach(el)) return {refuse: "outside_viewport"};
  reveal(el, true, false);
  const found = hitTest(el, false);
  if (!found) return {refuse: "outside_viewport"};
  if (found.points.length) return {x: found.points[0][0], y: found.points[0][1]};
  return found.obstruction ? {refuse: "obscured", obstruction: found.obstruction} : {refuse: "outside_viewport"};
})
