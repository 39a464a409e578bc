import { expect } from 'chai';
import type { SearchHit } from '@lib/knowledge-bases/kb-search.service';
import { hitsForModel, kbSearchModelTool, searchArgs } from '@lib/knowledge-bases/search-tool';

const hit = (fields: Partial<SearchHit>): SearchHit => ({
  vectorId: 'vec_1',
  fileId: 'fil_1',
  fileName: 'lease.pdf',
  key: 'kb/org_1/kb_1/fil_1',
  pages: null,
  text: 'The rent is due on the first day of the month.',
  externalFileUrl: null,
  knowledgeBaseId: 'kb_1',
  organizationId: 'org_1',
  score: 0.5,
  ...fields,
});

describe('the search_knowledge_bases tool (unit)', () => {
  it('is offered with the titles of the attached knowledge bases, a required query and a limit of 1 to 10', () => {
    expect(kbSearchModelTool(['Leases', 'Staff handbook'])).to.deep.equal({
      name: 'search_knowledge_bases',
      description:
        'Search the knowledge bases "Leases", "Staff handbook" for passages relevant to a question. ' +
        'Answer from the passages and cite each one you use as [fileName, pages].',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What to look for, in plain words' },
          limit: { type: 'integer', minimum: 1, maximum: 10, description: 'How many passages (default 5)' },
        },
        required: ['query'],
      },
      executor: 'server',
    });
  });

  it('gives the model each passage with a citation to copy ([lease.pdf, p. 5-7]), its score and its link', () => {
    expect(
      hitsForModel([
        hit({ pages: '5-7', score: 0.87654, externalFileUrl: 'https://files.example.test/lease.pdf' }),
        hit({ fileName: 'notes.txt', text: 'Keys are at the desk.', score: 0.1 }),
      ]),
    ).to.deep.equal([
      {
        citation: '[lease.pdf, p. 5-7]',
        text: 'The rent is due on the first day of the month.',
        score: 0.877,
        url: 'https://files.example.test/lease.pdf',
      },
      { citation: '[notes.txt]', text: 'Keys are at the desk.', score: 0.1 },
    ]);
  });

  it('takes a non-empty query and a limit of 1 to 10 (5 when absent or not an integer)', () => {
    expect(searchArgs({ query: 'rent' })).to.deep.equal({ query: 'rent', limit: 5 });
    expect(searchArgs({ query: 'rent', limit: 3 })).to.deep.equal({ query: 'rent', limit: 3 });
    expect(searchArgs({ query: 'rent', limit: 50 })).to.deep.equal({ query: 'rent', limit: 10 });
    expect(searchArgs({ query: 'rent', limit: 0 })).to.deep.equal({ query: 'rent', limit: 1 });
    expect(searchArgs({ query: 'rent', limit: -4 })).to.deep.equal({ query: 'rent', limit: 1 });
    expect(searchArgs({ query: 'rent', limit: 2.5 })).to.deep.equal({ query: 'rent', limit: 5 });
    expect(searchArgs({ query: 'rent', limit: '3' })).to.deep.equal({ query: 'rent', limit: 5 });
  });

  it('refuses a missing, blank or non-text query', () => {
    expect(searchArgs({})).to.equal(null);
    expect(searchArgs({ query: '' })).to.equal(null);
    expect(searchArgs({ query: '  \n ' })).to.equal(null);
    expect(searchArgs({ query: 42 })).to.equal(null);
    expect(searchArgs({ query: ['rent'] })).to.equal(null);
  });
});
