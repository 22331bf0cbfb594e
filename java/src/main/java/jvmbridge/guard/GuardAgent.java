package jvmbridge.guard;

import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.Security;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import javax.crypto.Cipher;
import javax.crypto.NoSuchPaddingException;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * {@code -javaagent:jvmbridge-guard.jar[=modes=cbc+ctr+gcm,delay=5,budget=10,share=0.5,retest=600,onwrong=log|exit,provider=NAME]}:
 * proves, inside the server's own JVM, that the AES its JIT compiled computes the right bytes.
 *
 * <p>A daemon thread at the lowest priority waits {@code delay} seconds, then runs each mode's
 * SelfTest (a class of its own per test, TestLoader; modes cbc, ctr, gcm, ecb, cfb) pass after
 * pass until C2 has compiled it and, where SunJCE serves the mode, the JDK's class that calls the
 * mode's intrinsic (both seen through the JVM's own flight recorder, {@code jdk.Compilation}
 * events, JDK 14+; on JDK 11-13 in its code list, polled), and a few passes more ran on that
 * code; it sleeps between passes to use at most {@code share} of one core, and gives up after
 * {@code budget} seconds of its own CPU time. Each time C2 compiles the JDK's AES code again, the
 * modes are tested again (at most every {@code retest} seconds). Nothing is ever written to the server's output
 * but one log line (System.Logger) when a mode computes wrong bytes.
 *
 * <p>What it found is in the system property {@code jvmbridge.guard} (which the attach protocol
 * returns, so `jvmbridge check --pid` reads it without running anything in the JVM) and in the
 * MBean {@code jvmbridge:type=Guard}: per mode "waiting", "testing", "verified TIME (...)",
 * "WRONG TIME (the smallest case)", "not proven TIME (why)" or "not applicable TIME (the provider
 * has no such Cipher)", joined by "; ". Each mode also has
 * an MBean {@code jvmbridge:type=GuardMode,mode=CBC} whose state is a true among false ones, as
 * metrics exporters read MBeans (jvmbridge/monitoring/jmx-exporter-guard.yml).
 */
public final class GuardAgent {
    public static final String PROPERTY = "jvmbridge.guard";
    private static final int PASSES_AFTER_COMPILE = 5;
    private static final String SUNJCE = "com.sun.crypto.provider.";
    /**
     * SunJCE's classes whose methods call each mode's intrinsic (or, CFB, AESCrypt's block one):
     * until C2 has compiled one of them the mode runs in Java, whatever the self-test's own code is.
     * The same names in JDK 11, 17 and 25 (GCM is GaloisCounterMode with GHASH and GCTR).
     */
    private static final Map<String, List<String>> INTRINSIC_CALLERS = Map.of(
            "CBC", List.of("CipherBlockChaining"),
            "CTR", List.of("CounterMode"),
            "GCM", List.of("GaloisCounterMode", "GHASH", "GCTR"),
            "ECB", List.of("ElectronicCodeBook"),
            "CFB", List.of("CipherFeedback", "AESCrypt"));
    private final long retestMillis;

    private final List<String> modes = new ArrayList<>();
    private final Map<String, String> states = new LinkedHashMap<>();
    private final double delaySeconds;
    private final double budgetSeconds;
    private final double share;
    private final boolean exitOnWrong;
    private final Provider provider; // null: the JVM's first choice, as the application gets it
    private volatile String testing = ""; // the running test's class loader (TestLoader), by name
    private volatile boolean testCompiled; // C2 has compiled a method of the running test's class
    private volatile long aesCompiledNanos = -1; // when C2 last compiled a method of the JDK's AES
    private final Set<String> compiledSunJce = ConcurrentHashMap.newKeySet(); // SunJCE classes C2 compiled, e.g. "CounterMode"
    private int tests;
    private CodeList codeList; // polled where there is no event stream (JDK 11-13); null with one

    private GuardAgent(String options) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String option : (options == null ? "" : options).split(",")) {
            if (!option.isEmpty()) {
                String[] pair = option.split("=", 2);
                given.put(pair[0].trim(), pair.length > 1 ? pair[1].trim() : "");
            }
        }
        for (String mode : given.getOrDefault("modes", "cbc+ctr+gcm").split("\\+")) {
            String name = mode.trim().toUpperCase();
            if (!INTRINSIC_CALLERS.containsKey(name)) {
                throw new IllegalArgumentException("jvmbridge guard: modes are cbc, ctr, gcm, ecb and cfb, not " + mode);
            }
            modes.add(name);
            states.put(name, "waiting");
        }
        delaySeconds = Double.parseDouble(given.getOrDefault("delay", "5"));
        budgetSeconds = Double.parseDouble(given.getOrDefault("budget", "10"));
        share = Math.min(1.0, Math.max(0.01, Double.parseDouble(given.getOrDefault("share", "0.5"))));
        String onWrong = given.getOrDefault("onwrong", "log");
        if (!onWrong.equals("log") && !onWrong.equals("exit")) {
            throw new IllegalArgumentException("jvmbridge guard: onwrong is log or exit, not " + onWrong);
        }
        exitOnWrong = onWrong.equals("exit");
        provider = provider(given.getOrDefault("provider", ""));
        retestMillis = (long) (Double.parseDouble(given.getOrDefault("retest", "600")) * 1000);
    }

    /** A registered provider's name, or a provider class on the JVM's class path (used, not registered). */
    private static Provider provider(String name) {
        if (name.isEmpty()) {
            return null;
        }
        Provider registered = Security.getProvider(name);
        if (registered != null) {
            return registered;
        }
        try {
            return (Provider) Class.forName(name, true, ClassLoader.getSystemClassLoader()).getConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException("jvmbridge guard: no provider " + name + " (" + e + ")");
        }
    }

    public static void premain(String options, Instrumentation instrumentation) {
        start(options);
    }

    public static void agentmain(String options, Instrumentation instrumentation) {
        start(options);
    }

    private static void start(String options) {
        GuardAgent guard;
        try {
            guard = new GuardAgent(options);
        } catch (RuntimeException e) { // a bad option must not stop the server: it says so and does nothing
            System.setProperty(PROPERTY, "not running (" + e.getMessage() + ")");
            System.getLogger("jvmbridge.guard").log(System.Logger.Level.ERROR, "not running: " + e.getMessage());
            return;
        }
        guard.publish();
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(new Guard(guard), new ObjectName("jvmbridge:type=Guard"));
            for (String mode : guard.modes) {
                ManagementFactory.getPlatformMBeanServer().registerMBean(new GuardMode(guard, mode),
                        new ObjectName("jvmbridge:type=GuardMode,mode=" + mode));
            }
        } catch (Exception | LinkageError e) {
            // No MBean (another guard registered one, or no management here): the property still says it all.
        }
        Thread thread = new Thread(guard::run, "jvmbridge-guard");
        thread.setDaemon(true);
        thread.setPriority(Thread.MIN_PRIORITY);
        thread.start();
    }

    synchronized String state() {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> entry : states.entrySet()) {
            out.append(out.length() == 0 ? "" : "; ").append(entry.getKey()).append(' ').append(entry.getValue());
        }
        return out.toString();
    }

    synchronized String stateOf(String mode) {
        return states.get(mode);
    }

    private synchronized void set(String mode, String state) {
        states.put(mode, state);
        publish();
    }

    private void publish() {
        System.setProperty(PROPERTY, state());
    }

    private void run() {
        try {
            if (!watchCompilations()) { // without seeing C2's work no test can prove anything: spend nothing
                for (String mode : modes) {
                    set(mode, "not proven " + now() + " (this JVM's compilations cannot be watched: no flight "
                            + "recorder event stream (JDK 14+, the jdk.jfr module) and no Compiler.codelist)");
                }
                return;
            }
            Thread.sleep((long) (delaySeconds * 1000));
            while (true) {
                long tested = System.nanoTime();
                for (String mode : modes) {
                    if (!states.get(mode).startsWith("WRONG")) { // a wrong mode's finding stands; testing it again risks the JVM
                        test(mode);
                    }
                }
                // Again once C2 has compiled the JDK's AES code since (a deoptimization, a new caller).
                while (aesCompiledNanos < tested || System.nanoTime() - tested < retestMillis * 1_000_000L) {
                    Thread.sleep(1000);
                    if (codeList != null && System.nanoTime() - tested >= retestMillis * 1_000_000L) {
                        codeList.poll(60_000);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ReflectiveOperationException | JMException | RuntimeException | LinkageError e) {
            for (String mode : modes) {
                set(mode, "not proven " + now() + " (the guard failed: " + e + ")");
            }
        }
    }

    private void test(String mode) throws InterruptedException, ReflectiveOperationException, JMException {
        String transformation = SelfTest.transformation(mode);
        try {
            SelfTest.instance(transformation, provider);
        } catch (NoSuchAlgorithmException | NoSuchPaddingException e) {
            // Nothing of this JVM's to prove wrong or right: no alert, and asked again at each retest.
            set(mode, "not applicable " + now() + " (" + (provider == null ? "no provider of this JVM has "
                    : provider.getName() + " has no ") + transformation + ")");
            return;
        }
        set(mode, "testing since " + now());
        String loader = "jvmbridge-guard-" + mode + "-" + ++tests;
        @SuppressWarnings("unchecked")
        Supplier<String> test = (Supplier<String>) Class.forName(SelfTest.class.getName(), true, new TestLoader(loader))
                .getConstructor(String.class, Provider.class).newInstance(mode, provider);
        List<String> callers = intrinsicCallers(mode);
        if (codeList != null) {
            codeList.poll(0); // what C2 finished for the tests before this one is theirs
        }
        testCompiled = false;
        testing = loader;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStart = threads.getCurrentThreadCpuTime();
        int passes = 0;
        int afterCompile = 0;
        while (true) {
            long passStarted = System.nanoTime();
            String wrong = test.get();
            passes++;
            if (codeList != null) {
                codeList.poll(1000);
            }
            if (wrong != null) {
                set(mode, "WRONG " + now() + " (" + wrong + ")");
                System.getLogger("jvmbridge.guard").log(System.Logger.Level.ERROR,
                        "AES/" + mode + " in this JVM computes wrong bytes after the JIT: " + wrong
                                + (exitOnWrong ? "; exiting (onwrong=exit)" : ""));
                if (exitOnWrong) {
                    System.exit(3);
                }
                return;
            }
            if (testCompiled && (callers.isEmpty() || callers.stream().anyMatch(compiledSunJce::contains))) {
                afterCompile++;
            }
            if (afterCompile >= PASSES_AFTER_COMPILE) {
                List<String> compiled = new ArrayList<>(callers);
                compiled.retainAll(compiledSunJce);
                set(mode, "verified " + now() + " (" + passes + " passes, the last " + PASSES_AFTER_COMPILE
                        + " after C2 compiled the self-test" + (compiled.isEmpty() ? "" : " and SunJCE's "
                        + String.join(" and ", compiled)) + ", " + test + ")");
                return;
            }
            double cpuSeconds = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e9;
            if (cpuSeconds > budgetSeconds) {
                set(mode, "not proven " + now() + " (" + passes + " passes right, but C2 did not compile "
                        + (testCompiled ? "SunJCE's " + String.join(" or ", callers) : "the self-test")
                        + " within " + budgetSeconds + " s of CPU)");
                return;
            }
            long took = System.nanoTime() - passStarted;
            long rest = (long) (took * (1 / share - 1));
            Thread.sleep(rest / 1_000_000, (int) (rest % 1_000_000));
        }
    }

    /**
     * The SunJCE classes whose compilation the mode's test waits for; none when another provider
     * serves the mode (its code is its own: the test's compilation is all there is to wait for).
     */
    private List<String> intrinsicCallers(String mode) {
        try {
            Cipher cipher = SelfTest.instance(SelfTest.transformation(mode), provider);
            return cipher.getProvider().getName().equals("SunJCE") ? INTRINSIC_CALLERS.get(mode) : List.of();
        } catch (java.security.GeneralSecurityException e) {
            return List.of(); // the self-test says why it cannot run
        }
    }

    /**
     * Listen to C2's compilations: streamed (CompilationWatch), or else polled (CodeList); false
     * where neither can be had.
     */
    private boolean watchCompilations() {
        BiConsumer<String, String> compiled = (type, loader) -> {
            // A null loader: the code list's, which names none; the running test's.
            if (type.startsWith(SelfTest.class.getName()) && (loader == null || loader.equals(testing))) {
                testCompiled = true;
            } else if (type.startsWith(SUNJCE)) {
                compiledSunJce.add(type.substring(SUNJCE.length()).split("\\$")[0]);
                aesCompiledNanos = System.nanoTime();
            }
        };
        try {
            if (CompilationWatch.start(compiled)) {
                return true;
            }
        } catch (LinkageError e) { // a runtime without the jdk.jfr module
            // the code list, then
        }
        codeList = CodeList.start(compiled);
        return codeList != null;
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** The MBean's face of the guard. */
    public interface GuardMBean {
        String getState();

        String[] getModes();
    }

    /**
     * One mode's state as flags, exactly one true: the Prometheus JMX exporter reads a boolean as 1
     * or 0, and text not at all, so each state is a series an alert can ask for.
     */
    public interface GuardModeMBean {
        String getState();

        boolean isWaiting();

        boolean isTesting();

        boolean isVerified();

        boolean isWrong();

        boolean isNotProven();

        boolean isNotApplicable();
    }

    public static final class GuardMode implements GuardModeMBean {
        private final GuardAgent agent;
        private final String mode;

        GuardMode(GuardAgent agent, String mode) {
            this.agent = agent;
            this.mode = mode;
        }

        @Override
        public String getState() {
            return agent.stateOf(mode);
        }

        @Override
        public boolean isWaiting() {
            return getState().startsWith("waiting");
        }

        @Override
        public boolean isTesting() {
            return getState().startsWith("testing");
        }

        @Override
        public boolean isVerified() {
            return getState().startsWith("verified");
        }

        @Override
        public boolean isWrong() {
            return getState().startsWith("WRONG");
        }

        @Override
        public boolean isNotProven() {
            return getState().startsWith("not proven");
        }

        @Override
        public boolean isNotApplicable() {
            return getState().startsWith("not applicable");
        }
    }

    public static final class Guard implements GuardMBean {
        private final GuardAgent agent;

        Guard(GuardAgent agent) {
            this.agent = agent;
        }

        @Override
        public String getState() {
            return agent.state();
        }

        @Override
        public String[] getModes() {
            return agent.modes.toArray(new String[0]);
        }
    }
}
