"""Forms: scrolling, dropdowns and choosing options."""
