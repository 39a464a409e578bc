import { expect } from 'chai';
import { AppError } from '@lib/errors';
import { compileGlob } from '@lib/patterns/glob';

const matches = (pattern: string, names: string[]) => names.filter(compileGlob(pattern));

function refusal(pattern: string): string {
  try {
    compileGlob(pattern);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(400);
    expect((err as AppError).code).to.equal('invalid_pattern');
    return (err as Error).message;
  }
  return expect.fail('accepted');
}

describe('glob patterns (filePattern)', () => {
  const names = [
    'lease-2024.pdf',
    'Lease-2023-final.PDF',
    'a.json',
    '.hidden.json',
    'data/x.csv',
    'abc',
    'notes.md',
  ];

  it('matches *, ?, classes, escapes and braces case-insensitively', () => {
    expect(matches('*.pdf', names)).to.deep.equal(['lease-2024.pdf', 'Lease-2023-final.PDF']);
    expect(matches('lease-202?-*', names)).to.deep.equal(['Lease-2023-final.PDF']);
    expect(matches('lease-202?.*', names)).to.deep.equal(['lease-2024.pdf']);
    expect(matches('*.JSON', names)).to.deep.equal(['a.json', '.hidden.json']);
    expect(matches('[a-b]*', names)).to.deep.equal(['a.json', 'abc']);
    expect(matches('[!a-z]*', names)).to.deep.equal(['.hidden.json']);
    expect(matches('*.{md,csv}', names)).to.deep.equal(['notes.md']);
    expect(matches('data/*.csv', names)).to.deep.equal(['data/x.csv']);
    expect(matches('a*b*c', names)).to.deep.equal(['abc']);
    expect(matches('\\*', ['*', 'a'])).to.deep.equal(['*']);
    expect(matches('report (1).*', ['report (1).docx', 'report 1.docx'])).to.deep.equal(['report (1).docx']);
  });

  it('refuses extended globs, long patterns, too many wildcards and nested or exploding braces (400)', () => {
    expect(refusal('+(+(*))#')).to.match(/extended globs/);
    expect(refusal('@(a|b)')).to.match(/extended globs/);
    expect(refusal('x'.repeat(101))).to.match(/PATTERN_MAX_CHARS/);
    expect(refusal('*a'.repeat(21))).to.match(/21 wildcards.*PATTERN_MAX_WILDCARDS/);
    expect(refusal('{a,{b,c}}')).to.match(/nest/);
    expect(refusal('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}')).to.match(/more than 32 alternatives/);
  });

  it('stays linear on the patterns that make a backtracking matcher explode', function () {
    // picomatch compiles `*a*a…*b` to a regular expression that backtracks O(n^stars) on a long name of `a`s;
    // this one matcher call per name does one left-to-right scan per piece. (Mocha's timeout is the bound: the
    // backtracking matcher takes longer than the age of the universe here.)
    this.timeout(20_000);
    const long = 'a'.repeat(255);
    const names = Array.from({ length: 10_000 }, (_, i) => `${long}${i}`);
    expect(matches('*a*a*a*a*a*a*a*a*a*b', names)).to.deep.equal([]);
    expect(matches('*?????????????????b*', names)).to.deep.equal([]);
    expect(matches('*a*a*a*a*a*a*a*a*a*9999', names)).to.deep.equal([`${long}9999`]);
  });
});
