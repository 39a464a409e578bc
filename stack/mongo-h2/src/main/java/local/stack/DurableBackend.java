package local.stack;

import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import de.bwaldvogel.mongo.wire.message.MongoQuery;
import io.netty.channel.Channel;

/**
 * mongo-java-server's backend with two guarantees the stock server lacks:
 *
 * <ul>
 *   <li>Writes are applied one at a time (one lock), so an update that reads and modifies a document
 *       ({@code $inc}, {@code findAndModify}, an upsert) is atomic, and a unique index is checked and
 *       written as one step.
 *   <li>A write is acknowledged only once the MVStore version holding it is committed to the file: stock
 *       auto-commit loses the last second of acknowledged writes when the process is killed. Commits never
 *       run while a write is half-applied, so the file never holds a document without its index entries.
 *       Writers that wait for a commit share it (group commit).
 * </ul>
 *
 * Reads run concurrently with writes and see applied writes before they are committed; a read's
 * {@code maxTimeMS} is honoured. A commit is written
 * to the operating system, not fsync'ed: it survives the process being killed, not the machine losing power.
 */
final class DurableBackend implements MongoBackend {

    /** Commands that never change stored data; every other command is treated as a write. */
    private static final Set<String> READS = Set.of(
        "find", "getMore", "count", "distinct", "listCollections", "listIndexes", "listDatabases", "hello",
        "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "serverStatus", "endSessions", "killCursors",
        "dbStats", "dbstats", "collStats", "connectionStatus", "getParameter", "hostInfo", "whatsmyuri",
        "getLog", "getCmdLineOpts", "saslStart", "saslContinue", "getnonce", "getLastError", "getlasterror",
        "explain", "currentOp", "getFreeMonitoringStatus");

    private final MongoBackend delegate;
    private final MVStore store;
    private final Object applyLock = new Object();
    private final Object commitLock = new Object();
    private final ExecutorService timedReads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "mongo-h2-timed-read");
        thread.setDaemon(true);
        return thread;
    });
    /** The newest MVStore version written to the file. */
    private long committedVersion = -1;

    DurableBackend(MongoBackend delegate, MVStore store) {
        this.delegate = delegate;
        this.store = store;
    }

    private static boolean isRead(String command, Document body) {
        if (command.equals("aggregate")) {
            // $out and $merge write the pipeline's result into a collection.
            Object pipeline = body.get("pipeline");
            return !(pipeline instanceof List<?> stages && stages.stream()
                .anyMatch(s -> s instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge"))));
        }
        return READS.contains(command);
    }

    private <T> T write(Supplier<T> operation) {
        long version;
        T result;
        synchronized (applyLock) {
            try {
                result = operation.get();
            } finally {
                version = store.getCurrentVersion();
            }
        }
        // Whatever the operation changed, even when it failed half-way, is in `version`: commit it (or wait for
        // the writer already committing, whose commit may cover it) before answering.
        synchronized (commitLock) {
            if (committedVersion < version) {
                synchronized (applyLock) {
                    long current = store.getCurrentVersion();
                    store.commit();
                    committedVersion = current;
                }
            }
        }
        return result;
    }

    /** Commits what is applied (at shutdown). */
    void commit() {
        write(() -> null);
    }

    /**
     * A read with {@code maxTimeMS} is answered with MaxTimeMSExpired (code 50) once that time has passed, as
     * MongoDB does; mongo-java-server itself ignores the option. The abandoned scan finishes in the background.
     */
    private Document read(Document body, Supplier<Document> operation) {
        if (!(body.get("maxTimeMS") instanceof Number limit) || limit.longValue() <= 0) return operation.get();
        Future<Document> answer = timedReads.submit(operation::get);
        try {
            return answer.get(limit.longValue(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new MongoServerError(50, "MaxTimeMSExpired", "operation exceeded time limit");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) throw cause;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Document handleMessage(MongoMessage message) {
        Document body = message.getDocument();
        String command = body.keySet().iterator().next();
        return isRead(command, body)
            ? read(body, () -> delegate.handleMessage(message))
            : write(() -> delegate.handleMessage(message));
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        return isRead(command, query)
            ? read(query, () -> delegate.handleCommand(channel, database, command, query))
            : write(() -> delegate.handleCommand(channel, database, command, query));
    }

    @Override
    public QueryResult handleQuery(MongoQuery query) {
        // A legacy OP_QUERY is a read, unless it runs a command (collection "$cmd") that writes.
        Document body = query.getQuery();
        boolean command = "$cmd".equals(query.getCollectionName()) && !body.isEmpty();
        if (command && !isRead(body.keySet().iterator().next(), body)) {
            return write(() -> delegate.handleQuery(query));
        }
        return delegate.handleQuery(query);
    }

    @Override
    public void dropDatabase(String database) {
        write(() -> {
            delegate.dropDatabase(database);
            return null;
        });
    }

    @Override
    public void handleClose(Channel channel) {
        delegate.handleClose(channel);
    }

    @Override
    public Collection<Document> getCurrentOperations(MongoQuery query) {
        return delegate.getCurrentOperations(query);
    }

    @Override
    public Document getServerStatus() {
        return delegate.getServerStatus();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void closeCursors(List<Long> cursorIds) {
        delegate.closeCursors(cursorIds);
    }

    @Override
    public Clock getClock() {
        return delegate.getClock();
    }

    @Override
    public void enableOplog() {
        delegate.enableOplog();
    }

    @Override
    public void disableOplog() {
        delegate.disableOplog();
    }

    @Override
    public MongoDatabase resolveDatabase(String database) {
        return delegate.resolveDatabase(database);
    }

    @Override
    public MongoBackend version(MongoVersion version) {
        delegate.version(version);
        return this;
    }
}
