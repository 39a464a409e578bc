import { expect } from 'chai';
import type { SearchHit } from '@lib/knowledge-bases/kb-search.service';
import {
  admin,
  indexed,
  LOCAL,
  member,
  OPENAI,
  outcome,
  searchIn,
  worldOf,
  type Kb,
} from './kb-search-world';

/*
 * GET {org}/knowledgebases/search (interface spec): "semantic search over every knowledge base the caller can
 * access (own organization plus public), ranked globally; … kbIds (comma-separated ids, each accessible), kbOrgs
 * (… one per kbIds entry …)". docs/knowledge-bases.md: filePattern is a case-insensitive glob on file names, and
 * "only files READY at their current generation are returned".
 */

const kbs: Kb[] = [
  { organizationId: 'org_1', knowledgeBaseId: 'kb_handbook', type: 'ORGANIZATION' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_ann', type: 'PERSONAL', creatorUserId: 'usr_ann' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_bob', type: 'PERSONAL', creatorUserId: 'usr_bob' },
  // The agent Desk's personal knowledge base, first asked for by Bob, who may no longer use Desk.
  {
    organizationId: 'org_1',
    knowledgeBaseId: 'kb_desk',
    type: 'PERSONAL',
    creatorUserId: 'usr_bob',
    agentId: 'agt_desk',
  },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_gone', type: 'ORGANIZATION', deletedAt: new Date(0) },
  // Embedded with a model this process no longer has.
  {
    organizationId: 'org_1',
    knowledgeBaseId: 'kb_retired',
    type: 'ORGANIZATION',
    embeddingModel: 'local:retired',
  },
  {
    organizationId: 'org_2',
    knowledgeBaseId: 'kb_public',
    type: 'ORGANIZATION',
    isPublic: true,
    embeddingModel: OPENAI,
  },
  { organizationId: 'org_2', knowledgeBaseId: 'kb_private', type: 'ORGANIZATION' },
  { organizationId: 'org_2', knowledgeBaseId: 'kb_carol', type: 'PERSONAL', creatorUserId: 'usr_carol' },
];
const items = [
  indexed('org_1', 'kb_handbook', 'handbook', 0.6),
  indexed('org_1', 'kb_ann', 'ann', 0.9),
  indexed('org_1', 'kb_bob', 'bob', 0.85),
  indexed('org_1', 'kb_desk', 'desk', 0.7),
  indexed('org_1', 'kb_gone', 'gone', 0.99),
  indexed('org_1', 'kb_retired', 'retired', 0.95, 'local:retired'),
  indexed('org_2', 'kb_public', 'public', 0.8, OPENAI),
  indexed('org_2', 'kb_private', 'private', 0.97),
  indexed('org_2', 'kb_carol', 'carol', 0.96),
];
const world = worldOf(kbs, items, { agentsOf: { usr_ann: ['agt_desk'], usr_bob: [] } });
const ann = member('usr_ann');
const bob = member('usr_bob');
const page = { q: 'rent', limit: 5, offset: 0 };

const ids = (hits: SearchHit[]) => hits.map((h) => h.vectorId);
/** `n` passages of the handbook, in files being reindexed (`reindexing0`…), ranked above any READY one. */
const reindexing = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const item = indexed('org_1', 'kb_handbook', `reindexing${i}`, 0.9 - i * 1e-5);
    return { ...item, file: { ...item.file, status: 'PROCESSING' } };
  });
/** `n` passages of READY handbook files (`ready0`…), best first. */
const ready = (n: number) =>
  Array.from({ length: n }, (_, i) => indexed('org_1', 'kb_handbook', `ready${i}`, 0.5 - i * 0.01));
const kbIdsError = (id: string) => `400 kbIds: ${id} does not exist or is not visible to you`;

describe('knowledge base search (unit, stores in memory)', () => {
  it("searches a member's readable knowledge bases and other organizations' public ones, ranked together", async () => {
    const { service } = searchIn(world);
    const forAnn = await service.searchAll(ann, page);
    expect(ids(forAnn.items)).to.deep.equal(['vec_ann', 'vec_public', 'vec_desk', 'vec_handbook']);
    expect(forAnn).to.include({ totalRows: 4, offset: 0 });
    // Bob: his own personal knowledge base, not Ann's, nor that of an agent he may no longer use.
    const forBob = await service.searchAll(bob, page);
    expect(ids(forBob.items)).to.deep.equal(['vec_bob', 'vec_public', 'vec_handbook']);
    const forAdmin = await service.searchAll(admin('usr_root'), page);
    expect(ids(forAdmin.items)).to.deep.equal([
      'vec_ann',
      'vec_bob',
      'vec_public',
      'vec_desk',
      'vec_handbook',
    ]);
  });

  it('searches the named knowledge bases, each readable by the caller, else 400 naming it', async () => {
    const { service } = searchIn(world);
    const named = await service.searchAll(ann, {
      ...page,
      kbIds: 'kb_handbook, kb_public',
      kbOrgs: 'org_1,org_2',
    });
    expect(ids(named.items)).to.deep.equal(['vec_public', 'vec_handbook']);
    const own = await service.searchAll(bob, { ...page, kbIds: 'kb_bob' });
    expect(ids(own.items)).to.deep.equal(['vec_bob']);
    // Another member's personal knowledge base, inside the organization: as if it did not exist.
    expect(await outcome(service.searchAll(bob, { ...page, kbIds: 'kb_ann' }))).to.equal(
      kbIdsError('kb_ann'),
    );
    expect(await outcome(service.searchAll(ann, { ...page, kbIds: 'kb_handbook,kb_bob' }))).to.equal(
      kbIdsError('kb_bob'),
    );
    expect(await outcome(service.searchAll(bob, { ...page, kbIds: 'kb_desk' }))).to.equal(
      kbIdsError('kb_desk'),
    );
    // Another organization's: only a public one.
    for (const id of ['kb_private', 'kb_carol'])
      expect(await outcome(service.searchAll(ann, { ...page, kbIds: id, kbOrgs: 'org_2' }))).to.equal(
        kbIdsError(id),
      );
  });

  it('refuses more than 50 kbIds, empty entries, and a page reaching past the 1000th hit', async () => {
    const { service } = searchIn(world);
    const many = Array.from({ length: 51 }, (_, i) => `kb_${i}`).join(',');
    expect(await outcome(service.searchAll(ann, { ...page, kbIds: many }))).to.equal(
      '400 kbIds names at most 50 knowledge bases',
    );
    expect(await outcome(service.searchAll(ann, { ...page, kbIds: 'kb_handbook,,kb_ann' }))).to.equal(
      '400 kbIds and kbOrgs must not have empty entries',
    );
    expect(await outcome(service.searchAll(ann, { ...page, kbIds: 'kb_handbook', kbOrgs: ' ' }))).to.equal(
      '400 kbIds and kbOrgs must not have empty entries',
    );
    expect(await outcome(service.searchAll(ann, { ...page, offset: 996 }))).to.equal(
      '400 cursor + limit may reach at most 1000 hits',
    );
    expect(await outcome(service.searchOne(ann, 'kb_handbook', { ...page, offset: 996 }))).to.equal(
      '400 cursor + limit may reach at most 1000 hits',
    );
    const last = await service.searchAll(ann, { ...page, offset: 995 });
    expect(last.items).to.deep.equal([]);
  });

  it("filePattern: only files whose name matches, ignoring case; a model with no matching file isn't queried", async () => {
    const files = [
      indexed('org_1', 'kb_handbook', 'Lease-2024.PDF', 0.5),
      indexed('org_1', 'kb_handbook', 'notes', 0.99),
      indexed('org_1', 'kb_ann', 'lease-ann.pdf', 0.4),
      indexed('org_2', 'kb_public', 'tariffs.pdf', 0.9, OPENAI),
    ];
    const { service, asked } = searchIn(worldOf(kbs, files, { agentsOf: { usr_ann: [] } }));
    const found = await service.searchAll(ann, { ...page, filePattern: 'LEASE*.pdf' });
    expect(ids(found.items)).to.deep.equal(['vec_Lease-2024.PDF', 'vec_lease-ann.pdf']);
    expect(asked.queries.map((q) => [q.organizationId, q.query.fileIds])).to.deep.equal([
      ['org_1', ['fil_Lease-2024.PDF', 'fil_lease-ann.pdf']],
    ]);
    const none = await service.searchOne(ann, 'kb_handbook', { ...page, filePattern: '*.docx' });
    expect(none.items).to.deep.equal([]);
    expect(asked.queries).to.have.length(1);
  });

  it('filePattern over many files lets other work in after every 500 names, not before the first', async () => {
    let read = 0;
    let readWhenOthersRan = -1;
    const names = Array.from({ length: 1001 }, (_, i) => ({
      _id: `fil_${i}`,
      get fileNameKey() {
        read++;
        return `page-${i}.txt`;
      },
    }));
    const { service, asked } = searchIn({
      kbs,
      readyNames: () => {
        setImmediate(() => (readWhenOthersRan = read));
        return Promise.resolve(names);
      },
    });
    const found = await service.searchOne(ann, 'kb_handbook', { ...page, filePattern: 'page-*.txt' });
    expect(found.items).to.deep.equal([]);
    expect(read).to.equal(1001);
    expect(readWhenOthersRan).to.equal(500);
    expect(asked.queries[0]!.query.fileIds).to.have.length(1001);
  });

  it('returns only files READY at their current generation, with their chunk text, pages and link', async () => {
    const file = (name: string, fields: object) => ({
      ...indexed('org_1', 'kb_handbook', name, 0),
      file: { ...indexed('org_1', 'kb_handbook', name, 0).file, ...fields },
    });
    const stale = [
      file('reindexing', { status: 'PROCESSING', generation: 2 }),
      file('old-generation', { generation: 2 }),
      file('deleted', { deletedAt: new Date(0) }),
      file('failed', { status: 'ERROR' }),
    ];
    const fresh = indexed('org_1', 'kb_handbook', 'lease', 0.5);
    const plain = indexed('org_1', 'kb_handbook', 'notes', 0.25);
    const w = worldOf(kbs, [...stale, fresh, plain]);
    w.files!.find((f) => f._id === 'fil_lease')!.externalFileUrl = 'https://files.example.test/lease.pdf';
    Object.assign(
      w.chunks!.find((c) => c._id === 'chk_lease')!,
      { pages: '5-7' },
    );
    w.vectors!.forEach((v, i) => (v.score = 0.9 - i * 0.05));
    // A vector whose chunk is gone.
    w.vectors!.push({ ...w.vectors![4]!, id: 'vec_orphan', chunkId: 'chk_orphan', score: 0.95 });
    const { service } = searchIn(w);
    const found = await service.searchOne(ann, 'kb_handbook', { ...page, limit: 10 });
    expect(found.items).to.deep.equal([
      {
        vectorId: 'vec_lease',
        fileId: 'fil_lease',
        fileName: 'lease.txt',
        key: 'kb/org_1/kb_handbook/fil_lease',
        pages: '5-7',
        text: 'text of lease',
        externalFileUrl: 'https://files.example.test/lease.pdf',
        knowledgeBaseId: 'kb_handbook',
        organizationId: 'org_1',
        score: 0.7,
      },
      {
        vectorId: 'vec_notes',
        fileId: 'fil_notes',
        fileName: 'notes.txt',
        key: 'kb/org_1/kb_handbook/fil_notes',
        pages: null,
        text: 'text of notes',
        externalFileUrl: null,
        knowledgeBaseId: 'kb_handbook',
        organizationId: 'org_1',
        score: 0.65,
      },
    ]);
  });

  it('fills the page past vectors of files that are not READY (a reindex under way, a failed one)', async () => {
    // Twelve passages of a file being reindexed and four of one that failed rank above the READY ones.
    const stale = (name: string, fields: object, score: number) => {
      const item = indexed('org_1', 'kb_handbook', name, score);
      return { ...item, file: { ...item.file, ...fields } };
    };
    const items = [
      ...Array.from({ length: 12 }, (_, i) =>
        stale(`reindexing${i}`, { status: 'PROCESSING' }, 0.9 - i * 0.001),
      ),
      ...Array.from({ length: 4 }, (_, i) => stale(`failed${i}`, { status: 'ERROR' }, 0.8 - i * 0.001)),
      ...Array.from({ length: 7 }, (_, i) => indexed('org_1', 'kb_handbook', `ready${i}`, 0.5 - i * 0.01)),
    ];
    const { service, asked } = searchIn(worldOf(kbs, items));
    const first = await service.searchOne(ann, 'kb_handbook', { ...page, limit: 5 });
    expect(ids(first.items)).to.deep.equal([
      'vec_ready0',
      'vec_ready1',
      'vec_ready2',
      'vec_ready3',
      'vec_ready4',
    ]);
    // asked for one past the page, then twice as many until the page was full
    expect(asked.queries.map((q) => q.query.topK)).to.deep.equal([6, 12, 24]);
    const second = await service.searchOne(ann, 'kb_handbook', { ...page, limit: 5, offset: 5 });
    expect(ids(second.items)).to.deep.equal(['vec_ready5', 'vec_ready6']);
  });

  it('stops asking once the page is full, even exactly, and embeds the question once for every round', async () => {
    const { service, asked } = searchIn(worldOf(kbs, [...reindexing(6), ...ready(20)]));
    const found = await service.searchOne(ann, 'kb_handbook', { ...page, limit: 5 });
    expect(ids(found.items)).to.deep.equal([
      'vec_ready0',
      'vec_ready1',
      'vec_ready2',
      'vec_ready3',
      'vec_ready4',
    ]);
    // 12 passages hold exactly the 6 READY ones a page of 5 and the one past it need: no third round
    expect(asked.queries.map((q) => q.query.topK)).to.deep.equal([6, 12]);
    expect(asked.embedded).to.deep.equal([{ model: LOCAL, texts: ['rent'] }]);
  });

  it("asks again while any one model's passages came back full, though another's did not", async () => {
    // Another organization's public knowledge base, of the other model: one passage, ranked last.
    const items = [...reindexing(6), ...ready(10), indexed('org_2', 'kb_public', 'public', 0.1, OPENAI)];
    const { service, asked } = searchIn(worldOf(kbs, items));
    const found = await service.searchAll(ann, page);
    expect(ids(found.items)).to.deep.equal([
      'vec_ready0',
      'vec_ready1',
      'vec_ready2',
      'vec_ready3',
      'vec_ready4',
    ]);
    expect(asked.queries.map((q) => [q.model, q.query.topK])).to.have.deep.members([
      [LOCAL, 6],
      [OPENAI, 6],
      [LOCAL, 12],
      [OPENAI, 12],
    ]);
    // each model embeds the question once, whatever the rounds
    expect(asked.embedded).to.have.deep.members([
      { model: LOCAL, texts: ['rent'] },
      { model: OPENAI, texts: ['rent'] },
    ]);
  });

  it('asks the vector store for at most 4,000 passages however many stale ones rank first', async () => {
    const items = [...reindexing(5000), indexed('org_1', 'kb_handbook', 'ready', 0.1)];
    const { service, asked } = searchIn(worldOf(kbs, items));
    const found = await service.searchOne(ann, 'kb_handbook', { ...page, limit: 5 });
    expect(found.items).to.deep.equal([]);
    expect(asked.queries.map((q) => q.query.topK)).to.deep.equal([
      6, 12, 24, 48, 96, 192, 384, 768, 1536, 3072, 4000,
    ]);
  });
});
