"""The fast tier (`pytest -m fast`): tests that need no JVM, OpenSSL, qemu, sshd or browser."""
