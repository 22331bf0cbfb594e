package planted;

import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import javax.crypto.Cipher;
import javax.crypto.CipherSpi;

/**
 * A JCE provider for the tests of `jvmbridge verify` and `compare`: SunJCE's AES/CTR, except that
 * <ul>
 * <li>an in-place doFinal of exactly 77 bytes gets byte 5 of its output flipped (or, with
 *     -Dplanted.crash=true, crashes the JVM): a sweep that cannot find this cannot find anything;
 * <li>with -Dplanted.after=N, every doFinal(byte[]) after the N-th gets byte 0 flipped: like an
 *     intrinsic that goes wrong only once the JIT has compiled the loop;
 * <li>with -Dplanted.crashAt=N, a doFinal(byte[]) of N bytes crashes the JVM: one size of a sweep
 *     dies while the others, measured by the same JVM, are fine;
 * <li>with -Dplanted.marker=PATH, the first JVM to load the cipher creates PATH and every later
 *     one crashes: a configuration whose first fork finishes and whose second dies;
 * <li>with -Dplanted.blockAt=N, a doFinal(byte[]) of N bytes never returns: a provider that
 *     deadlocks at one size;
 * <li>with -Dplanted.refuseAt=N, a doFinal(byte[]) of N bytes throws a ProviderException: a
 *     provider that refuses one size (as SunJCE's GCM refuses more than 2 GiB under one IV).
 * </ul>
 */
public final class PlantedProvider extends Provider {
    static final int SIZE = 77;

    public PlantedProvider() {
        super("Planted", "1.0", "AES/CTR with one planted divergence");
        put("Cipher.AES/CTR/NoPadding", PlantedCipher.class.getName());
    }

    public static final class PlantedCipher extends CipherSpi {
        private static final long WRONG_AFTER = Long.getLong("planted.after", Long.MAX_VALUE);
        private static final int CRASH_AT = Integer.getInteger("planted.crashAt", -1);
        private static final int BLOCK_AT = Integer.getInteger("planted.blockAt", -1);
        private static final int REFUSE_AT = Integer.getInteger("planted.refuseAt", -1);
        private static long calls;
        private final Cipher real;

        static {
            String marker = System.getProperty("planted.marker");
            if (marker != null) {
                try {
                    if (!new java.io.File(marker).createNewFile()) {
                        crash();
                    }
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }

        public PlantedCipher() throws GeneralSecurityException {
            real = Cipher.getInstance("AES/CTR/NoPadding", "SunJCE");
        }

        @Override protected void engineSetMode(String mode) { }
        @Override protected void engineSetPadding(String padding) { }
        @Override protected int engineGetBlockSize() { return real.getBlockSize(); }
        @Override protected int engineGetOutputSize(int length) { return real.getOutputSize(length); }
        @Override protected byte[] engineGetIV() { return real.getIV(); }
        @Override protected AlgorithmParameters engineGetParameters() { return real.getParameters(); }

        @Override protected void engineInit(int mode, Key key, SecureRandom random) throws java.security.InvalidKeyException {
            real.init(mode, key, random);
        }

        @Override protected void engineInit(int mode, Key key, AlgorithmParameterSpec params, SecureRandom random)
                throws java.security.InvalidKeyException, java.security.InvalidAlgorithmParameterException {
            real.init(mode, key, params, random);
        }

        @Override protected void engineInit(int mode, Key key, AlgorithmParameters params, SecureRandom random)
                throws java.security.InvalidKeyException, java.security.InvalidAlgorithmParameterException {
            real.init(mode, key, params, random);
        }

        @Override protected byte[] engineUpdate(byte[] in, int offset, int length) {
            return real.update(in, offset, length);
        }

        @Override protected int engineUpdate(byte[] in, int offset, int length, byte[] out, int outOffset)
                throws javax.crypto.ShortBufferException {
            return real.update(in, offset, length, out, outOffset);
        }

        @Override protected byte[] engineDoFinal(byte[] in, int offset, int length)
                throws javax.crypto.IllegalBlockSizeException, javax.crypto.BadPaddingException {
            if (length == CRASH_AT) {
                crash();
            }
            if (length == BLOCK_AT) {
                block();
            }
            if (length == REFUSE_AT) {
                throw new java.security.ProviderException("planted: refuses " + length + " bytes");
            }
            byte[] out = in == null ? real.doFinal() : real.doFinal(in, offset, length);  // doFinal() passes null
            if (++calls > WRONG_AFTER && out.length > 0) {
                out[0] ^= 1;
            }
            return out;
        }

        @Override protected int engineDoFinal(byte[] in, int offset, int length, byte[] out, int outOffset)
                throws javax.crypto.ShortBufferException, javax.crypto.IllegalBlockSizeException,
                javax.crypto.BadPaddingException {
            int written = in == null ? real.doFinal(out, outOffset) : real.doFinal(in, offset, length, out, outOffset);
            if (in == out && length == SIZE) {
                if (Boolean.getBoolean("planted.crash")) {
                    crash();
                }
                out[outOffset + 5] ^= 1;
            }
            return written;
        }

        private static void block() {
            Object never = new Object();
            synchronized (never) {
                while (true) {
                    try {
                        never.wait();
                    } catch (InterruptedException e) {
                        // still blocked
                    }
                }
            }
        }

        private static void crash() {
            try {
                java.lang.reflect.Field field = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
                field.setAccessible(true);
                sun.misc.Unsafe unsafe = (sun.misc.Unsafe) field.get(null);
                unsafe.putAddress(0, 0);  // SIGSEGV: the JVM dies with a crash report
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
