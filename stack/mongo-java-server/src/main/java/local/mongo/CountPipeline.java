package local.mongo;

import java.util.List;

import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;

/**
 * The pipeline the drivers send for {@code countDocuments}: {@code [{$match: q}, {$skip: n}?, {$limit: n}?,
 * {$group: {_id: 1, n: {$sum: 1}}}]}, answered by counting matches without materialising them.
 *
 * <p>mongo-java-server runs every aggregation on {@code collection.queryAll()}, a list of the whole collection
 * (with {@link CopyOnWriteCollection}, a copy of every document) and only then applies {@code $match}: a count over
 * 100,000 documents copied all 100,000. The answer here is the same document {@code $group} would produce (none
 * when nothing matches, as MongoDB does); any other pipeline takes the stock path.
 */
final class CountPipeline {

    private CountPipeline() {
    }

    /** The {@code aggregate} reply, or null when this is not a count pipeline (or the collection does not exist). */
    static Document answer(String namespace, CopyOnWriteCollection collection, Document command) {
        if (collection == null || !(command.get("pipeline") instanceof List<?> pipeline) || pipeline.size() < 2
            || command.containsKey("explain")) {
            return null;
        }
        Document match = stage(pipeline.get(0), "$match") instanceof Document d ? d : null;
        if (match == null) {
            return null;
        }
        int next = 1;
        long skip = 0;
        long limit = -1;
        if (stage(pipeline.get(next), "$skip") instanceof Number n) {
            skip = n.longValue();
            next++;
        }
        if (next < pipeline.size() && stage(pipeline.get(next), "$limit") instanceof Number n) {
            limit = n.longValue();
            next++;
        }
        if (next != pipeline.size() - 1 || skip < 0 || limit == 0 || limit < -1
            || !(stage(pipeline.get(next), "$group") instanceof Document group) || group.size() != 2
            || !(group.get("_id") instanceof Number id)) {
            return null;
        }
        String field = group.keySet().stream().filter(k -> !k.equals("_id")).findFirst().orElseThrow();
        if (field.startsWith("$") || field.contains(".")
            || !(group.get(field) instanceof Document sum) || sum.size() != 1
            || !(sum.get("$sum") instanceof Integer one) || one != 1) {
            return null;
        }
        long count = collection.countMatching(match, skip, limit);
        List<Document> batch = count == 0 ? List.of()
            : List.of(new Document("_id", id).append(field, count <= Integer.MAX_VALUE ? (Object) (int) count : count));
        Document cursor = new Document("id", 0L).append("ns", namespace).append("firstBatch", batch);
        Document reply = new Document("cursor", cursor);
        Utils.markOkay(reply);
        return reply;
    }

    /** The argument of a one-operator stage {@code {name: argument}}, or null. */
    private static Object stage(Object stage, String name) {
        return stage instanceof Document d && d.size() == 1 ? d.get(name) : null;
    }
}
