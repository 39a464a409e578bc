package local.mongo;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.message.MongoQuery;
import io.netty.channel.Channel;

/**
 * mongo-java-server's H2 backend, made durable: a write command is answered only after the MVStore version
 * holding its effects has been committed to the file (and, with fsync on, forced to the disk).
 *
 * <p><b>The hook.</b> In mongo-java-server 1.47.0 every request is handled synchronously on a netty event-loop
 * thread by {@code MongoDatabaseHandler.channelRead0}, which writes the reply only after the backend returns.
 * OP_MSG goes through {@code MongoBackend.handleMessage}, legacy {@code $cmd} OP_QUERY through
 * {@code MongoBackend.handleCommand}, and {@code AbstractMongoBackend.handleMessage} itself calls
 * {@code handleCommand}. 1.47.0 has no asynchronous command path, so overriding {@link #handleCommand} (plus
 * {@link #handleQuery} and {@link #dropDatabase}) covers every request.
 *
 * <p><b>Writes</b> are applied one at a time under {@code applyLock}. The H2 backend writes its MVMaps directly (no
 * MVStore transactions), so holding the lock across every commit also guarantees that a commit never captures a
 * half-applied write (a document without its unique-index entry, say).
 *
 * <p><b>Group commit.</b> A thread that releases {@code applyLock} commits every applied write first, unless other
 * threads are queued for the lock: then the last of them commits for all. Writers whose write was committed by
 * another thread just wait for the commit to be published. Under load one commit covers a burst of writes; alone, a
 * writer commits its own write with no hand-off to another thread.
 *
 * <p><b>What a commit guarantees.</b> {@link MVStore#commit()} serializes the changed pages into a new chunk and
 * writes it with {@code FileChannel.write}, returning once it is in the OS page cache: enough to survive the process
 * being killed. {@link MVStore#sync()} adds {@code FileChannel.force(true)} (fsync), which power loss or a kernel
 * crash needs. With fsync on, writers also wait for an fsync that covers them (one fsync at a time, outside the
 * lock, covering every commit made before it); with fsync off the launcher calls {@link #syncPoint()} periodically.
 *
 * <p><b>Sync barrier.</b> Each commit writes a chunk, and MVStore overwrites a chunk once none of its pages is live
 * and it is older than the retention time. The launcher sets the retention time to 0 (the default 45 s leaves
 * hundreds of MB of dead chunks in the file at hundreds of commits a second), so the newest fsync'ed version is
 * registered as in use ({@link MVStore#registerVersionUsage()}) until a newer one is fsync'ed: no chunk that the
 * state on disk needs is overwritten before a newer state is on disk.
 *
 * <p><b>Reads</b> run concurrently, without the lock, with the current version registered as in use so that no chunk
 * they may visit is overwritten under them (mongo-java-server materializes query results, so a read ends with its
 * command). A "read" aimed at a database that is not open yet counts as a write, because opening a database
 * creates maps in the store; unknown commands count as writes.
 *
 * <p><b>Copy on write.</b> mongo-java-server updates a document by mutating, in place, the object it got from its
 * query, which with the H2 backend is the very object held in the MVMap page. Another thread encoding a reply that
 * holds the same object (a findAndModify result waiting for its group commit, a find result) would then send a
 * later state, or fail with a ConcurrentModificationException. {@link CopyOnWriteCollection} hands out deep copies
 * of the matching documents instead, so an update builds a new object, stores it with {@code MVMap.put}, and stored
 * objects are never mutated.
 */
final class DurableH2Backend extends H2Backend {

    /** Commands (lower case) that never change stored data. Everything else is treated as a write. */
    private static final Set<String> READS = Set.of(
        "find", "getmore", "count", "distinct", "listcollections", "listindexes", "listdatabases", "hello",
        "ismaster", "ping", "buildinfo", "serverstatus", "endsessions", "killcursors", "dbstats", "collstats",
        "connectionstatus", "getparameter", "hostinfo", "whatsmyuri", "getlog", "getcmdlineopts", "saslstart",
        "saslcontinue", "getnonce", "getlasterror", "explain", "currentop", "getfreemonitoringstatus",
        "replsetgetstatus", "validate", "listcommands", "features", "atlasversion");

    private final MVStore store;
    private final boolean durable;
    private final boolean fsync;

    private final ReentrantLock applyLock = new ReentrantLock();
    /** Writes applied so far (guarded by applyLock). */
    private long applied;
    /** Writes covered by a commit (written under applyLock and monitor). */
    private volatile long committed;

    private final Object monitor = new Object();
    /** Writes covered by an fsync (guarded by monitor). */
    private long synced;
    /** Whether a writer is running an fsync for others (guarded by monitor). */
    private boolean syncing;
    private int waiters;
    private volatile RuntimeException failure;
    private volatile boolean closed;

    private final Object syncLock = new Object();
    /** The newest fsync'ed version, registered as in use (guarded by syncLock). */
    private MVStore.TxCounter syncBarrier;

    /** H2Database's map names (its own constants are not public): a collection's documents, its metadata
     * ({@code meta.<db>.<collection>}), and its unique indexes ({@code <db>.<collection>._index_<name>}). */
    static final String DATA_MAPS = "databases.";
    static final String META_MAPS = "meta.";
    static final String INDEX_MAPS = "._index_";

    final LongAdder writeCount = new LongAdder();
    final LongAdder commitCount = new LongAdder();
    final LongAdder commitNanos = new LongAdder();
    final LongAdder syncCount = new LongAdder();

    /**
     * @param durable false only to measure the stock behaviour: writes are neither serialized nor committed here
     *                (the store's own auto-commit must then be on)
     * @param fsync   whether a write also waits for an fsync covering it
     */
    DurableH2Backend(MVStore store, boolean durable, boolean fsync) {
        // opens the databases found in the store, after their index maps are in CompactDataType's key order
        super(CompactDataType.migrateIndexOrder(store));
        this.store = store;
        this.durable = durable;
        this.fsync = fsync;
        store.commit();
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        // called from H2Backend's constructor too, before this class's fields are set: use getMvStore()
        return new CopyOnWriteDatabase(databaseName, getMvStore(), getCursorRegistry());
    }

    /**
     * H2Database whose collections are {@link CopyOnWriteCollection}s (map names as in H2Database 1.47.0). An inner
     * class: H2Database's constructor already opens collections, before a field of this class could be set, so
     * the store comes from the enclosing backend.
     */
    final class CopyOnWriteDatabase extends H2Database {
        CopyOnWriteDatabase(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
            super(databaseName, mvStore, cursorRegistry);
        }

        @Override
        protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
            String fullName = getFullCollectionNamespace(collectionName);
            MVMap<Object, Document> dataMap = getMvStore().openMap(DATA_MAPS + fullName,
                CompactDataType.mapBuilder());
            MVMap<String, Object> metaMap = getMvStore().openMap(META_MAPS + fullName);
            return new CopyOnWriteCollection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
        }

        @Override
        protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                        boolean sparse) {
            // H2Database opens the index map by name (its private mapNameForIndex); opened here first with our
            // types, the store hands it that map
            getMvStore().openMap(getFullCollectionNamespace(collectionName) + INDEX_MAPS + indexName,
                CompactDataType.mapBuilder());
            return super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
        }

        @Override
        public Document handleCommand(Channel channel, String command, Document query,
                                      DatabaseResolver databaseResolver, Oplog oplog) {
            if (command.equalsIgnoreCase("aggregate") && query.get(command) instanceof String collectionName
                && !query.containsKey("let")
                && resolveCollection(collectionName, false) instanceof CopyOnWriteCollection collection) {
                Document counted = CountPipeline.answer(getFullCollectionNamespace(collectionName), collection, query);
                if (counted != null) {
                    clearLastStatus(channel);
                    return counted;
                }
            }
            return super.handleCommand(channel, command, query, databaseResolver, oplog);
        }
    }

    static boolean isReadCommand(String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (name.equals("aggregate")) {
            // $out and $merge write the pipeline's result into a collection
            if (query.get("pipeline") instanceof List<?> stages) {
                for (Object stage : stages) {
                    if (stage instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge"))) {
                        return false;
                    }
                }
            }
            return true;
        }
        return READS.contains(name);
    }

    private boolean isRead(String databaseName, String command, Document query) {
        // resolving a database that is not open yet creates it (and writes its maps)
        return isReadCommand(command, query)
            && (databaseName.equals("admin") || listDatabaseNames().contains(databaseName));
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        if (isRead(databaseName, command, query)) {
            return withinMaxTime(query, () -> read(() -> super.handleCommand(channel, databaseName, command, query)));
        }
        return write(() -> super.handleCommand(channel, databaseName, command, query));
    }

    @Override
    public QueryResult handleQuery(MongoQuery query) {
        // legacy OP_QUERY on a collection: a read, unless its database still has to be created
        if (listDatabaseNames().contains(query.getDatabaseName())) {
            return read(() -> super.handleQuery(query));
        }
        return write(() -> super.handleQuery(query));
    }

    @Override
    public void dropDatabase(String databaseName) {
        write(() -> {
            super.dropDatabase(databaseName);
            return null;
        });
    }

    private final ExecutorService timedReads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "mongo-java-server-timed-read");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * A read with {@code maxTimeMS} is answered with MaxTimeMSExpired (code 50) once that time has passed, as
     * MongoDB does; mongo-java-server itself ignores the option. The abandoned scan finishes in the background.
     */
    private Document withinMaxTime(Document query, Supplier<Document> operation) {
        if (!(query.get("maxTimeMS") instanceof Number limit) || limit.longValue() <= 0) return operation.get();
        Future<Document> answer = timedReads.submit(operation::get);
        try {
            return answer.get(limit.longValue(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            // no interrupt: an interrupt that meets the reader inside FileChannel I/O closes the store's file channel
            // (ClosedByInterruptException), and every later read and commit of the store then fails
            answer.cancel(false);
            throw new MongoServerError(50, "MaxTimeMSExpired", "operation exceeded time limit");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) throw cause;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private <T> T read(Supplier<T> operation) {
        MVStore.TxCounter usage = store.registerVersionUsage();
        try {
            return operation.get();
        } finally {
            store.deregisterVersionUsage(usage);
        }
    }

    /** Applies a write under the lock; returns once a commit (and with fsync on, an fsync) covers it. */
    private <T> T write(Supplier<T> operation) {
        writeCount.increment();
        if (!durable) {
            return operation.get();
        }
        T result = null;
        RuntimeException error = null;
        long seq;
        boolean nested;
        applyLock.lock();
        try {
            // a nested write (dropDatabase called from handleCommand) is committed with the outer one
            nested = applyLock.getHoldCount() > 1;
            if (closed) {
                throw new MongoServerException("server is shutting down");
            }
            try {
                result = operation.get();
            } catch (RuntimeException e) {
                // whatever the failed write did apply is committed too before the error is answered
                error = e;
            }
            seq = ++applied;
        } finally {
            release();
        }
        if (!nested) {
            awaitCommitted(seq);
            if (fsync) {
                awaitSynced(seq);
            }
        }
        if (error != null) {
            throw error;
        }
        return result;
    }

    /** Releases applyLock, first committing the applied writes unless a queued thread will do so. */
    private void release() {
        try {
            if (applyLock.getHoldCount() == 1 && applied > committed && !applyLock.hasQueuedThreads()
                && !closed && failure == null) {
                commitLocked();
            }
        } finally {
            applyLock.unlock();
        }
    }

    /** Commits every applied write (applyLock held) and tells the waiting writers. */
    private void commitLocked() {
        long target = applied;
        long t0 = System.nanoTime();
        try {
            store.commit();
        } catch (RuntimeException e) {
            synchronized (monitor) {
                failure = e;
                monitor.notifyAll();
            }
            throw e;
        }
        commitCount.increment();
        commitNanos.add(System.nanoTime() - t0);
        synchronized (monitor) {
            committed = target;
            if (waiters > 0) {
                monitor.notifyAll();
            }
        }
    }

    private void awaitCommitted(long seq) {
        if (committed >= seq) {
            return;
        }
        synchronized (monitor) {
            while (committed < seq) {
                checkFailure();
                waitOnMonitor();
            }
        }
    }

    private void awaitSynced(long seq) {
        while (true) {
            synchronized (monitor) {
                while (true) {
                    if (synced >= seq) {
                        return;
                    }
                    checkFailure();
                    if (!syncing) {
                        syncing = true;
                        break;
                    }
                    waitOnMonitor();
                }
            }
            try {
                syncPoint();
            } finally {
                synchronized (monitor) {
                    syncing = false;
                    monitor.notifyAll();
                }
            }
        }
    }

    private void checkFailure() {
        RuntimeException e = failure;
        if (e != null) {
            throw new MongoServerException("the store failed, the write may be lost: " + e.getMessage(), e);
        }
    }

    private void waitOnMonitor() {
        waiters++;
        try {
            monitor.wait();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MongoServerException("interrupted while waiting for a commit");
        } finally {
            waiters--;
        }
    }

    /**
     * Commits every applied write, fsyncs the file (outside applyLock, so writes go on meanwhile), then moves the
     * sync barrier to the version just synced and publishes which writes are synced.
     */
    void syncPoint() {
        synchronized (syncLock) {
            long target;
            MVStore.TxCounter next;
            applyLock.lock();
            try {
                if (closed) {
                    return;
                }
                if (applied > committed) {
                    commitLocked();
                }
                target = committed;
                next = store.registerVersionUsage();
            } finally {
                applyLock.unlock();
            }
            try {
                store.sync();
            } catch (RuntimeException e) {
                store.deregisterVersionUsage(next);
                synchronized (monitor) {
                    failure = e;
                    monitor.notifyAll();
                }
                throw e;
            }
            syncCount.increment();
            if (syncBarrier != null) {
                store.deregisterVersionUsage(syncBarrier);
            }
            syncBarrier = next;
            synchronized (monitor) {
                synced = Math.max(synced, target);
                monitor.notifyAll();
            }
        }
    }

    /** Runs an operation on the store between writes (housekeeping), then commits what it changed. */
    void exclusively(Runnable operation) {
        applyLock.lock();
        try {
            if (closed) {
                return;
            }
            operation.run();
            if (store.hasUnsavedChanges()) {
                commitLocked();
            }
        } finally {
            applyLock.unlock();
        }
    }

    /** Stops accepting writes, commits and fsyncs what is applied, then closes the store with compaction. */
    void closeStore(int compactMillis) {
        synchronized (syncLock) {
            applyLock.lock();
            try {
                if (closed) {
                    return;
                }
                closed = true;
                if (durable) {
                    commitLocked();
                    store.sync();
                    synchronized (monitor) {
                        synced = committed;
                        monitor.notifyAll();
                    }
                }
                if (syncBarrier != null) {
                    store.deregisterVersionUsage(syncBarrier);
                    syncBarrier = null;
                }
                // close(ms): commit, compact (rewrite chunks with a low fill rate, move chunks to the start of the
                // file and truncate it) for up to ms milliseconds, write a clean-shutdown header; -1: full rewrite
                store.close(compactMillis);
            } finally {
                applyLock.unlock();
            }
        }
    }

    @Override
    public void close() {
        // MongoServer.shutdown() calls this once its event loops have stopped; the launcher then closes the store
        // itself (closeStore) with compaction.
    }
}
