package jvmbridge.guard;

import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.Provider;
import java.security.Security;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import javax.management.ObjectName;

/**
 * {@code -javaagent:jvmbridge-guard.jar[=modes=cbc+ctr+gcm,delay=5,budget=10,share=0.5,retest=600,onwrong=log|exit,provider=NAME]}:
 * proves, inside the server's own JVM, that the AES its JIT compiled computes the right bytes.
 *
 * <p>A daemon thread at the lowest priority waits {@code delay} seconds, then runs each mode's
 * SelfTest (a class of its own per test, TestLoader) pass after pass until C2 has compiled it
 * (seen through the JVM's own flight recorder, {@code jdk.Compilation} events, JDK 14+) and a few
 * passes more ran on that code; it
 * sleeps between passes to use at most {@code share} of one core, and gives up after
 * {@code budget} seconds of its own CPU time. Each time C2 compiles the JDK's AES code again, the
 * modes are tested again (at most every {@code retest} seconds). Nothing is ever written to the server's output
 * but one log line (System.Logger) when a mode computes wrong bytes.
 *
 * <p>What it found is in the system property {@code jvmbridge.guard} (which the attach protocol
 * returns, so `jvmbridge check --pid` reads it without running anything in the JVM) and in the
 * MBean {@code jvmbridge:type=Guard}: per mode "waiting", "testing", "verified TIME (...)",
 * "WRONG TIME (the smallest case)" or "not proven TIME (why)", joined by "; ".
 */
public final class GuardAgent {
    public static final String PROPERTY = "jvmbridge.guard";
    private static final int PASSES_AFTER_COMPILE = 5;
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
    private int tests;

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
            if (!name.equals("CBC") && !name.equals("CTR") && !name.equals("GCM")) {
                throw new IllegalArgumentException("jvmbridge guard: modes are cbc, ctr and gcm, not " + mode);
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
                    set(mode, "not proven " + now() + " (this JVM's compilations cannot be watched: the flight "
                            + "recorder's event streams are JDK 14+ and need the jdk.jfr module)");
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
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            for (String mode : modes) {
                set(mode, "not proven " + now() + " (the guard failed: " + e + ")");
            }
        }
    }

    private void test(String mode) throws InterruptedException, ReflectiveOperationException {
        set(mode, "testing since " + now());
        String loader = "jvmbridge-guard-" + mode + "-" + ++tests;
        @SuppressWarnings("unchecked")
        Supplier<String> test = (Supplier<String>) Class.forName(SelfTest.class.getName(), true, new TestLoader(loader))
                .getConstructor(String.class, Provider.class).newInstance(mode, provider);
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
            if (testCompiled) {
                afterCompile++;
            }
            if (afterCompile >= PASSES_AFTER_COMPILE) {
                set(mode, "verified " + now() + " (" + passes + " passes, " + PASSES_AFTER_COMPILE
                        + " of them on code C2 compiled, " + test + ")");
                return;
            }
            double cpuSeconds = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e9;
            if (cpuSeconds > budgetSeconds) {
                set(mode, "not proven " + now() + " (" + passes + " passes right, but C2 did not compile the "
                        + "self-test within " + budgetSeconds + " s of CPU)");
                return;
            }
            long took = System.nanoTime() - passStarted;
            long rest = (long) (took * (1 / share - 1));
            Thread.sleep(rest / 1_000_000, (int) (rest % 1_000_000));
        }
    }

    /** Listen to C2's compilations (CompilationWatch); false where they cannot be had. */
    private boolean watchCompilations() {
        try {
            return CompilationWatch.start((type, loader) -> {
                if (type.startsWith(SelfTest.class.getName()) && loader.equals(testing)) {
                    testCompiled = true;
                } else if (type.startsWith("com.sun.crypto.provider.")) {
                    aesCompiledNanos = System.nanoTime();
                }
            });
        } catch (LinkageError e) { // a runtime without the jdk.jfr module
            return false;
        }
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** The MBean's face of the guard. */
    public interface GuardMBean {
        String getState();

        String[] getModes();
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
