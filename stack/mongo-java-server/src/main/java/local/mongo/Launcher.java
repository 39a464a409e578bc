package local.mongo;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreTool;

import de.bwaldvogel.mongo.MongoServer;
import sun.misc.Signal;

/**
 * Runs mongo-java-server with a durable H2 backend on one MVStore file.
 *
 * <pre>
 * java -jar mongo-java-server-launcher.jar --listen 127.0.0.1:27017 --file /path/data.mv
 *      [--durability commit|fsync|none] [--sync-interval-ms 200] [--retention-ms 0] [--cache-mb 64] [--threads 16]
 *      [--compact-ms -1] [--housekeeping-s 1] [--housekeeping-fill 50] [--housekeeping-kb 1024]
 *      [--log-level off] [--stats-s 0] [--mvstore-options K:V,...]
 * </pre>
 * (defaults shown; README.md describes each flag)
 *
 * SIGTERM / SIGINT: stop listening, close client connections, commit and fsync, close the file with a clean-shutdown
 * marker and compact it: by default (-1) a full rewrite of the live data into a new file that atomically replaces
 * the old one ({@code MVStoreTool.compact}); N &gt; 0 spends at most N ms rewriting and moving chunks in place; 0 none.
 * Then exit 0.
 */
public final class Launcher {

    private static final String USAGE = "usage: java -jar mongo-java-server-launcher.jar --listen HOST:PORT --file PATH"
        + " [--durability commit|fsync|none] [--sync-interval-ms N] [--retention-ms N] [--cache-mb N] [--threads N]"
        + " [--compact-ms N|-1] [--housekeeping-s N] [--housekeeping-fill PERCENT] [--housekeeping-kb N]"
        + " [--log-level off|error|warn|info|debug] [--stats-s N] [--mvstore-options K:V,...]";

    public static void main(String[] args) throws Exception {
        String listen = null;
        String file = null;
        String durability = "commit";
        int retentionMs = 0;
        int syncIntervalMs = 200;
        int cacheMb = 64;
        int threads = 16;
        int compactMs = -1;
        int housekeepingSeconds = 1;
        String logLevel = "off";
        String mvstoreOptions = "";
        int statsSeconds = 0;
        int compactFillRate = 50;
        int compactWriteKb = 1024;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--help", "-h" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> {
                    if (i + 1 >= args.length) {
                        usage("missing value for " + arg);
                    }
                    String value = args[++i];
                    switch (arg) {
                        case "--listen" -> listen = value;
                        case "--file" -> file = value;
                        case "--durability" -> durability = value;
                        case "--retention-ms" -> retentionMs = Integer.parseInt(value);
                        case "--sync-interval-ms" -> syncIntervalMs = Integer.parseInt(value);
                        case "--cache-mb" -> cacheMb = Integer.parseInt(value);
                        case "--threads" -> threads = Integer.parseInt(value);
                        case "--compact-ms" -> compactMs = Integer.parseInt(value);
                        case "--housekeeping-s" -> housekeepingSeconds = Integer.parseInt(value);
                        case "--log-level" -> logLevel = value;
                        case "--mvstore-options" -> mvstoreOptions = value;
                        case "--stats-s" -> statsSeconds = Integer.parseInt(value);
                        case "--housekeeping-fill" -> compactFillRate = Integer.parseInt(value);
                        case "--housekeeping-kb" -> compactWriteKb = Integer.parseInt(value);
                        default -> usage("unknown option " + arg);
                    }
                }
            }
        }
        if (listen == null || file == null) {
            usage("--listen and --file are required");
        }
        int colon = listen.lastIndexOf(':');
        if (colon < 1) {
            usage("--listen must be HOST:PORT");
        }
        String host = listen.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = Integer.parseInt(listen.substring(colon + 1));
        if (!durability.equals("commit") && !durability.equals("fsync") && !durability.equals("none")) {
            usage("--durability must be commit, fsync or none");
        }
        boolean durable = !durability.equals("none");

        // slf4j-simple reads these when the first logger is created (mongo-java-server logs every connection at
        // INFO and every failed command, a duplicate key included, at ERROR with a stack trace).
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", logLevel);
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");

        Path path = Path.of(file).toAbsolutePath();
        if (path.getParent() != null) {
            Files.createDirectories(path.getParent());
        }
        // a full compaction (--compact-ms -1) interrupted by a kill leaves a temp file, or the new file renamed
        // aside: finish or undo it
        MVStoreTool.compactCleanUp(path.toString());
        // No background writer thread: autoCommitDelay 0 disables the timed commit, autoCommitBufferSize 0 the
        // commit that MVStore otherwise starts from a writing thread once ~19 MB of changes are unsaved. Every
        // commit is then made by DurableH2Backend, between two writes.
        // (--durability none: the stock behaviour, MVStore's background thread commits about once a second.)
        // --mvstore-options "pageSplitSize:4096,keysPerPage:16": extra MVStore.Builder settings, for experiments
        MVStore.Builder builder = (mvstoreOptions.isEmpty() ? new MVStore.Builder()
            : MVStore.Builder.fromString(mvstoreOptions)).fileName(path.toString()).cacheSize(cacheMb);
        if (durable) {
            builder.autoCommitDisabled().autoCommitBufferSize(0);
        }
        MVStore store = builder.open();
        // Every commit writes a new chunk; a chunk whose pages are all superseded may be overwritten once it is
        // older than the retention time. The default, 45 s, leaves hundreds of MB of dead chunks in the file at
        // hundreds of commits a second. 0 is safe here: reads register the version they use, a killed process
        // loses nothing that is in the OS cache, and the sync barrier (DurableH2Backend.syncPoint) keeps every
        // chunk the newest fsync'ed state needs until a newer state is fsync'ed.
        if (durable) {
            store.setRetentionTime(retentionMs);
        }
        DurableH2Backend backend = new DurableH2Backend(store, durable, durability.equals("fsync"));
        MongoServer server = new MongoServer(backend);
        server.bind(new InetSocketAddress(host, port), 1, threads);

        // Housekeeping that MVStore's background thread would do: rewrite chunks with a low fill rate (their pages
        // move to a new chunk; the old ones are freed and their space reused). Done between writes, then committed.
        ScheduledExecutorService housekeeping = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "mvstore-housekeeping");
            t.setDaemon(true);
            return t;
        });
        int fillRate = compactFillRate;
        int writeBytes = compactWriteKb << 10;
        if (durable && housekeepingSeconds > 0) {
            housekeeping.scheduleWithFixedDelay(() -> {
                try {
                    // rewrites the live pages of the emptiest chunks (at most writeBytes) when the live share of
                    // the chunks is below fillRate %; exclusively() then commits them and the old chunks die
                    backend.exclusively(() -> store.compact(fillRate, writeBytes));
                } catch (RuntimeException e) {
                    System.err.println("mongo-java-server: housekeeping failed: " + e);
                }
            }, housekeepingSeconds, housekeepingSeconds, TimeUnit.SECONDS);
        }

        // --durability commit: acknowledged writes survive the process being killed at once; an fsync every
        // --sync-interval-ms bounds what a power loss can take, and moves the sync barrier.
        if (durability.equals("commit") && syncIntervalMs > 0) {
            housekeeping.scheduleWithFixedDelay(() -> {
                try {
                    backend.syncPoint();
                } catch (RuntimeException e) {
                    System.err.println("mongo-java-server: sync failed: " + e);
                }
            }, syncIntervalMs, syncIntervalMs, TimeUnit.MILLISECONDS);
        }

        // --stats-s N: a line of store statistics on stderr every N seconds (for tuning)
        if (statsSeconds > 0) {
            housekeeping.scheduleWithFixedDelay(() -> {
                try {
                    long chunks = store.getLayoutMap().keySet().stream().filter(k -> k.startsWith("chunk.")).count();
                    System.err.printf("mongo-java-server: stats file=%d fileFill=%d%% chunksFill=%d%% chunks=%d"
                            + " version=%d writes=%d commits=%d fsyncs=%d%n",
                        fileSize(path), store.getFillRate(), store.getFileStore().getChunksFillRate(), chunks,
                        store.getCurrentVersion(), backend.writeCount.sum(), backend.commitCount.sum(),
                        backend.syncCount.sum());
                } catch (RuntimeException e) {
                    System.err.println("mongo-java-server: stats failed: " + e);
                }
            }, statsSeconds, statsSeconds, TimeUnit.SECONDS);
        }

        int compactionMs = compactMs;
        // Stopping is idempotent and every caller waits until it is complete: once the netty event loops are shut
        // down no non-daemon thread would be left, and the JVM would otherwise start exiting (running the shutdown
        // hook) while the signal-handler thread is still compacting and closing the file.
        CountDownLatch closed = new CountDownLatch(1);
        Object stopLock = new Object();
        AtomicBoolean stopped = new AtomicBoolean();
        Runnable stop = () -> {
            synchronized (stopLock) {
                if (stopped.getAndSet(true)) {
                    return;
                }
                try {
                    close(server, backend, housekeeping, path, compactionMs);
                } finally {
                    closed.countDown();
                }
            }
        };
        Runtime.getRuntime().addShutdownHook(new Thread(stop, "mongo-java-server-shutdown"));
        for (String signal : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(signal), s -> {
                stop.run();
                System.exit(0);
            });
        }

        System.out.println("mongo-java-server listening on " + host + ":" + port);
        System.out.flush();
        // keep one non-daemon thread until the store is closed
        closed.await();
    }

    private static void close(MongoServer server, DurableH2Backend backend, ScheduledExecutorService housekeeping,
                              Path path, int compactionMs) {
        long t0 = System.nanoTime();
        // no shutdownNow(): interrupting a thread inside FileChannel I/O closes the channel (ClosedByInterruptException)
        housekeeping.shutdown();
        try {
            housekeeping.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.shutdownNow(); // stops listening, closes clients, waits for the event loops to finish
        long sizeBefore = fileSize(path);
        backend.closeStore(compactionMs);
        long commits = backend.commitCount.sum();
        System.err.printf("mongo-java-server: closed %s (%d writes, %d commits, %.3f ms per commit, %d fsyncs;"
                + " file %d -> %d bytes; shutdown %d ms)%n",
            path, backend.writeCount.sum(), commits,
            commits == 0 ? 0.0 : backend.commitNanos.sum() / 1e6 / commits, backend.syncCount.sum(), sizeBefore,
            fileSize(path),
            (System.nanoTime() - t0) / 1_000_000);
    }

    private static long fileSize(Path path) {
        try {
            return Files.size(path);
        } catch (Exception e) {
            return -1;
        }
    }

    private static void usage(String problem) {
        System.err.println("mongo-java-server: " + problem);
        System.err.println(USAGE);
        System.exit(2);
    }
}
