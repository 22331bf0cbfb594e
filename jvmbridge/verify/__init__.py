"""`verify`, the conformance sweep: plan, sweep, attribute (findings and known bugs), run (per host)."""
