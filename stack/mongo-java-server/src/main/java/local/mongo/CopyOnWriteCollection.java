package local.mongo;

import java.lang.ref.SoftReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.Page;
import org.h2.mvstore.RootReference;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryMatcher;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.Document;

/**
 * H2Collection whose queries hand out deep copies of the stored documents, and copy only what they return.
 *
 * <p><b>Copies.</b> mongo-java-server updates a document by mutating, in place, the object its query returned,
 * which with the H2 backend is the very object held in the MVMap page; a reply still being encoded could then show
 * a later state (see {@link DurableH2Backend}). Every document a query returns is therefore a copy, so an update
 * builds a new object and stores it with {@code MVMap.put}: stored objects are never mutated.
 *
 * <p><b>Only the returned documents are copied.</b> Because stored objects are never mutated, the query is matched,
 * ordered and paged on the stored objects themselves, and only the page is copied. Stock mongo-java-server (and
 * this class before) matched every document, copied every match, sorted all of them with a comparator that resolves
 * each sort path at every comparison, and then skipped: a 20-row page of a 33,000-match query copied 33,000
 * documents (the copies outlive a young-generation collection, so the collector copies them again) and made about
 * 500,000 comparisons. {@link PageSelection} reads each match's sort values once and keeps only the best
 * {@code skip + limit} in a bounded heap, with the same order and the same ties as the stable sort.
 *
 * <p><b>Counts</b> ({@code count}, and {@code countDocuments}' pipeline through {@link CountPipeline}) materialise
 * nothing. <b>One scan for a page and its count</b>: the service asks for both at once with the same filter; the
 * matches of the last full scan are kept while the collection is unchanged (see {@link #scan}), so the second of
 * the two reuses them (once: a repeated query scans again). A count takes no collection lock (MVMap reads are safe
 * under concurrent writes; the stock
 * {@code count} takes none either) and uses a matcher of its own, since the collection's keeps state and is
 * guarded by the collection lock.
 */
final class CopyOnWriteCollection extends H2Collection {

    private final MVMap<Object, Document> dataMap;

    CopyOnWriteCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                          MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap,
                          CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
        this.dataMap = dataMap;
    }

    /**
     * A query without an index: its matches come from {@link #scan} (shared with a count of the same query), then
     * the stock path below pages them. A natural-descending scan ({@code $natural: -1}) keeps the stock order.
     */
    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        if (isNaturalDescending(orderBy)) {
            return super.matchDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        List<Document> matches = scan(query, document -> documentMatchesQuery(document, query));
        return page(matches.stream(), query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /** Every query goes through here (a scan's matches, an index's positions, or a natural-descending scan). */
    @Override
    protected QueryResult matchDocumentsFromStream(Stream<Document> documentStream, Document query, Document orderBy,
                                                   int numberToSkip, int limit, int batchSize,
                                                   Document fieldSelector) {
        Stream<Document> matching = documentStream.filter(document -> documentMatchesQuery(document, query));
        return page(matching, query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /** Orders and pages the matches, then hands copies of the page to the stock path. */
    private QueryResult page(Stream<Document> matching, Document query, Document orderBy, int numberToSkip, int limit,
                             int batchSize, Document fieldSelector) {
        List<Document> page = PageSelection.select(matching, orderBy, numberToSkip, limit);
        List<Document> copies = new ArrayList<>(page.size());
        for (Document document : page) {
            copies.add(document.cloneDeeply());
        }
        // the stock path checks the copies against the query again (only the page: cheap), projects, and makes the
        // cursor for what exceeds the batch size
        return super.matchDocumentsFromStream(query, copies.stream(), 0, 0, batchSize, null, fieldSelector);
    }

    @Override
    public int count(Document query, int skip, int limit) {
        if (query == null || query.keySet().isEmpty()) {
            return super.count(query, skip, limit);
        }
        return Math.toIntExact(countMatching(query, Math.max(skip, 0), limit > 0 ? limit : -1));
    }

    /** Documents matching {@code query}, after skipping {@code skip}, at most {@code limit} (-1: no limit). */
    long countMatching(Document query, long skip, long limit) {
        QueryMatcher matcher = new DefaultQueryMatcher();
        Index<Object> index = indexFor(query);
        if (index == null && skip == 0 && limit < 0) {
            return scan(query, document -> matcher.matches(document, query)).size();
        }
        Stream<Document> candidates = index == null ? dataMap.values().stream()
            : StreamSupport.stream(index.getPositions(query).spliterator(), false).map(this::getDocument);
        Stream<Document> matching = candidates.filter(document -> matcher.matches(document, query));
        if (skip > 0) {
            matching = matching.skip(skip);
        }
        if (limit >= 0) {
            matching = matching.limit(limit);
        }
        return matching.count();
    }

    private Index<Object> indexFor(Document query) {
        for (Index<Object> index : getIndexes()) {
            if (index.canHandle(query)) {
                return index;
            }
        }
        return null;
    }

    /**
     * The stored documents that match {@code query}, in key order. The last scan's matches are kept for one reuse
     * while the collection is unchanged (the same MVMap root page: a write replaces it), so a page and the count of
     * the same filter, which the service sends together, read the collection once: whichever comes second waits
     * here for the first and reuses its result. Softly held: the collector may drop it.
     */
    private List<Document> scan(Document query, Predicate<Document> matcher) {
        synchronized (scanLock) {
            RootReference<Object, Document> root = dataMap.flushAndGetRoot();
            Scan last = lastScan;
            // equal values and the same key order at every level (an embedded-document match is order-sensitive)
            if (last != null && last.root == root.root && last.query.equals(query)
                && last.queryText.equals(query.toString())) {
                // used once: it serves the count of a page (or the page of a count), not every later repetition of
                // the query, which scans again as it would on MongoDB (and meets its maxTimeMS)
                lastScan = null;
                List<Document> matches = last.matches.get();
                if (matches != null) {
                    return matches;
                }
            }
            List<Document> matches = new ArrayList<>();
            Cursor<Object, Document> cursor = dataMap.cursor(root, null, null, false);
            while (cursor.hasNext()) {
                cursor.next();
                Document document = cursor.getValue();
                if (matcher.test(document)) {
                    matches.add(document);
                }
            }
            List<Document> result = Collections.unmodifiableList(matches);
            lastScan = new Scan(query.cloneDeeply(), query.toString(), root.root, new SoftReference<>(result));
            return result;
        }
    }

    private final Object scanLock = new Object();
    /** Guarded by scanLock. */
    private Scan lastScan;

    private record Scan(Document query, String queryText, Page<Object, Document> root, SoftReference<List<Document>> matches) {
    }
}
