// Browser Pilot, `bp locate` in a frame of another process (broker/page/content.py): called on a frame
// element with a box in that frame's viewport, centres the box in the frame element's own
// document (its scroll containers, then its window) and returns the box in this viewport.
// Only this process scrolls: a native scrollIntoView would be carried on to other processes later.
(function (inner, noScroll) {
  "use strict";
  const fe = this;
  const box = () => {
    const [x, y] = contentOffset(fe);
    return {left: x + inner.left, top: y + inner.top, width: inner.width, height: inner.height};
  };
  if (!noScroll) scrollBoxIntoView(fe, box, true);  // scrolling denied by the policy: only measured
  return box();
})
