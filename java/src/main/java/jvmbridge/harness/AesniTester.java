package jvmbridge.harness;

import java.lang.management.ManagementFactory;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import com.sun.management.HotSpotDiagnosticMXBean;

/**
 * AESNITester's measurement as people publish it: one fresh JVM whose {@code main} encrypts a
 * String message N times with {@code cipher.doFinal(PLAINTEXT.getBytes())} on one AES/CBC/PKCS5Padding
 * cipher, timed from the start of {@code main}. Class loading, key set-up, the interpreter, the JIT's
 * compilations and the String encoding are all in the figure; jvmbridge's steady-state rows leave
 * them out, this one keeps them so the two can be held side by side.
 *
 * <p>Arguments: key (hex), IV (hex), plaintext (ASCII text), iterations. Prints, after the clock
 * stops: {@code elapsed_ns N}, {@code output HEX} (the last message), {@code provider NAME VERSION},
 * {@code property NAME VALUE} (vendor, version, home) and {@code flag NAME VALUE ORIGIN}.
 */
public final class AesniTester {
    private AesniTester() {
    }

    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        String plaintext = args[2];
        long iterations = Long.parseLong(args[3]);
        Cipher cipher = Cipher.getInstance(AesHarness.CBC);
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(AesHarness.parseHex(args[0]), "AES"),
                new IvParameterSpec(AesHarness.parseHex(args[1])));
        byte[] out = new byte[0];
        for (long i = 0; i < iterations; i++) {
            out = cipher.doFinal(plaintext.getBytes());
        }
        long elapsed = System.nanoTime() - start;
        System.out.println("elapsed_ns " + elapsed);
        System.out.println("output " + AesHarness.formatHex(out));
        System.out.println("provider " + cipher.getProvider().getName() + " " + cipher.getProvider().getVersionStr());
        for (String property : new String[] {"java.vm.vendor", "java.runtime.version", "java.home"}) {
            System.out.println("property " + property + " " + System.getProperty(property));
        }
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        for (String name : new String[] {"UseAES", "UseAESIntrinsics", "UseAESCTRIntrinsics", "UseGHASHIntrinsics"}) {
            try {
                com.sun.management.VMOption option = bean.getVMOption(name);
                System.out.println("flag " + name + " " + option.getValue() + " " + option.getOrigin());
            } catch (IllegalArgumentException absent) {
                // this JVM has no such flag
            }
        }
    }
}
