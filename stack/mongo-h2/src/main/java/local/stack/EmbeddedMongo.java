package local.stack;

import java.nio.file.Files;
import java.nio.file.Path;

import java.util.concurrent.atomic.AtomicBoolean;

import org.h2.mvstore.MVStore;

import sun.misc.Signal;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

/**
 * Runs mongo-java-server over one H2 MVStore file: {@code --listen HOST:PORT --file PATH}. Every write is
 * committed before it is acknowledged (see DurableBackend). SIGTERM stops accepting connections, commits,
 * compacts the file for up to {@code --compact-ms} (default 5000) and exits 0. {@code --cache-mb} (default 256)
 * sizes H2's page cache.
 */
public final class EmbeddedMongo {

    public static void main(String[] args) throws Exception {
        String listen = "127.0.0.1:27017";
        String file = null;
        int compactMs = 5000;
        int cacheMb = 256;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--listen" -> listen = args[i + 1];
                case "--file" -> file = args[i + 1];
                case "--compact-ms" -> compactMs = Integer.parseInt(args[i + 1]);
                case "--cache-mb" -> cacheMb = Integer.parseInt(args[i + 1]);
                default -> usage("unknown option " + args[i]);
            }
        }
        if (file == null || args.length % 2 != 0) usage("--file is required");
        int colon = listen.lastIndexOf(':');
        if (colon < 1) usage("--listen must be HOST:PORT");
        String host = listen.substring(0, colon);
        int port = Integer.parseInt(listen.substring(colon + 1));

        Path parent = Path.of(file).toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        // Commits happen when DurableBackend says so, never on a timer. Every query but `_id`/unique equality
        // scans its collection, so the page cache should hold the hot collections (H2's default is 16 MB).
        MVStore store = new MVStore.Builder().fileName(file).autoCommitDisabled().cacheSize(cacheMb).open();
        H2Backend h2 = new H2Backend(store);
        DurableBackend backend = new DurableBackend(h2, store);
        MongoServer server = new MongoServer(backend);
        server.bind(host, port);

        int compactionMs = compactMs;
        String fileName = file;
        AtomicBoolean closed = new AtomicBoolean();
        Runnable close = () -> {
            if (closed.getAndSet(true)) return;
            server.shutdownNow();
            backend.commit();
            store.close(compactionMs);
            System.err.println("mongo-h2: closed " + fileName);
        };
        // SIGTERM and SIGINT are the normal way to stop it: close cleanly and exit 0. Any other exit still closes.
        Runtime.getRuntime().addShutdownHook(new Thread(close, "mongo-h2-shutdown"));
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> {
                close.run();
                System.exit(0);
            });
        }
        System.err.println("mongo-h2: mongo-java-server listening on " + host + ":" + port + ", data in " + file);
    }

    private static void usage(String problem) {
        System.err.println("mongo-h2: " + problem);
        System.err.println(
            "usage: java -jar mongo-h2.jar --listen HOST:PORT --file PATH [--compact-ms N] [--cache-mb N]");
        System.exit(2);
    }
}
