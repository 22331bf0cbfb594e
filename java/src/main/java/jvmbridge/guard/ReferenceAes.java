package jvmbridge.guard;

import java.util.Arrays;

/**
 * AES as FIPS-197 writes it, in plain Java: no JCE, no intrinsic, no table shared with the JDK.
 * The guard's answers come from here, so what the JIT does to the JDK's AES cannot change them;
 * the Python tests hold these bytes to OpenSSL's for every key size, mode and length the guard uses.
 *
 * <p>{@code main MODE KEY_HEX IV_HEX INPUT_HEX [decrypt|encrypt [AAD_HEX]]} prints the output as hex (for those tests).
 */
public final class ReferenceAes {
    private static final int[] SBOX = new int[256];
    private static final int[] INVERSE_SBOX = new int[256];

    static {
        // The S-box from its definition: the multiplicative inverse in GF(2^8), then the affine map.
        int p = 1;
        int q = 1;
        do {
            p = p ^ (p << 1) ^ ((p & 0x80) != 0 ? 0x1b : 0); // p * 3
            p &= 0xff;
            q ^= q << 1; // q / 3
            q ^= q << 2;
            q ^= q << 4;
            q &= 0xff;
            if ((q & 0x80) != 0) {
                q ^= 0x09;
            }
            int x = q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4);
            SBOX[p] = (x ^ 0x63) & 0xff;
        } while (p != 1);
        SBOX[0] = 0x63;
        for (int i = 0; i < 256; i++) {
            INVERSE_SBOX[SBOX[i]] = i;
        }
    }

    private final int[][] roundKeys; // (rounds + 1) x 16 bytes
    private final int rounds;

    public ReferenceAes(byte[] key) {
        if (key.length != 16 && key.length != 24 && key.length != 32) {
            throw new IllegalArgumentException("AES keys are 16, 24 or 32 bytes, not " + key.length);
        }
        int words = key.length / 4;
        rounds = words + 6;
        int[] w = new int[4 * (rounds + 1)];
        for (int i = 0; i < words; i++) {
            w[i] = ((key[4 * i] & 0xff) << 24) | ((key[4 * i + 1] & 0xff) << 16) | ((key[4 * i + 2] & 0xff) << 8)
                    | (key[4 * i + 3] & 0xff);
        }
        int rcon = 1;
        for (int i = words; i < w.length; i++) {
            int t = w[i - 1];
            if (i % words == 0) {
                t = subWord(Integer.rotateLeft(t, 8)) ^ (rcon << 24);
                rcon = xtime(rcon);
            } else if (words > 6 && i % words == 4) {
                t = subWord(t);
            }
            w[i] = w[i - words] ^ t;
        }
        roundKeys = new int[rounds + 1][16];
        for (int r = 0; r <= rounds; r++) {
            for (int c = 0; c < 16; c++) {
                roundKeys[r][c] = (w[4 * r + c / 4] >>> (24 - 8 * (c % 4))) & 0xff;
            }
        }
    }

    /** One 16-byte block of {@code in} at {@code offset}, encrypted. */
    public byte[] encryptBlock(byte[] in, int offset) {
        int[] s = new int[16];
        for (int i = 0; i < 16; i++) {
            s[i] = (in[offset + i] & 0xff) ^ roundKeys[0][i];
        }
        for (int r = 1; r <= rounds; r++) {
            int[] t = new int[16];
            for (int c = 0; c < 4; c++) { // SubBytes and ShiftRows
                for (int row = 0; row < 4; row++) {
                    t[4 * c + row] = SBOX[s[4 * ((c + row) % 4) + row]];
                }
            }
            if (r < rounds) { // MixColumns
                for (int c = 0; c < 4; c++) {
                    int a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3];
                    t[4 * c] = xtime(a0) ^ xtime(a1) ^ a1 ^ a2 ^ a3;
                    t[4 * c + 1] = a0 ^ xtime(a1) ^ xtime(a2) ^ a2 ^ a3;
                    t[4 * c + 2] = a0 ^ a1 ^ xtime(a2) ^ xtime(a3) ^ a3;
                    t[4 * c + 3] = xtime(a0) ^ a0 ^ a1 ^ a2 ^ xtime(a3);
                }
            }
            for (int i = 0; i < 16; i++) {
                s[i] = t[i] ^ roundKeys[r][i];
            }
        }
        return bytes(s);
    }

    /** One 16-byte block of {@code in} at {@code offset}, decrypted. */
    public byte[] decryptBlock(byte[] in, int offset) {
        int[] s = new int[16];
        for (int i = 0; i < 16; i++) {
            s[i] = (in[offset + i] & 0xff) ^ roundKeys[rounds][i];
        }
        for (int r = rounds - 1; r >= 0; r--) {
            int[] t = new int[16];
            for (int c = 0; c < 4; c++) { // InvShiftRows and InvSubBytes
                for (int row = 0; row < 4; row++) {
                    t[4 * ((c + row) % 4) + row] = INVERSE_SBOX[s[4 * c + row]];
                }
            }
            for (int i = 0; i < 16; i++) {
                t[i] ^= roundKeys[r][i];
            }
            if (r > 0) { // InvMixColumns
                for (int c = 0; c < 4; c++) {
                    int a0 = t[4 * c], a1 = t[4 * c + 1], a2 = t[4 * c + 2], a3 = t[4 * c + 3];
                    t[4 * c] = mul(a0, 14) ^ mul(a1, 11) ^ mul(a2, 13) ^ mul(a3, 9);
                    t[4 * c + 1] = mul(a0, 9) ^ mul(a1, 14) ^ mul(a2, 11) ^ mul(a3, 13);
                    t[4 * c + 2] = mul(a0, 13) ^ mul(a1, 9) ^ mul(a2, 14) ^ mul(a3, 11);
                    t[4 * c + 3] = mul(a0, 11) ^ mul(a1, 13) ^ mul(a2, 9) ^ mul(a3, 14);
                }
            }
            s = t;
        }
        return bytes(s);
    }

    /** AES/CBC/PKCS5Padding encryption: PKCS#7 padding to a whole block, always at least one byte. */
    public static byte[] cbcEncrypt(byte[] key, byte[] iv, byte[] plaintext) {
        ReferenceAes aes = new ReferenceAes(key);
        byte[] padded = padded(plaintext);
        byte[] out = new byte[padded.length];
        byte[] chain = iv.clone();
        for (int at = 0; at < padded.length; at += 16) {
            for (int i = 0; i < 16; i++) {
                padded[at + i] ^= chain[i];
            }
            chain = aes.encryptBlock(padded, at);
            System.arraycopy(chain, 0, out, at, 16);
        }
        return out;
    }

    /** AES/CBC/PKCS5Padding decryption of whole blocks, the padding checked and removed. */
    public static byte[] cbcDecrypt(byte[] key, byte[] iv, byte[] ciphertext) {
        ReferenceAes aes = new ReferenceAes(key);
        wholeBlocks(ciphertext);
        byte[] out = new byte[ciphertext.length];
        byte[] chain = iv;
        for (int at = 0; at < ciphertext.length; at += 16) {
            byte[] block = aes.decryptBlock(ciphertext, at);
            for (int i = 0; i < 16; i++) {
                out[at + i] = (byte) (block[i] ^ chain[i]);
            }
            chain = Arrays.copyOfRange(ciphertext, at, at + 16);
        }
        return unpadded(out);
    }

    /** AES/ECB/PKCS5Padding encryption: each padded block on its own. */
    public static byte[] ecbEncrypt(byte[] key, byte[] plaintext) {
        ReferenceAes aes = new ReferenceAes(key);
        byte[] padded = padded(plaintext);
        byte[] out = new byte[padded.length];
        for (int at = 0; at < padded.length; at += 16) {
            System.arraycopy(aes.encryptBlock(padded, at), 0, out, at, 16);
        }
        return out;
    }

    /** AES/ECB/PKCS5Padding decryption of whole blocks, the padding checked and removed. */
    public static byte[] ecbDecrypt(byte[] key, byte[] ciphertext) {
        ReferenceAes aes = new ReferenceAes(key);
        wholeBlocks(ciphertext);
        byte[] out = new byte[ciphertext.length];
        for (int at = 0; at < ciphertext.length; at += 16) {
            System.arraycopy(aes.decryptBlock(ciphertext, at), 0, out, at, 16);
        }
        return unpadded(out);
    }

    /**
     * AES/CFB/NoPadding (CFB-128, SP 800-38A) in either direction: each block XORed with E(the
     * previous ciphertext block, the IV first); a last partial block uses as much of it as it needs.
     */
    public static byte[] cfb(byte[] key, byte[] iv, byte[] input, boolean decrypt) {
        ReferenceAes aes = new ReferenceAes(key);
        byte[] out = new byte[input.length];
        byte[] feedback = iv.clone();
        for (int at = 0; at < input.length; at += 16) {
            byte[] stream = aes.encryptBlock(feedback, 0);
            int length = Math.min(16, input.length - at);
            for (int i = 0; i < length; i++) {
                out[at + i] = (byte) (input[at + i] ^ stream[i]);
            }
            feedback = Arrays.copyOfRange(decrypt ? input : out, at, at + 16);
        }
        return out;
    }

    /** PKCS#7 padding to a whole block, always at least one byte. */
    private static byte[] padded(byte[] plaintext) {
        int pad = 16 - plaintext.length % 16;
        byte[] padded = Arrays.copyOf(plaintext, plaintext.length + pad);
        Arrays.fill(padded, plaintext.length, padded.length, (byte) pad);
        return padded;
    }

    private static byte[] unpadded(byte[] out) {
        int pad = out[out.length - 1] & 0xff;
        if (pad < 1 || pad > 16) {
            throw new IllegalArgumentException("bad padding");
        }
        return Arrays.copyOf(out, out.length - pad);
    }

    private static void wholeBlocks(byte[] ciphertext) {
        if (ciphertext.length == 0 || ciphertext.length % 16 != 0) {
            throw new IllegalArgumentException("padded ciphertext must be whole blocks");
        }
    }

    /** AES/CTR/NoPadding (either direction): the whole 16-byte counter incremented as one big-endian number. */
    public static byte[] ctr(byte[] key, byte[] iv, byte[] input) {
        ReferenceAes aes = new ReferenceAes(key);
        byte[] counter = iv.clone();
        byte[] out = new byte[input.length];
        for (int at = 0; at < input.length; at += 16) {
            byte[] stream = aes.encryptBlock(counter, 0);
            for (int i = 0; i < 16 && at + i < input.length; i++) {
                out[at + i] = (byte) (input[at + i] ^ stream[i]);
            }
            for (int i = 15; i >= 0 && ++counter[i] == 0; i--) {
                // carry into the next byte up
            }
        }
        return out;
    }

    /**
     * AES/GCM/NoPadding encryption as SP 800-38D defines it, with a 96-bit IV: the ciphertext (a
     * counter from J0 = IV || 0^31 || 1, its low 32 bits incremented) and the 128-bit tag after it.
     */
    public static byte[] gcmEncrypt(byte[] key, byte[] iv, byte[] aad, byte[] plaintext) {
        ReferenceAes aes = new ReferenceAes(key);
        byte[] j0 = Arrays.copyOf(iv, 16);
        j0[15] = 1;
        byte[] ciphertext = aes.gctr(inc32(j0), plaintext);
        byte[] out = Arrays.copyOf(ciphertext, ciphertext.length + 16);
        byte[] tag = aes.gctr(j0, aes.ghash(aad, ciphertext));
        System.arraycopy(tag, 0, out, ciphertext.length, 16);
        return out;
    }

    /** AES/GCM/NoPadding decryption of ciphertext || tag, the tag checked (IllegalArgumentException if wrong). */
    public static byte[] gcmDecrypt(byte[] key, byte[] iv, byte[] aad, byte[] sealed) {
        byte[] ciphertext = Arrays.copyOf(sealed, sealed.length - 16);
        ReferenceAes aes = new ReferenceAes(key);
        byte[] j0 = Arrays.copyOf(iv, 16);
        j0[15] = 1;
        byte[] tag = aes.gctr(j0, aes.ghash(aad, ciphertext));
        if (!Arrays.equals(tag, Arrays.copyOfRange(sealed, sealed.length - 16, sealed.length))) {
            throw new IllegalArgumentException("tag mismatch");
        }
        return aes.gctr(inc32(j0), ciphertext);
    }

    /** GCTR: the input XORed with E(counter), E(inc32(counter)), ... */
    private byte[] gctr(byte[] counter, byte[] input) {
        byte[] block = counter.clone();
        byte[] out = new byte[input.length];
        for (int at = 0; at < input.length; at += 16) {
            byte[] stream = encryptBlock(block, 0);
            for (int i = 0; i < 16 && at + i < input.length; i++) {
                out[at + i] = (byte) (input[at + i] ^ stream[i]);
            }
            block = inc32(block);
        }
        return out;
    }

    /** GHASH_H over A || 0-pad || C || 0-pad || [len(A)]64 || [len(C)]64, H = E(0^128). */
    private byte[] ghash(byte[] aad, byte[] ciphertext) {
        long[] h = words(encryptBlock(new byte[16], 0), 0);
        long[] y = {0, 0};
        for (byte[] part : new byte[][] {aad, ciphertext}) {
            for (int at = 0; at < part.length; at += 16) {
                long[] x = words(Arrays.copyOf(Arrays.copyOfRange(part, at, Math.min(part.length, at + 16)), 16), 0);
                y = multiply(new long[] {y[0] ^ x[0], y[1] ^ x[1]}, h);
            }
        }
        y = multiply(new long[] {y[0] ^ (aad.length * 8L), y[1] ^ (ciphertext.length * 8L)}, h);
        byte[] out = new byte[16];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (y[0] >>> (56 - 8 * i));
            out[8 + i] = (byte) (y[1] >>> (56 - 8 * i));
        }
        return out;
    }

    /** X * Y in GF(2^128) with GCM's bit order (SP 800-38D, Algorithm 1; R = 11100001 || 0^120). */
    private static long[] multiply(long[] x, long[] y) {
        long z0 = 0;
        long z1 = 0;
        long v0 = y[0];
        long v1 = y[1];
        for (int i = 0; i < 128; i++) {
            long bit = (i < 64 ? x[0] >>> (63 - i) : x[1] >>> (127 - i)) & 1;
            if (bit != 0) {
                z0 ^= v0;
                z1 ^= v1;
            }
            boolean lsb = (v1 & 1) != 0;
            v1 = (v1 >>> 1) | (v0 << 63);
            v0 >>>= 1;
            if (lsb) {
                v0 ^= 0xe100000000000000L;
            }
        }
        return new long[] {z0, z1};
    }

    private static long[] words(byte[] block, int at) {
        long high = 0;
        long low = 0;
        for (int i = 0; i < 8; i++) {
            high = (high << 8) | (block[at + i] & 0xff);
            low = (low << 8) | (block[at + 8 + i] & 0xff);
        }
        return new long[] {high, low};
    }

    /** The block with its last 32 bits, as one big-endian number, incremented (mod 2^32). */
    private static byte[] inc32(byte[] block) {
        byte[] out = block.clone();
        for (int i = 15; i >= 12 && ++out[i] == 0; i--) {
            // carry, within the last four bytes only
        }
        return out;
    }

    private static int subWord(int word) {
        return (SBOX[word >>> 24] << 24) | (SBOX[(word >>> 16) & 0xff] << 16) | (SBOX[(word >>> 8) & 0xff] << 8)
                | SBOX[word & 0xff];
    }

    private static int xtime(int a) {
        return ((a << 1) ^ ((a & 0x80) != 0 ? 0x1b : 0)) & 0xff;
    }

    private static int mul(int a, int b) {
        int product = 0;
        for (; b != 0; b >>= 1, a = xtime(a)) {
            if ((b & 1) != 0) {
                product ^= a;
            }
        }
        return product;
    }

    private static int rotl8(int x, int shift) {
        return ((x << shift) | (x >>> (8 - shift))) & 0xff;
    }

    private static byte[] bytes(int[] state) {
        byte[] out = new byte[16];
        for (int i = 0; i < 16; i++) {
            out[i] = (byte) state[i];
        }
        return out;
    }

    static byte[] hex(String text) {
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String hex(byte[] data) {
        StringBuilder out = new StringBuilder();
        for (byte b : data) {
            out.append(String.format("%02x", b & 0xff));
        }
        return out.toString();
    }

    public static void main(String[] args) {
        byte[] key = hex(args[1]);
        byte[] iv = hex(args[2]);
        byte[] input = hex(args[3]);
        boolean decrypt = args.length > 4 && args[4].equals("decrypt");
        byte[] out;
        switch (args[0]) {
            case "cbc":
                out = decrypt ? cbcDecrypt(key, iv, input) : cbcEncrypt(key, iv, input);
                break;
            case "ctr":
                out = ctr(key, iv, input);
                break;
            case "ecb": // the IV argument is there and unused
                out = decrypt ? ecbDecrypt(key, input) : ecbEncrypt(key, input);
                break;
            case "cfb":
                out = cfb(key, iv, input, decrypt);
                break;
            case "gcm": { // the AAD after "decrypt" or "encrypt"
                byte[] aad = args.length > 5 ? hex(args[5]) : new byte[0];
                out = decrypt ? gcmDecrypt(key, iv, aad, input) : gcmEncrypt(key, iv, aad, input);
                break;
            }
            default:
                throw new IllegalArgumentException("modes: cbc, ctr, gcm, ecb, cfb");
        }
        System.out.println(hex(out));
    }
}
