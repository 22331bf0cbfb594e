package jvmbridge.harness;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import jvmbridge.vectors.AesCase;

/**
 * The Java side of {@code jvmbridge verify}: runs every case of a plan through every call pattern,
 * pass after pass, and reports each output that differs from the expected bytes in the plan
 * (which Python computed with OpenSSL).
 *
 * <p>Passes repeat until a line (or end of file) arrives on stdin: the first passes run while C2
 * is still compiling; Python stops the loop once the JIT log shows the mode's intrinsics compiled
 * and enough passes have run after that. Protocol lines on stdout start with {@code @jvb}:
 * <pre>
 *   @jvb begin PASS
 *   @jvb diff PASS CASE PATTERN INDEX ACTUAL_BYTE EXPECTED_BYTE ACTUAL_LENGTH   (first per group and pass)
 *   @jvb error PASS CASE PATTERN EXCEPTION_TEXT                                 (first per group and pass)
 *   @jvb case CASE PATTERN                                                      (--trace: before each case)
 *   @jvb end PASS DIVERGENT_RUNS
 *   @jvb fatal TEXT                   (it cannot start; on stdout, as stderr carries the JIT's log)
 * </pre>
 * A group is the (key size, direction, pattern) a case belongs to; its cases come smallest first,
 * so the first report of a group in a pass is that pass's smallest failing size.
 */
public final class Conformance {
    /** Call patterns: how the same message is fed to the Cipher. The output must not depend on it. */
    public static final List<String> PATTERNS = Arrays.asList(
            "oneshot", "updates", "bytes", "mixed", "inplace", "heap", "direct", "reuse");

    private static final int PLAN_VERSION = 1;
    private static final long MIN_PASS_NANOS = 100_000_000L;

    private final String transformation;
    /** A registered provider's name, or "" for the JVM's first choice (SunJCE). */
    private final String provider;
    private final boolean gcm;
    private final List<AesCase> cases;
    private final List<String> patterns;
    private final PrintStream out;
    private final boolean trace;
    /** One Cipher kept across cases and passes for the "reuse" pattern, as compare's loop keeps one. */
    private final Cipher reused;
    private final byte[] dummyIv;

    Conformance(String transformation, String provider, List<AesCase> cases, List<String> patterns, PrintStream out,
                boolean trace) throws GeneralSecurityException {
        this.transformation = transformation;
        this.provider = provider;
        this.gcm = transformation.contains("/GCM/");
        this.cases = cases;
        this.patterns = patterns;
        this.out = out;
        this.trace = trace;
        this.reused = newCipher();
        this.dummyIv = new byte[gcm ? 12 : 16];
    }

    /**
     * One pass: every case in every pattern, repeated until the pass has lasted {@code minNanos}
     * (a plan of one small case would otherwise report thousands of passes a second). Returns how
     * many (case, pattern) runs diverged.
     */
    int pass(int number, long minNanos) {
        out.println("@jvb begin " + number);
        Set<String> reported = new HashSet<>();
        int divergent = 0;
        long start = System.nanoTime();
        do {
            divergent += sweepOnce(number, reported);
        } while (System.nanoTime() - start < minNanos);
        out.println("@jvb end " + number + " " + divergent);
        out.flush();
        return divergent;
    }

    private int sweepOnce(int number, Set<String> reported) {
        int divergent = 0;
        for (String pattern : patterns) {
            for (AesCase c : cases) {
                if (trace) {
                    out.println("@jvb case " + c.id + " " + pattern);
                    out.flush();
                }
                String problem = check(c, pattern);
                if (problem != null) {
                    divergent++;
                    if (reported.add(group(c, pattern))) {
                        out.println("@jvb " + problem.replace("PASS", Integer.toString(number))
                                .replace("CASE", c.id + " " + pattern));
                    }
                }
            }
        }
        return divergent;
    }

    /** The (key size, direction, pattern) a case's run belongs to: each is reported once a pass. */
    static String group(AesCase c, String pattern) {
        return c.key.length + (c.decrypt ? "d" : "e") + pattern;
    }

    /** null when the pattern's output equals the expected bytes, else the report line (templated). */
    String check(AesCase c, String pattern) {
        byte[] actual;
        try {
            actual = run(c, pattern);
            if (gcm && c.decrypt && pattern.equals("oneshot") && acceptsTamperedTag(c)) {
                return "error PASS CASE a tampered tag was accepted";
            }
        } catch (GeneralSecurityException | RuntimeException e) {
            return "error PASS CASE " + e.toString().replace('\n', ' ');
        }
        if (Arrays.equals(actual, c.expected)) {
            return null;
        }
        int index = 0;
        while (index < actual.length && index < c.expected.length && actual[index] == c.expected[index]) {
            index++;
        }
        String actualByte = index < actual.length ? hex(actual[index]) : "-";
        String expectedByte = index < c.expected.length ? hex(c.expected[index]) : "-";
        return "diff PASS CASE " + index + " " + actualByte + " " + expectedByte + " " + actual.length;
    }

    byte[] run(AesCase c, String pattern) throws GeneralSecurityException {
        switch (pattern) {
            case "oneshot":
                return init(newCipher(), c).doFinal(c.input);
            case "updates":
                return chunked(c, smallChunks(c));
            case "bytes":
                return byteByByte(c);
            case "mixed":
                return chunked(c, mixedChunks(c));
            case "inplace":
                return inPlace(c);
            case "heap":
                return buffers(c, ByteBuffer.allocate(c.input.length), ByteBuffer.allocate(outputSize(c)));
            case "direct":
                return buffers(c, ByteBuffer.allocateDirect(c.input.length), ByteBuffer.allocateDirect(outputSize(c)));
            case "reuse":
                return reuse(c);
            default:
                throw new IllegalArgumentException("unknown pattern " + pattern);
        }
    }

    private Cipher newCipher() throws GeneralSecurityException {
        return provider.isEmpty() ? Cipher.getInstance(transformation) : Cipher.getInstance(transformation, provider);
    }

    private Cipher init(Cipher cipher, AesCase c) throws GeneralSecurityException {
        SecretKeySpec key = new SecretKeySpec(c.key, "AES");
        int mode = c.decrypt ? Cipher.DECRYPT_MODE : Cipher.ENCRYPT_MODE;
        if (gcm) {
            cipher.init(mode, key, new GCMParameterSpec(128, c.iv));
            cipher.updateAAD(c.aad);
        } else if (transformation.contains("/ECB/")) {
            cipher.init(mode, key);
        } else {
            cipher.init(mode, key, new IvParameterSpec(c.iv));
        }
        return cipher;
    }

    private int outputSize(AesCase c) throws GeneralSecurityException {
        return init(newCipher(), c).getOutputSize(c.input.length);
    }

    /** Updates of 1, 2, ..., 15 bytes in turn (starting where the case id says), then doFinal. */
    private static int[] smallChunks(AesCase c) {
        List<Integer> lengths = new ArrayList<>();
        int next = c.id % 15;
        for (int left = c.input.length; left > 0; ) {
            int length = Math.min(left, 1 + next++ % 15);
            lengths.add(length);
            left -= length;
        }
        return lengths.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * One byte per update, through the allocating {@code byte[] update(byte[], int, int)}: each
     * output lands in an array of exactly its size, so a stub that writes past it corrupts the
     * heap (the 1 MiB case makes a million such calls on one Cipher).
     */
    private byte[] byteByByte(AesCase c) throws GeneralSecurityException {
        Cipher cipher = init(newCipher(), c);
        byte[] output = new byte[cipher.getOutputSize(c.input.length)];
        int written = 0;
        for (int offset = 0; offset < c.input.length; offset++) {
            byte[] piece = cipher.update(c.input, offset, 1);
            if (piece != null) {
                System.arraycopy(piece, 0, output, written, piece.length);
                written += piece.length;
            }
        }
        byte[] last = cipher.doFinal();
        System.arraycopy(last, 0, output, written, last.length);
        return Arrays.copyOf(output, written + last.length);
    }

    /** Small (1..15) and large (16..4111) pieces mixed, the same for a case in every pass. */
    static int[] mixedChunks(AesCase c) {
        Random random = new Random(c.id);
        List<Integer> lengths = new ArrayList<>();
        for (int left = c.input.length; left > 0; ) {
            int length = Math.min(left, random.nextBoolean() ? 1 + random.nextInt(15) : 16 + random.nextInt(4096));
            lengths.add(length);
            left -= length;
        }
        return lengths.stream().mapToInt(Integer::intValue).toArray();
    }

    private byte[] chunked(AesCase c, int[] lengths) throws GeneralSecurityException {
        Cipher cipher = init(newCipher(), c);
        byte[] output = new byte[cipher.getOutputSize(c.input.length)];
        int written = 0;
        int offset = 0;
        for (int length : lengths) {
            written += cipher.update(c.input, offset, length, output, written);
            offset += length;
        }
        written += cipher.doFinal(output, written);
        return Arrays.copyOf(output, written);
    }

    /** Input and output the same array. */
    private byte[] inPlace(AesCase c) throws GeneralSecurityException {
        Cipher cipher = init(newCipher(), c);
        byte[] buffer = Arrays.copyOf(c.input, Math.max(c.input.length, cipher.getOutputSize(c.input.length)));
        int written = cipher.doFinal(buffer, 0, c.input.length, buffer, 0);
        return Arrays.copyOf(buffer, written);
    }

    private byte[] buffers(AesCase c, ByteBuffer input, ByteBuffer output) throws GeneralSecurityException {
        input.put(c.input).flip();
        init(newCipher(), c).doFinal(input, output);
        output.flip();
        byte[] actual = new byte[output.remaining()];
        output.get(actual);
        return actual;
    }

    /**
     * One Cipher for every case: init, doFinal, and (except GCM encryption, which refuses to reuse
     * an IV) a second doFinal from the reset state, as compare's measured loop does.
     */
    private byte[] reuse(AesCase c) throws GeneralSecurityException {
        if (gcm && !c.decrypt) {
            // GCM refuses an init with the key and IV it last encrypted with (the previous pass).
            reused.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(c.key, "AES"), new GCMParameterSpec(128, dummyIv));
        }
        byte[] first = init(reused, c).doFinal(c.input);
        if (gcm && !c.decrypt) {
            return first;
        }
        if (gcm) {
            reused.updateAAD(c.aad);
        }
        byte[] second = reused.doFinal(c.input);
        return Arrays.equals(first, c.expected) ? second : first;
    }

    private boolean acceptsTamperedTag(AesCase c) throws GeneralSecurityException {
        if (c.input.length == 0) {
            return false;
        }
        byte[] tampered = c.input.clone();
        tampered[tampered.length - 1] ^= 1;
        try {
            init(newCipher(), c).doFinal(tampered);
            return true;
        } catch (AEADBadTagException expected) {
            return false;
        }
    }

    private static String hex(byte b) {
        return String.format("%02x", b & 0xff);
    }

    static List<AesCase> readPlan(DataInputStream in, String[] transformation) throws IOException {
        int version = in.readInt();
        if (version != PLAN_VERSION) {
            throw new IOException("plan version " + version + ", expected " + PLAN_VERSION);
        }
        transformation[0] = in.readUTF();
        int count = in.readInt();
        List<AesCase> cases = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int id = in.readInt();
            byte[] key = bytes(in);
            byte[] iv = bytes(in);
            byte[] aad = bytes(in);
            boolean decrypt = in.readBoolean();
            cases.add(new AesCase(id, key, iv, aad, decrypt, bytes(in), bytes(in)));
        }
        return cases;
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return bytes;
    }

    private static void fatal(String text) {
        System.out.println("@jvb fatal " + text);
        System.out.flush();
        System.exit(2);
    }

    /** {@code Conformance PLAN_FILE PATTERN[,PATTERN...] [--trace] [--provider CLASS]} */
    public static void main(String[] args) throws Exception {
        List<String> options = Arrays.asList(args).subList(Math.min(2, args.length), args.length);
        int providerAt = options.indexOf("--provider");
        boolean trace = options.contains("--trace");
        if (args.length < 2 || options.size() != (trace ? 1 : 0) + (providerAt >= 0 ? 2 : 0)
                || (providerAt >= 0 && providerAt == options.size() - 1)) {
            fatal("usage: Conformance PLAN_FILE PATTERN[,PATTERN...] [--trace] [--provider CLASS]");
        }
        String provider = "";
        if (providerAt >= 0) {
            try {
                provider = AesHarness.installProvider(options.get(providerAt + 1));
            } catch (ReflectiveOperationException | ClassCastException e) {
                fatal("cannot load JCE provider " + options.get(providerAt + 1) + ": " + e);
            }
        }
        String[] transformation = new String[1];
        List<AesCase> cases;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0])))) {
            cases = readPlan(in, transformation);
        }
        List<String> patterns = Arrays.asList(args[1].split(","));
        PrintStream out = new PrintStream(System.out, false, "US-ASCII");
        Conformance sweep = new Conformance(transformation[0], provider, cases, patterns, out, trace);
        Thread stop = new Thread(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII)).readLine();
            } catch (IOException ignored) {
                // a closed stdin means stop too
            }
        });
        stop.setDaemon(true);
        stop.start();
        for (int number = 1; stop.isAlive(); number++) {
            sweep.pass(number, MIN_PASS_NANOS);
        }
        out.flush();
    }
}
