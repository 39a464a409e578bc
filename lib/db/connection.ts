import mongoose, {
  type Connection,
  type InferSchemaType,
  type Model,
  type Schema,
  type Types,
} from 'mongoose';

/** A collection and the schema of its documents, declared once in the feature's `*.schema.ts`. */
export interface ModelDef<S extends Schema = Schema> {
  name: string;
  collection: string;
  schema: S;
}

/** A stored document as `.lean()` reads it: the schema's type, with arrays of subdocuments as plain arrays. */
export type DocOf<S extends Schema> = {
  [K in keyof InferSchemaType<S>]: InferSchemaType<S>[K] extends Types.DocumentArray<infer E>
    ? E[]
    : InferSchemaType<S>[K];
};

// Mongoose records a stack trace at every query execution (to explain a query run twice); with source maps on,
// as the service runs, that cost a few percent of the API's CPU on simple reads. The queries here run once.
mongoose.set('skipOriginalStackTraces', true);

type DriverCollection = mongoose.mongo.Collection<mongoose.mongo.Document & { _id: string }>;
const driverCollections = new WeakMap<Model<unknown>, DriverCollection>();

/**
 * A document by its string `_id`, as `findById(id).lean()` returns it, read with the driver. Mongoose's query
 * building and casting were a third of the CPU of a primary-key read, and these reads run several times per
 * request (credentials, membership, the resource); a lean read by a string key needs neither (no schema here
 * hides fields or applies read hooks). Anything but a string reads nothing.
 */
export function readById<T>(model: Model<T>, id: unknown): Promise<T | null> {
  if (typeof id !== 'string') return Promise.resolve(null);
  return driverCollection(model).findOne({ _id: id }) as Promise<T | null>;
}

/**
 * A model's collection as the driver sees it: the driver's own collection, not mongoose's wrapper of it (which
 * adds an id, an argument copy and a promise per call). For primary-key reads (readById) and the few writes that
 * run on every chain step (issue 12: mongoose's casting, hooks and timestamps were most of a step's CPU in the
 * service beyond the bare activity). A write through it gets nothing from the schema: the caller passes every
 * field in its stored type, sets the timestamps itself, and filters on organizationId as any tenant write does.
 */
export function driverCollection<T>(model: Model<T>): DriverCollection {
  let collection = driverCollections.get(model as Model<unknown>);
  if (!collection) {
    const { db } = model.db;
    if (!db) throw new Error('database connection is not open');
    collection = db.collection<mongoose.mongo.Document & { _id: string }>(model.collection.collectionName);
    driverCollections.set(model as Model<unknown>, collection);
  }
  return collection;
}

export function defineModel<S extends Schema>(name: string, collection: string, schema: S): ModelDef<S> {
  return { name, collection, schema };
}

/** How long an operation waits for an unreachable database before it fails (docs/operations.md "When a dependency is down"). */
const SERVER_SELECTION_TIMEOUT_MS = 5_000;

/**
 * The database connection. Only repositories (and `lib/db`) reach models through it: `npm run lint` refuses
 * model access anywhere else, so every query goes through a repository that scopes it to an organization.
 */
export class Database {
  private constructor(readonly connection: Connection) {}

  static async connect(uri: string, models: readonly ModelDef[], socketTimeoutMS: number): Promise<Database> {
    const connection = mongoose.createConnection(uri, {
      // While the database is unreachable an operation waits this long for it, then fails with a server
      // selection error (a 503 from the API, a retried activity in the worker); the driver reconnects by
      // itself when it is back. No mongoose buffering: it would add a second, longer wait of its own.
      serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
      // A database that stops answering on an open connection (frozen, partitioned): the operation fails after
      // this long without a byte (DB_SOCKET_TIMEOUT_MS), and so does connecting.
      socketTimeoutMS,
      connectTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
      bufferCommands: false,
      autoIndex: true,
    });
    await connection.asPromise();
    const db = new Database(connection);
    await Promise.all(models.map((def) => db.model(def).init()));
    return db;
  }

  model<S extends Schema>(def: ModelDef<S>): Model<DocOf<S>> {
    const existing = this.connection.models[def.name];
    return (existing ?? this.connection.model(def.name, def.schema, def.collection)) as unknown as Model<
      DocOf<S>
    >;
  }

  /** A raw driver collection, for documents no mongoose schema can describe (table rows). */
  collection<T extends mongoose.mongo.Document>(name: string): mongoose.mongo.Collection<T> {
    const { db } = this.connection;
    if (!db) throw new Error('database connection is not open');
    return db.collection<T>(name);
  }

  async ping(): Promise<void> {
    await this.connection.db!.admin().ping();
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
