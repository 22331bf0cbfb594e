package jvmbridge.bench;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The reference for jvmbridge's JVM figures: the same operations, written against the JCE
 * directly and timed by JMH, with the same key, IV and plaintext as jvmbridge's Workload.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AesBench {
    @Param({"38"})
    public int size;

    @Param({"256"})
    public int keyBits;

    private Cipher cipher;
    private byte[] plaintext;
    private byte[] out;

    @Setup
    public void setUp() throws Exception {
        byte[] key = Arrays.copyOf(sha256("jvmbridge key"), keyBits / 8);
        byte[] iv = Arrays.copyOf(sha256("jvmbridge iv"), 16);
        byte[] text = "The quick brown fox jumps over the lazy dog. ".getBytes(StandardCharsets.US_ASCII);
        plaintext = new byte[size];
        for (int i = 0; i < size; i++) {
            plaintext[i] = text[i % text.length];
        }
        out = new byte[size + 32];
        cipher = Cipher.getInstance("AES/CBC/PKCS5Padding");
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
    }

    private static byte[] sha256(String text) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.US_ASCII));
    }

    /** jvmbridge's "message" shape: a fresh doFinal per message, as AESNITester. */
    @Benchmark
    public byte[] message() throws Exception {
        return cipher.doFinal(plaintext);
    }

    /** jvmbridge's "stream" shape: update into a preallocated buffer, as openssl speed -evp. */
    @Benchmark
    public int stream() throws Exception {
        return cipher.update(plaintext, 0, plaintext.length, out, 0);
    }
}
