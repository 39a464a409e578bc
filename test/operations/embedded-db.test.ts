import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Int32, MongoClient } from 'mongodb';
import { expectSamples, insertSamples, KEYED, type KeyedDoc } from '@test/helpers/db-format-samples';
import { ROOT } from '@test/helpers/paths';

// The local stack's embedded database (stack/mongo-java-server): what it acknowledges survives a SIGKILL, and its
// unique indexes agree with the data afterwards.

/**
 * A broken launcher must fail these tests, not hang the run: every operation gives up after this long, and every
 * client a test opened is closed after it, passed or not (mocha runs without `exit`, so one client left open,
 * retrying its server, would keep the whole run alive).
 */
const OPERATION_DEADLINE_MS = 20_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

class EmbeddedDb {
  private process?: ChildProcess;
  private readonly clients = new Set<MongoClient>();
  constructor(
    private readonly port: number,
    private readonly file: string,
  ) {}

  start(): Promise<void> {
    const jar = process.env.MONGO_H2_JAR;
    if (!jar) throw new Error('MONGO_H2_JAR is not set: run the suite with `npm test`');
    const child = spawn(
      'java',
      ['-XX:+UseSerialGC', '-jar', jar, '--listen', `127.0.0.1:${this.port}`, '--file', this.file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.process = child;
    return new Promise((resolve, reject) => {
      let said = '';
      const hear = (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('listening on')) resolve();
      };
      child.stdout.on('data', hear);
      child.stderr.on('data', hear);
      child.once('exit', (code) => reject(new Error(`mongo-java-server exited (${code}): ${said}`)));
    });
  }

  /** Stops it and resolves with its exit code (or signal). */
  stop(signal: NodeJS.Signals): Promise<number | string> {
    const child = this.process!;
    if (child.exitCode !== null || child.signalCode !== null)
      return Promise.resolve(child.exitCode ?? child.signalCode!);
    return new Promise((resolve) => {
      child.once('exit', (code, sig) => resolve(code ?? sig ?? -1));
      child.kill(signal);
    });
  }

  async connect() {
    const client = new MongoClient(`mongodb://127.0.0.1:${this.port}/crash`, {
      serverSelectionTimeoutMS: 10_000,
      // a reply that does not come within the deadline fails the operation (not timeoutMS: that would replace the
      // maxTimeMS a test sends)
      socketTimeoutMS: OPERATION_DEADLINE_MS,
    });
    this.clients.add(client);
    return client.connect();
  }

  /** Closes every client still open: a test that failed or timed out leaves its own. */
  async closeClients() {
    const open = [...this.clients];
    this.clients.clear();
    await Promise.all(open.map((client) => client.close(true).catch(() => undefined)));
  }
}

describe('the embedded database (mongo-java-server + H2)', () => {
  let dir: string;
  let db: EmbeddedDb;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mongo-h2-'));
    db = new EmbeddedDb(await freePort(), join(dir, 'data.mv'));
    await db.start();
  });
  afterEach(() => db.closeClients());
  after(async () => {
    await db.closeClients();
    await db.stop('SIGKILL').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged write through a SIGKILL, with unique indexes that agree with the data', async () => {
    let client = await db.connect();
    await client.db().collection('w').createIndex({ u: 1 }, { unique: true });
    const acked: string[] = [];
    let killed: Promise<number | string> | undefined;
    // Eight writers insert until the database is killed, which happens once 600 inserts are acknowledged.
    const writer = async (w: number) => {
      for (let i = 0; ; i++) {
        const id = `${w}-${i}`;
        try {
          await client
            .db()
            .collection<{ _id: string; u: string }>('w')
            .insertOne({ _id: id, u: `u-${id}` });
        } catch {
          return;
        }
        acked.push(id);
        if (acked.length === 600) killed = db.stop('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    expect(await killed).to.equal('SIGKILL');
    await client.close(true);

    await db.start();
    client = await db.connect();
    const col = client.db().collection<{ _id: string; u: string }>('w');
    const stored = new Set((await col.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
    expect(acked.length).to.be.at.least(600);
    expect(acked.filter((id) => !stored.has(id))).to.deep.equal([]);
    // Each stored document is found through the unique index, and the index still refuses its key.
    for (const id of acked.slice(0, 200)) {
      expect(await col.findOne({ u: `u-${id}` }), id).to.include({ _id: id });
    }
    const duplicate = await col.insertOne({ _id: 'again', u: `u-${acked[0]}` }).then(
      () => null,
      (err: { code?: number }) => err.code,
    );
    expect(duplicate).to.equal(11000);
    await client.close();
  });

  /** A database of its own on `file` for `test`, stopped and removed after it. */
  const withOwnDb = async (file: string | undefined, test: (own: EmbeddedDb) => Promise<void>) => {
    const ownDir = mkdtempSync(join(tmpdir(), 'mongo-h2-'));
    if (file) copyFileSync(file, join(ownDir, 'data.mv'));
    const own = new EmbeddedDb(await freePort(), join(ownDir, 'data.mv'));
    try {
      await own.start();
      await test(own);
    } finally {
      await own.closeClients();
      await own.stop('SIGKILL').catch(() => undefined);
      rmSync(ownDir, { recursive: true, force: true });
    }
  };

  it('stores every type exactly through a restart, with unique indexes on every type of key', async () => {
    await withOwnDb(undefined, async (own) => {
      await insertSamples((await own.connect()).db('format'));
      await own.closeClients();
      // killed: what is read next comes from the file, not from the pages in memory
      expect(await own.stop('SIGKILL')).to.equal('SIGKILL');
      await own.start();
      await expectSamples((await own.connect()).db('format'));
    });
  });

  it('reads a file written before the compact format, and keeps finding and refusing its index keys', async () => {
    const fixture = join(ROOT, 'test', 'fixtures', 'embedded-db', 'pre-compact.mv');
    await withOwnDb(fixture, async (own) => {
      let db = (await own.connect()).db('format');
      await expectSamples(db);
      // New documents, in the compact format, next to the old ones in the same indexes.
      await db.collection<KeyedDoc>(KEYED).insertOne({ _id: 'later', k: 'later' });
      await db
        .collection('samples')
        .insertOne({ email: 'later@example.test', org: 'later', n: new Int32(1) });
      await own.closeClients();
      // a clean stop rewrites the whole file (the full compaction)
      expect(await own.stop('SIGTERM')).to.equal(0);
      await own.start();
      db = (await own.connect()).db('format');
      expect(await db.collection(KEYED).findOne({ k: 'later' })).to.include({ _id: 'later' });
      expect(await db.collection('samples').findOne({ email: 'later@example.test' })).to.include({
        org: 'later',
      });
      await db.collection<KeyedDoc>(KEYED).deleteOne({ _id: 'later' });
      await db.collection('samples').deleteOne({ email: 'later@example.test' });
      await expectSamples(db);
    });
  });

  it('applies concurrent read-modify-write updates of one document atomically', async () => {
    const client = await db.connect();
    const col = client.db().collection<{ _id: string; n?: number; free?: boolean; by?: number }>('rmw');
    await col.insertOne({ _id: 'counter', n: 0 });
    await Promise.all(
      Array.from({ length: 50 }, () => col.updateOne({ _id: 'counter' }, { $inc: { n: 1 } })),
    );
    expect((await col.findOne({ _id: 'counter' }))?.n).to.equal(50);
    // Each caller sees the state its own update produced, never a later one (no reply shares a stored object).
    const seen = await Promise.all(
      Array.from({ length: 50 }, () =>
        col.findOneAndUpdate({ _id: 'counter' }, { $inc: { n: 1 } }, { returnDocument: 'after' }),
      ),
    );
    expect(seen.map((d) => d?.n).sort((x, y) => x! - y!)).to.deep.equal(
      Array.from({ length: 50 }, (_, i) => 51 + i),
    );
    await col.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `job-${i}`, free: true })));
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, by) =>
        col.findOneAndUpdate({ free: true }, { $set: { free: false, by } }, { returnDocument: 'after' }),
      ),
    );
    const won = claims.filter((c) => c !== null).map((c) => c._id);
    expect(won).to.have.length(10);
    expect(new Set(won).size).to.equal(10);
    await client.close();
  });

  it('answers a read past its maxTimeMS with MaxTimeMSExpired and keeps working', async () => {
    let client = await db.connect();
    const docs = Array.from({ length: 30_000 }, (_, i) => ({ _id: i, k: i % 7, pad: 'x'.repeat(200) }));
    for (let i = 0; i < docs.length; i += 5_000)
      await client
        .db()
        .collection<{ _id: number; k: number; pad: string }>('slow')
        .insertMany(docs.slice(i, i + 5_000));
    await client.close();
    // A restart leaves the pages on disk only: the abandoned scan goes on reading the file after its deadline.
    expect(await db.stop('SIGTERM')).to.equal(0);
    await db.start();
    client = await db.connect();
    const col = client.db().collection<{ _id: number; k: number }>('slow');
    const expired = await col
      .find({ k: 3 }, { maxTimeMS: 1 })
      .toArray()
      .then(
        () => null,
        (err: { code?: number }) => err.code,
      );
    expect(expired).to.equal(50);
    // queued behind the abandoned scan (one scan of a collection at a time), then a write
    expect(await col.countDocuments({ k: 3 })).to.equal(4_286);
    await col.insertOne({ _id: -1, k: 3 });
    expect(await col.countDocuments({ k: 3 })).to.equal(4_286 + 1);
  });

  it('commits and compacts on SIGTERM, exiting 0 with everything kept', async () => {
    let client = await db.connect();
    await client
      .db()
      .collection('clean')
      .insertMany(Array.from({ length: 100 }, (_, i) => ({ i })));
    await client.close();
    expect(await db.stop('SIGTERM')).to.equal(0);
    await db.start();
    client = await db.connect();
    expect(await client.db().collection('clean').countDocuments()).to.equal(100);
    await client.close();
  });
});
