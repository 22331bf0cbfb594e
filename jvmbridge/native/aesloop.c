/*
 * The C side of the native comparison: the same per-message work as the JVM's doFinal loop, and
 * openssl speed's stream, timed inside C against the system's libcrypto (what the openssl
 * command uses). Called from Python through ctypes; built by jvmbridge/native/c_loop.py.
 *
 * Message shape: one EVP_CIPHER_CTX, keyed once (as the JVM reuses its Cipher); each message
 * resets the IV (EVP_CipherInit_ex without key), updates and finishes (CBC pads; GCM encryption
 * gets the next IV after each message, as the JCE insists, and appends its tag: message i of a
 * call uses the given IV plus i). Stream shape: EVP_CipherUpdate of the input
 * into one buffer, never finished, as `openssl speed -evp`.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define TAG_BYTES 16

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

/* OpenSSL's own account of the CPU features it uses ("CPUINFO: OPENSSL_ia32cap=..."). */
const char *aesloop_cpuinfo(void) {
    return OpenSSL_version(OPENSSL_CPU_INFO);
}

const char *aesloop_openssl_version(void) {
    return OpenSSL_version(OPENSSL_VERSION);
}

/* The GCM nonce counts up in its last 4 bytes (big-endian, wrapping), one per message. */
static void next_iv(unsigned char *iv, int iv_len) {
    for (int i = iv_len - 1; i >= iv_len - 4 && ++iv[i] == 0; i--) {
    }
}

/*
 * Runs `n` messages (stream: `n` updates) of `in` and returns the elapsed nanoseconds, or -1 on an
 * OpenSSL error. `out` (in_len + 32 bytes) holds the last message's output, its length in *out_len.
 * With `decrypt`, `in` is the ciphertext (a GCM message's with its tag appended; a stream's without).
 */
int64_t aesloop_run(const char *cipher_name, int stream, int decrypt, const unsigned char *key,
                    const unsigned char *iv_in, int iv_len, const unsigned char *in, int in_len,
                    int64_t n, unsigned char *out, int *out_len) {
    const EVP_CIPHER *cipher = EVP_get_cipherbyname(cipher_name);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int gcm = EVP_CIPHER_get_mode(cipher) == EVP_CIPH_GCM_MODE;
    int data_len = gcm && decrypt && !stream ? in_len - TAG_BYTES : in_len;  /* a message's tag is not data */
    unsigned char iv[16];
    int ok = cipher != NULL && ctx != NULL && iv_len <= (int) sizeof iv && data_len >= 0;
    int64_t elapsed = -1;

    memcpy(iv, iv_in, iv_len);
    if (ok && gcm) {
        ok = EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, !decrypt)
             && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, iv_len, NULL);
        cipher = NULL;  /* set: the key goes in below */
    }
    ok = ok && EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, !decrypt)
         /* A stream is never finished, so padding never applies: no block held back for it. */
         && (!stream || EVP_CIPHER_CTX_set_padding(ctx, 0));
    if (ok) {
        int64_t start = now_ns();
        int len = 0, final_len = 0;
        for (int64_t i = 0; ok && i < n; i++) {
            if (stream) {
                ok = EVP_CipherUpdate(ctx, out, &len, in, data_len);
                continue;
            }
            ok = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1)
                 && (!gcm || !decrypt
                     || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, (void *) (in + data_len)))
                 && EVP_CipherUpdate(ctx, out, &len, in, data_len)
                 && EVP_CipherFinal_ex(ctx, out + len, &final_len);
            len += final_len;
            if (ok && gcm && !decrypt) {
                ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out + len);
                len += TAG_BYTES;
                next_iv(iv, iv_len);
            }
        }
        elapsed = ok ? now_ns() - start : -1;
        *out_len = len;
    }
    EVP_CIPHER_CTX_free(ctx);
    return elapsed;
}
