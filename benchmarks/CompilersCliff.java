import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * CompilersCliff WARM_SECONDS ROUNDS ROUND_SECONDS: AES-256-CBC of 1 KiB messages, Cipher.init before
 * each, for WARM_SECONDS untimed, then ROUNDS timed rounds; prints the best round's ns per message.
 * The JVM options given decide which compilers run it (benchmarks/compilers.py).
 */
public final class CompilersCliff {
    static long sink;

    public static void main(String[] args) throws Exception {
        double warm = Double.parseDouble(args[0]);
        int rounds = Integer.parseInt(args[1]);
        double roundSeconds = Double.parseDouble(args[2]);
        Cipher cipher = Cipher.getInstance("AES/CBC/PKCS5Padding");
        SecretKeySpec key = new SecretKeySpec(new byte[32], "AES");
        byte[] message = new byte[1024];
        IvParameterSpec iv = new IvParameterSpec(new byte[16]);
        run(cipher, key, iv, message, warm);
        double best = Double.MAX_VALUE;
        for (int i = 0; i < rounds; i++) {
            best = Math.min(best, run(cipher, key, iv, message, roundSeconds));
        }
        System.out.println("ns_per_op " + best + " sink " + sink);
    }

    /** Messages for about {@code seconds}; the ns per message. */
    private static double run(Cipher cipher, SecretKeySpec key, IvParameterSpec iv, byte[] message, double seconds)
            throws Exception {
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        long count = 0;
        long now;
        do {
            cipher.init(Cipher.ENCRYPT_MODE, key, iv);
            sink += cipher.doFinal(message)[7];
            count++;
        } while ((now = System.nanoTime()) < deadline);
        return (double) (now - start) / count;
    }
}
