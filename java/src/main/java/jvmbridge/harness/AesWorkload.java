package jvmbridge.harness;

import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A small AES workload for {@code jvmbridge guard --java}: what a server's own use of the JCE looks
 * like to the JIT (CBC and CTR, one-shot and in updates, 38 bytes to 4 KiB) for {@code SECONDS},
 * then idle until stopped, so the guard it was started with can be read while the JVM lives.
 * With {@code rate} after the seconds, it prints each second's rounds ("rate N") as it goes
 * (benchmarks/guard_overhead.py: the application's throughput beside a guard) and exits.
 */
public final class AesWorkload {
    public static void main(String[] args) throws Exception {
        long until = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        SecretKeySpec key = new SecretKeySpec(new byte[32], "AES");
        IvParameterSpec iv = new IvParameterSpec(new byte[16]);
        byte[] message = new byte[4096];
        byte[] out = new byte[4096 + 256]; // room past the end: a broken CTR stub stores beyond what it returns
        Cipher cbc = Cipher.getInstance("AES/CBC/PKCS5Padding");
        Cipher ctr = Cipher.getInstance("AES/CTR/NoPadding");
        boolean rate = args.length > 1 && args[1].equals("rate");
        long sink = 0;
        long window = System.nanoTime() + 1_000_000_000L;
        long inWindow = 0;
        for (int round = 0; System.nanoTime() < until; round++, inWindow++) {
            if (rate && System.nanoTime() >= window) {
                System.out.println("rate " + inWindow);
                inWindow = 0;
                window += 1_000_000_000L;
            }
            int length = round % 2 == 0 ? 38 : 1 + round % message.length;
            cbc.init(Cipher.ENCRYPT_MODE, key, iv);
            sink += cbc.doFinal(message, 0, length, out, 0);
            ctr.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(out, 0, 16));
            sink += ctr.update(message, 0, length, out, 0);
            sink += ctr.doFinal(out, 0);
        }
        System.out.println("workload done " + sink);
        if (!rate) {
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
