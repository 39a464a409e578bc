package local.mongo;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

/**
 * Keys and values of the collections' and unique indexes' MVMaps. H2's default {@link ObjectDataType} stores
 * documents, ObjectIds and index keys with Java serialization (a new ObjectOutputStream, class descriptors and all,
 * for every value of every page a commit writes), and compares index keys ({@link KeyValue}, not Comparable) by
 * serializing both at every step of a binary search: profiled warm, that was ~80% of the server's CPU. This type
 * writes them in a compact tagged form and compares index keys field by field.
 *
 * <p><b>Files written before</b> stay readable: a compact value starts with a byte ObjectDataType never writes
 * (its tags end at 119), anything else is read by ObjectDataType; values this type cannot write compactly (types
 * other than null, String, Integer, Long, Double, Boolean, ObjectId, Instant, Document, List, Missing) are still
 * written by ObjectDataType. Only the order of index keys changes, so index maps are rebuilt once in the new order
 * ({@link #migrateIndexOrder}).
 */
final class CompactDataType extends BasicDataType<Object> {
    static final CompactDataType INSTANCE = new CompactDataType();

    private static final byte DOCUMENT = (byte) 0xE0;
    private static final byte KEY_VALUE = (byte) 0xE1;
    private static final byte OBJECT_ID = (byte) 0xE2;
    private static final byte MISSING = (byte) 0xE3;

    // the type of each element inside a compact value; also the order of types between index key fields
    private static final byte T_NULL = 0;
    private static final byte T_MISSING = 1;
    private static final byte T_FALSE = 2;
    private static final byte T_TRUE = 3;
    private static final byte T_INT = 4;
    private static final byte T_LONG = 5;
    private static final byte T_DOUBLE = 6;
    private static final byte T_STRING = 7;
    private static final byte T_OBJECT_ID = 8;
    private static final byte T_INSTANT = 9;
    private static final byte T_DOCUMENT = 10;
    private static final byte T_LIST = 11;
    /** anything else: never written compactly; ordered among themselves by ObjectDataType */
    private static final byte T_OTHER = 12;

    /** BSON's own nesting limit: deeper values go to ObjectDataType rather than risk the stack */
    private static final int MAX_DEPTH = 100;

    /** Version of the index key order, kept in {@link #FORMAT_MAP} (a name no database's maps can start with). */
    private static final String FORMAT_MAP = "$format";
    private static final String INDEX_ORDER = "indexKeyOrder";
    private static final String INDEX_ORDER_VERSION = "compact-1";

    private static final class NotCompact extends RuntimeException {
        NotCompact() {
            super(null, null, false, false);
        }
    }

    private static final NotCompact NOT_COMPACT = new NotCompact();

    private final ObjectDataType fallback = new ObjectDataType();

    private CompactDataType() {
    }

    /** A builder for maps of documents and index keys (the types of both key and value). */
    static <K, V> MVMap.Builder<K, V> mapBuilder() {
        @SuppressWarnings("unchecked")
        MVMap.Builder<K, V> builder = (MVMap.Builder<K, V>) new MVMap.Builder<Object, Object>()
            .keyType(INSTANCE).valueType(INSTANCE);
        return builder;
    }

    static boolean isIndexMap(String mapName) {
        return !mapName.startsWith(DurableH2Backend.DATA_MAPS) && !mapName.startsWith(DurableH2Backend.META_MAPS)
            && mapName.contains(DurableH2Backend.INDEX_MAPS);
    }

    /**
     * Rebuilds every unique index map of a store written before this type, whose keys are ordered by their Java
     * serialization, in this type's order, and marks the store as done. Runs before the backend opens any map; the
     * changes are committed once at the end, so a crash half-way leaves the old store, rebuilt again at next start.
     */
    static MVStore migrateIndexOrder(MVStore store) {
        MVMap<String, String> format = store.openMap(FORMAT_MAP);
        if (INDEX_ORDER_VERSION.equals(format.get(INDEX_ORDER))) {
            return store;
        }
        for (String name : List.copyOf(store.getMapNames())) {
            if (!isIndexMap(name)) {
                continue;
            }
            MVMap<Object, Object> old = store.openMap(name); // ObjectDataType: reads the old keys in their old order
            List<Map.Entry<Object, Object>> entries = new ArrayList<>(old.entrySet());
            store.removeMap(old);
            MVMap<Object, Object> rebuilt = store.openMap(name, mapBuilder());
            for (Map.Entry<Object, Object> entry : entries) {
                rebuilt.put(entry.getKey(), entry.getValue());
            }
        }
        format.put(INDEX_ORDER, INDEX_ORDER_VERSION);
        store.commit();
        return store;
    }

    @Override
    public Object[] createStorage(int size) {
        return new Object[size];
    }

    @Override
    public int getMemory(Object obj) {
        int size = estimate(obj, 0);
        return size >= 0 ? size : fallback.getMemory(obj);
    }

    /** Roughly the heap a value takes, or -1 when it is not written compactly. */
    private static int estimate(Object v, int depth) {
        if (depth > MAX_DEPTH) {
            return -1;
        }
        if (v instanceof KeyValue k) {
            return estimateElements(k, depth);
        }
        switch (typeOf(v)) {
            case T_NULL, T_MISSING, T_FALSE, T_TRUE:
                return 8;
            case T_INT:
                return 16;
            case T_LONG, T_DOUBLE, T_INSTANT:
                return 24;
            case T_OBJECT_ID:
                return 48;
            case T_STRING:
                return 40 + 2 * ((String) v).length();
            case T_LIST:
                return estimateElements((List<?>) v, depth);
            case T_DOCUMENT: {
                int size = 64;
                for (Map.Entry<String, Object> e : ((Document) v).entrySet()) {
                    int value = estimate(e.getValue(), depth + 1);
                    if (value < 0) {
                        return -1;
                    }
                    size += 48 + 2 * e.getKey().length() + value;
                }
                return size;
            }
            default:
                return -1;
        }
    }

    private static int estimateElements(Iterable<?> elements, int depth) {
        int size = 32;
        for (Object element : elements) {
            int value = estimate(element, depth + 1);
            if (value < 0) {
                return -1;
            }
            size += 8 + value;
        }
        return size;
    }

    @Override
    public void write(WriteBuffer buff, Object obj) {
        int start = buff.position();
        try {
            if (obj instanceof Document d) {
                writeDocument(buff.put(DOCUMENT), d, 0);
                return;
            }
            if (obj instanceof KeyValue k) {
                buff.put(KEY_VALUE).putVarInt(k.size());
                for (Object element : k) {
                    writeElement(buff, element, 1);
                }
                return;
            }
            if (obj instanceof ObjectId id) {
                buff.put(OBJECT_ID).put(id.toByteArray());
                return;
            }
            if (obj instanceof Missing) {
                buff.put(MISSING);
                return;
            }
        } catch (NotCompact e) {
            buff.position(start);
        }
        fallback.write(buff, obj);
    }

    private static void writeDocument(WriteBuffer buff, Document d, int depth) {
        buff.putVarInt(d.size());
        for (Map.Entry<String, Object> e : d.entrySet()) {
            putString(buff, e.getKey());
            writeElement(buff, e.getValue(), depth + 1);
        }
    }

    private static void writeElement(WriteBuffer buff, Object v, int depth) {
        if (depth > MAX_DEPTH) {
            throw NOT_COMPACT;
        }
        switch (typeOf(v)) {
            case T_NULL -> buff.put(T_NULL);
            case T_MISSING -> buff.put(T_MISSING);
            case T_FALSE -> buff.put(T_FALSE);
            case T_TRUE -> buff.put(T_TRUE);
            case T_INT -> buff.put(T_INT).putInt((Integer) v);
            case T_LONG -> buff.put(T_LONG).putLong((Long) v);
            case T_DOUBLE -> buff.put(T_DOUBLE).putLong(Double.doubleToRawLongBits((Double) v));
            case T_STRING -> putString(buff.put(T_STRING), (String) v);
            case T_OBJECT_ID -> buff.put(T_OBJECT_ID).put(((ObjectId) v).toByteArray());
            case T_INSTANT -> buff.put(T_INSTANT).putLong(((Instant) v).getEpochSecond()).putInt(((Instant) v).getNano());
            case T_DOCUMENT -> writeDocument(buff.put(T_DOCUMENT), (Document) v, depth);
            case T_LIST -> {
                List<?> list = (List<?>) v;
                buff.put(T_LIST).putVarInt(list.size());
                for (Object element : list) {
                    writeElement(buff, element, depth + 1);
                }
            }
            default -> throw NOT_COMPACT;
        }
    }

    private static byte typeOf(Object v) {
        if (v == null) {
            return T_NULL;
        } else if (v instanceof String) {
            return T_STRING;
        } else if (v instanceof Integer) {
            return T_INT;
        } else if (v instanceof Long) {
            return T_LONG;
        } else if (v instanceof Double) {
            return T_DOUBLE;
        } else if (v instanceof Boolean b) {
            return b ? T_TRUE : T_FALSE;
        } else if (v instanceof ObjectId) {
            return T_OBJECT_ID;
        } else if (v instanceof Instant) {
            return T_INSTANT;
        } else if (v instanceof Document) {
            return T_DOCUMENT;
        } else if (v instanceof List<?>) {
            return T_LIST;
        } else if (v instanceof Missing) {
            return T_MISSING;
        }
        return T_OTHER;
    }

    private static WriteBuffer putString(WriteBuffer buff, String s) {
        return buff.putVarInt(s.length()).putStringData(s, s.length());
    }

    @Override
    public Object read(ByteBuffer buff) {
        switch (buff.get(buff.position())) {
            case DOCUMENT -> {
                buff.get();
                return readDocument(buff);
            }
            case KEY_VALUE -> {
                buff.get();
                return new KeyValue(readList(buff));
            }
            case OBJECT_ID -> {
                buff.get();
                return readObjectId(buff);
            }
            case MISSING -> {
                buff.get();
                return Missing.getInstance();
            }
            default -> {
                return fallback.read(buff);
            }
        }
    }

    private static Document readDocument(ByteBuffer buff) {
        int n = DataUtils.readVarInt(buff);
        Document d = new Document();
        for (int i = 0; i < n; i++) {
            String key = DataUtils.readString(buff);
            d.put(key, readElement(buff));
        }
        return d;
    }

    private static List<Object> readList(ByteBuffer buff) {
        int n = DataUtils.readVarInt(buff);
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(readElement(buff));
        }
        return list;
    }

    private static ObjectId readObjectId(ByteBuffer buff) {
        byte[] bytes = new byte[12];
        buff.get(bytes);
        return new ObjectId(bytes);
    }

    private static Object readElement(ByteBuffer buff) {
        byte type = buff.get();
        switch (type) {
            case T_NULL:
                return null;
            case T_MISSING:
                return Missing.getInstance();
            case T_FALSE:
                return Boolean.FALSE;
            case T_TRUE:
                return Boolean.TRUE;
            case T_INT:
                return buff.getInt();
            case T_LONG:
                return buff.getLong();
            case T_DOUBLE:
                return Double.longBitsToDouble(buff.getLong());
            case T_STRING:
                return DataUtils.readString(buff);
            case T_OBJECT_ID:
                return readObjectId(buff);
            case T_INSTANT:
                return Instant.ofEpochSecond(buff.getLong(), buff.getInt());
            case T_DOCUMENT:
                return readDocument(buff);
            case T_LIST:
                return readList(buff);
            default:
                throw new IllegalStateException("unknown element type " + type);
        }
    }

    /**
     * Index keys field by field: by type (the T_ order), then by value; equal exactly when their fields are equal
     * with the same types (as with the serialized comparison before: 1 and 1.0 are different keys, as are
     * documents with the same fields in another order). Everything else as ObjectDataType compares it.
     */
    @Override
    public int compare(Object a, Object b) {
        if (a instanceof KeyValue x && b instanceof KeyValue y) {
            return compareSequences(x, x.size(), y, y.size());
        }
        return fallback.compare(a, b);
    }

    private int compareSequences(Iterable<?> x, int xSize, Iterable<?> y, int ySize) {
        var xs = x.iterator();
        var ys = y.iterator();
        while (xs.hasNext() && ys.hasNext()) {
            int c = compareElements(xs.next(), ys.next());
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(xSize, ySize);
    }

    private int compareElements(Object x, Object y) {
        if (x == y) {
            return 0;
        }
        byte tx = typeOf(x);
        byte ty = typeOf(y);
        if (tx != ty) {
            return Byte.compare(tx, ty);
        }
        return switch (tx) {
            case T_NULL, T_MISSING, T_FALSE, T_TRUE -> 0;
            case T_INT -> Integer.compare((Integer) x, (Integer) y);
            case T_LONG -> Long.compare((Long) x, (Long) y);
            case T_DOUBLE -> Double.compare((Double) x, (Double) y);
            case T_STRING -> ((String) x).compareTo((String) y);
            case T_OBJECT_ID -> ((ObjectId) x).compareTo((ObjectId) y);
            case T_INSTANT -> ((Instant) x).compareTo((Instant) y);
            case T_DOCUMENT -> compareDocuments((Document) x, (Document) y);
            case T_LIST -> compareSequences((List<?>) x, ((List<?>) x).size(), (List<?>) y, ((List<?>) y).size());
            default -> fallback.compare(x, y);
        };
    }

    private int compareDocuments(Document x, Document y) {
        var xs = x.entrySet().iterator();
        var ys = y.entrySet().iterator();
        while (xs.hasNext() && ys.hasNext()) {
            Map.Entry<String, Object> a = xs.next();
            Map.Entry<String, Object> b = ys.next();
            int c = a.getKey().compareTo(b.getKey());
            if (c == 0) {
                c = compareElements(a.getValue(), b.getValue());
            }
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(x.size(), y.size());
    }
}
