"""`verify`, the conformance sweep: plan (the cases, OpenSSL's bytes for each), sweep (one watched
JVM through them), attribute (a failure's smallest case, the flags that turn it off, known bugs),
run (per host)."""
