import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** AesThenIdle TRANSFORMATION SECONDS: encrypts 1 KiB messages for SECONDS, then says "idle" and sleeps. */
public final class AesThenIdle {
    public static void main(String[] args) throws Exception {
        Cipher cipher = Cipher.getInstance(args[0]);
        SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
        boolean gcm = args[0].contains("/GCM/");
        byte[] iv = new byte[gcm ? 12 : 16];
        byte[] message = new byte[1024];
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        long sink = 0;
        for (long n = 0; System.nanoTime() < deadline; n++) {
            iv[0] = (byte) n; iv[1] = (byte) (n >> 8); iv[2] = (byte) (n >> 16);
            cipher.init(Cipher.ENCRYPT_MODE, key, gcm ? new GCMParameterSpec(128, iv) : new IvParameterSpec(iv));
            sink += cipher.doFinal(message)[5];
            if ((n & 4095) == 4095) {
                Thread.sleep(1);  // a moment off the CPU now and then, so an attach is answered at once
            }
        }
        System.out.println("idle " + sink);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
