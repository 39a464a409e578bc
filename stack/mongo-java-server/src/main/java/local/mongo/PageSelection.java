package local.mongo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.backend.DocumentComparator;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;

/**
 * One page of matching documents, in the order a query's {@code sort} gives: the same documents, in the same order,
 * as mongo-java-server's {@code stream.sorted(new DocumentComparator(orderBy)).skip(skip).limit(limit)}.
 *
 * <p>DocumentComparator resolves every sort path of both documents at each comparison (splitting the path, walking
 * the maps). Here each document's sort values are read once, with the same function
 * ({@code Utils.getSubdocumentValueCollectionAware}) and compared with the same {@link ValueComparator}s; with a limit
 * only the best {@code skip + limit} are kept, in a heap whose root is the worst of them, so most documents cost one
 * comparison. Ties keep the scan order, as the stable sort does.
 */
final class PageSelection {

    private PageSelection() {
    }

    /** A match, its sort values, its place in the scan (the last tie-break), and whether no value is an array or
     * an embedded document or a large integral number (see {@link #keyed}). */
    private record Keyed(Document document, Object[] values, long position, boolean total) {
    }

    /**
     * @param orderBy       the query's sort (null, empty or {@code $natural} first: scan order)
     * @param numberToSkip  documents to skip (0 or less: none)
     * @param limit         documents to return after the skip (0 or less: all)
     */
    static List<Document> select(Stream<Document> matching, Document orderBy, int numberToSkip, int limit) {
        int skip = Math.max(numberToSkip, 0);
        if (orderBy == null || orderBy.keySet().isEmpty() || orderBy.keySet().iterator().next().equals("$natural")) {
            // already in the wanted order: stop scanning once the page is full
            Stream<Document> page = matching.skip(skip);
            return (limit > 0 ? page.limit(limit) : page).collect(Collectors.toList());
        }
        List<String> paths = new ArrayList<>(orderBy.keySet());
        Comparator<Object>[] directions = directions(orderBy, paths);
        if (directions == null) {
            // a sort value that is not a number ({$meta: ...}): leave it to mongo-java-server's comparator
            Stream<Document> page = matching.sorted(new DocumentComparator(orderBy)).skip(skip);
            return (limit > 0 ? page.limit(limit) : page).collect(Collectors.toList());
        }
        boolean[] descending = new boolean[directions.length];
        for (int i = 0; i < directions.length; i++) {
            descending[i] = directions[i] == ValueComparator.desc();
        }
        Comparator<Keyed> order = (a, b) -> {
            for (int i = 0; i < directions.length; i++) {
                Object x = a.values[i];
                Object y = b.values[i];
                int cmp;
                if (x != null && y != null && x.getClass() == y.getClass() && FAST.contains(x.getClass())) {
                    cmp = compareSameKind(x, y);
                    cmp = descending[i] ? -cmp : cmp;
                } else {
                    cmp = directions[i].compare(raw(x), raw(y));
                }
                if (cmp != 0) {
                    return cmp;
                }
            }
            return Long.compare(a.position, b.position);
        };
        String[][] fragments = new String[paths.size()][];
        for (int i = 0; i < fragments.length; i++) {
            fragments[i] = fragments(paths.get(i));
        }
        List<Keyed> all = new ArrayList<>();
        boolean total = true;
        Iterator<Document> it = matching.iterator();
        for (long position = 0; it.hasNext(); position++) {
            Keyed next = keyed(it.next(), paths, fragments, position);
            total &= next.total;
            all.add(next);
        }
        if (!total) {
            // an array or an embedded document among the sort values: ValueComparator is not a total order for those
            // (TimSort may even refuse it), so the result depends on the algorithm: use the stock one
            Stream<Document> sorted = all.stream().map(Keyed::document).sorted(new DocumentComparator(orderBy))
                .skip(skip);
            return (limit > 0 ? sorted.limit(limit) : sorted).collect(Collectors.toList());
        }
        long wanted = limit > 0 ? (long) skip + limit : Long.MAX_VALUE;
        List<Keyed> best;
        if (wanted >= all.size()) {
            best = all;
        } else {
            // a max-heap of the best `wanted` so far: its root is the first to give way to a better document
            PriorityQueue<Keyed> heap = new PriorityQueue<>((int) wanted, order.reversed());
            for (Keyed next : all) {
                if (heap.size() < wanted) {
                    heap.add(next);
                } else if (order.compare(next, heap.peek()) < 0) {
                    heap.poll();
                    heap.add(next);
                }
            }
            best = new ArrayList<>(heap);
        }
        best.sort(order);
        if (skip >= best.size()) {
            return Collections.emptyList();
        }
        List<Keyed> page = best.subList(skip, (int) Math.min(best.size(), wanted));
        List<Document> documents = new ArrayList<>(page.size());
        for (Keyed keyed : page) {
            documents.add(keyed.document);
        }
        return documents;
    }

    private static Keyed keyed(Document document, List<String> paths, String[][] fragments, long position) {
        Object[] values = new Object[paths.size()];
        boolean total = true;
        for (int i = 0; i < values.length; i++) {
            Object value = read(document, paths.get(i), fragments[i]);
            total &= !(value instanceof Collection<?> || value instanceof Document);
            // ValueComparator compares two numbers by their normalized forms: normalize once, here. A Long form (an
            // integral value beyond int) is compared to a fraction by truncating the fraction: not transitive either
            if (value instanceof Double || value instanceof Long || value instanceof Integer) {
                Number normal = Utils.normalizeNumber((Number) value);
                total &= !(normal instanceof Long);
                values[i] = new Normalized(normal, value);
            } else {
                values[i] = value;
            }
        }
        return new Keyed(document, values, position, total);
    }

    /**
     * The value at a sort path, as {@code Utils.getSubdocumentValueCollectionAware} reads it (that splits the path
     * with a regular expression at every call): along embedded documents it is their field at each step; anything
     * else on the way (an array, a missing field) is left to that function.
     */
    private static Object read(Document document, String path, String[] fragments) {
        if (fragments == null) {
            return Utils.getSubdocumentValueCollectionAware(document, path);
        }
        Object value = document;
        for (String fragment : fragments) {
            if (!(value instanceof Document embedded)) {
                return Utils.getSubdocumentValueCollectionAware(document, path);
            }
            value = embedded.getOrMissing(fragment);
        }
        return value;
    }

    /** The path's fields, or null for a path that the stock function refuses (it then reports the error). */
    private static String[] fragments(String path) {
        String[] fragments = path.split("\\.", -1);
        for (String fragment : fragments) {
            if (fragment.isEmpty() || fragment.equals("$")) {
                return null;
            }
        }
        return fragments;
    }

    private static Object raw(Object value) {
        return value instanceof Normalized n ? n.value : value;
    }

    /** A number and its normalized form (an Integer, a Long or a Double). */
    private record Normalized(Number normal, Object value) {
    }

    /** Classes whose values {@link #compareSameKind} compares exactly as ValueComparator.asc() does. */
    private static final java.util.Set<Class<?>> FAST = java.util.Set.of(
        String.class, java.time.Instant.class, Boolean.class, Normalized.class);

    /**
     * Two values of the same class in {@link #FAST}, ascending: ValueComparator.doCompare finds them of the same type
     * (its type order, a walk through 14 classes per value, is what this skips) and then compares them so.
     */
    private static int compareSameKind(Object x, Object y) {
        if (x instanceof Normalized a && y instanceof Normalized b) {
            if (a.normal instanceof Long || b.normal instanceof Long) {
                return Long.compare(a.normal.longValue(), b.normal.longValue());
            }
            return Double.compare(a.normal.doubleValue(), b.normal.doubleValue());
        }
        if (x instanceof String a) {
            return a.compareTo((String) y);
        }
        if (x instanceof java.time.Instant a) {
            return a.compareTo((java.time.Instant) y);
        }
        return Boolean.compare((Boolean) x, (Boolean) y);
    }

    /** Ascending or descending per sort path, as DocumentComparator reads them; null if one is not a number. */
    @SuppressWarnings("unchecked")
    private static Comparator<Object>[] directions(Document orderBy, List<String> paths) {
        Comparator<Object>[] directions = new Comparator[paths.size()];
        for (int i = 0; i < directions.length; i++) {
            if (!(orderBy.get(paths.get(i)) instanceof Number direction)) {
                return null;
            }
            directions[i] = direction.intValue() > 0 ? ValueComparator.asc() : ValueComparator.desc();
        }
        return directions;
    }
}
