package jvmbridge.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * N harnesses (one Cipher each: a Cipher is not thread-safe) run the same loop on N threads at
 * once, as {@code openssl speed -multi N} runs N processes. The threads start together from a
 * latch and the figure is the wall time until the last one finishes, so N x iterations messages
 * in that time is the aggregate throughput.
 */
public final class ParallelHarness implements AutoCloseable {
    private final AesHarness[] harnesses;
    private final boolean stream;
    private final ExecutorService pool;

    public ParallelHarness(AesHarness[] harnesses, boolean stream) {
        this.harnesses = harnesses.clone();
        this.stream = stream;
        this.pool = Executors.newFixedThreadPool(harnesses.length, task -> {
            Thread thread = new Thread(task, "jvmbridge-loop");
            thread.setDaemon(true);  // never keeps a finished worker's JVM alive
            return thread;
        });
    }

    /** Each thread runs {@code iterations} messages; returns the wall nanoseconds for all of them. */
    public long run(long iterations) throws InterruptedException, ExecutionException {
        CountDownLatch ready = new CountDownLatch(harnesses.length);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Long>> running = new ArrayList<>();
        for (AesHarness harness : harnesses) {
            Callable<Long> loop = () -> {
                ready.countDown();
                go.await();
                return stream ? harness.runStream(iterations) : harness.run(iterations);
            };
            running.add(pool.submit(loop));
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Future<Long> thread : running) {
            try {
                thread.get();
            } catch (ExecutionException e) {
                // Rethrow the loop's own unchecked exception (e.g. a shape the cipher cannot run).
                if (e.getCause() instanceof RuntimeException) {
                    throw (RuntimeException) e.getCause();
                }
                throw e;
            }
        }
        return System.nanoTime() - start;
    }

    /** The harnesses' sinks folded together, so no thread's work is unobservable. */
    public long sink() {
        long sink = 0;
        for (AesHarness harness : harnesses) {
            sink += harness.sink();
        }
        return sink;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
