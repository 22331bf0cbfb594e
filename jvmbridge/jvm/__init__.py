"""The JVM side: finding a JVM, choosing its options, and the worker that drives it through JPype."""
