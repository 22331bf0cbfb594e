"""The native side: OpenSSL through pyca/cryptography and through the `openssl` command."""
