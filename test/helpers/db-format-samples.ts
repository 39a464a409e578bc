import { expect } from 'chai';
import {
  Binary,
  BSONRegExp,
  Decimal128,
  Double,
  BSON,
  Int32,
  Long,
  ObjectId,
  type Db,
  type Document,
} from 'mongodb';

/*
 * Documents of every BSON type the service stores (and a few it does not), for the embedded database's storage
 * format: written, read back after a restart, and found through unique indexes. The same samples, written by the
 * launcher before its compact format, are in test/fixtures/embedded-db/pre-compact.mv (make-pre-compact.ts).
 */

export const SAMPLES = 'samples';
export const KEYED = 'keyed';
/** `keyed` has string ids */
export type KeyedDoc = { _id: string; k: unknown };

export function samples(): Document[] {
  const docs: Document[] = Array.from({ length: 60 }, (_, i) => ({
    _id: new ObjectId(i.toString(16).padStart(24, '0')),
    email: `user${i}@example.test`,
    org: `org-${i % 3}`,
    n: new Int32(i),
    long: Long.fromString(String(9007199254740993n + BigInt(i))),
    double: new Double(i + 0.5),
    negativeZero: new Double(-0),
    notANumber: NaN,
    infinite: -Infinity,
    bool: i % 2 === 0,
    nothing: null,
    date: new Date(Date.UTC(2026, 0, 1) + i * 1001),
    text: `${'héllo 🌍 '.repeat(i % 5)}${i}`,
    nested: { a: [new Int32(1), 'two', { three: new Int32(3) }, [new Long(4)]], empty: {}, list: [] },
    // not written compactly: kept in Java serialization
    bytes: new Binary(Buffer.from([i, 1, 2])),
    decimal: Decimal128.fromString(`${i}.25`),
    pattern: new BSONRegExp('^a', 'i'),
  }));
  docs.push({
    _id: new ObjectId('f'.repeat(24)),
    email: 'big@example.test',
    org: 'big',
    n: 0,
    text: 'x'.repeat(70_000),
  });
  return docs;
}

/** One document per type of unique key (string `_id`s). */
export function keyed(): Document[] {
  const keys: unknown[] = [
    new Int32(1),
    'one',
    new Date(Date.UTC(2026, 5, 1)),
    { x: new Int32(1), y: 'z' },
    new ObjectId('a'.repeat(24)),
    Long.fromString('9007199254740993'),
    true,
    null,
  ];
  return keys.map((k, i) => ({ _id: `k${i}`, k }));
}

export async function insertSamples(db: Db) {
  await db.collection(SAMPLES).createIndex({ email: 1 }, { unique: true });
  await db.collection(SAMPLES).createIndex({ org: 1, n: 1 }, { unique: true });
  await db.collection(KEYED).createIndex({ k: 1 }, { unique: true });
  await db.collection(SAMPLES).insertMany(samples());
  await db.collection(KEYED).insertMany(keyed());
}

const canonical = (doc: Document | null) => BSON.EJSON.stringify(doc, { relaxed: false });
const exact = { promoteValues: false } as const;

/** Every sample is stored exactly (types included), found through each unique index, and its keys refused again. */
export async function expectSamples(db: Db) {
  const stored = db.collection(SAMPLES);
  const all = await stored.find({}, exact).sort({ _id: 1 }).toArray();
  expect(all.map(canonical)).to.deep.equal(samples().map(canonical));
  for (const doc of samples()) {
    expect(
      canonical(await stored.findOne({ email: doc.email as string }, exact)),
      String(doc.email),
    ).to.equal(canonical(doc));
    expect(canonical(await stored.findOne({ org: doc.org as string, n: doc.n as Int32 }, exact))).to.equal(
      canonical(doc),
    );
  }
  const byKey = db.collection<KeyedDoc>(KEYED);
  for (const doc of keyed()) {
    expect(canonical(await byKey.findOne({ k: doc.k }, exact)), canonical(doc)).to.equal(canonical(doc));
  }
  const refused = (write: Promise<unknown>) =>
    write.then(
      () => null,
      (err: { code?: number }) => err.code,
    );
  expect(await refused(stored.insertOne({ email: 'user7@example.test' }))).to.equal(11000);
  expect(await refused(stored.insertOne({ org: 'org-1', n: new Int32(4) }))).to.equal(11000);
  // an index key is normalized: 1.0 is the key 1
  expect(await refused(byKey.insertOne({ _id: 'again', k: new Double(1) }))).to.equal(11000);
  expect(await refused(byKey.insertOne({ _id: 'again', k: { x: new Int32(1), y: 'z' } }))).to.equal(11000);
}
