"""Layer 3, present: markdown and figures. summary.md, report.md, a node's and a fleet's
summary, matrix.md, `gmb compare`'s tables, every figure (figures/, plotkit.py). Takes data,
writes text and files; imports the layers below only."""
