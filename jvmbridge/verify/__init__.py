"""`verify`, the conformance sweep: plan, sweep, attribute (a failure's smallest case, the flag that
cures it, known bugs), run (per host)."""
