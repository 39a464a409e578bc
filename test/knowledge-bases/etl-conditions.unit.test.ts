import { expect } from 'chai';
import fc from 'fast-check';
import { checkConditions, conditionsHold } from '@lib/knowledge-bases/etl-conditions';
import type { EtlCondition } from '@lib/knowledge-bases/etl-rule.schema';

/*
 * docs/knowledge-bases.md, ETL rules: "Conditions on fileName, extension, contentType, externalFileUrl,
 * customInstructions combine left to right, case-insensitively; no conditions match every file." Each condition but
 * the last names the mergeOperator that joins it to the next; IS_EMPTY and IS_NOT_EMPTY take no value, the others
 * need one.
 */

type File = {
  fileName: string;
  contentType: string;
  externalFileUrl?: string | null;
  customInstructions?: string;
};
const lease: File = {
  fileName: 'Lease-2024.PDF',
  contentType: 'application/pdf',
  externalFileUrl: null,
  customInstructions: '  ',
};
const when = (c: Partial<EtlCondition> & Pick<EtlCondition, 'field' | 'comparison'>) => c;

describe('ETL rule conditions', () => {
  it('reads each field, the extension as what follows the last dot, case-insensitively', () => {
    const holds = (c: Parameters<typeof when>[0], file: File = lease) => conditionsHold(file, [when(c)]);
    expect(holds({ field: 'extension', comparison: 'EQUALS', value: 'pdf' })).to.equal(true);
    expect(holds({ field: 'extension', comparison: 'EQUALS', value: 'PDF.' })).to.equal(false);
    expect(holds({ field: 'extension', comparison: 'IS_EMPTY' }, { ...lease, fileName: 'README' })).to.equal(
      true,
    );
    expect(
      holds({ field: 'extension', comparison: 'EQUALS', value: 'gz' }, { ...lease, fileName: 'a.tar.gz' }),
    ).to.equal(true);
    expect(holds({ field: 'fileName', comparison: 'STARTS_WITH', value: 'lease-' })).to.equal(true);
    expect(holds({ field: 'fileName', comparison: 'STARTS_WITH', value: '2024' })).to.equal(false);
    expect(holds({ field: 'fileName', comparison: 'ENDS_WITH', value: '2024.pdf' })).to.equal(true);
    expect(holds({ field: 'fileName', comparison: 'ENDS_WITH', value: 'lease' })).to.equal(false);
    expect(holds({ field: 'fileName', comparison: 'CONTAINS', value: 'SE-20' })).to.equal(true);
    expect(holds({ field: 'fileName', comparison: 'CONTAINS', value: 'lease2024' })).to.equal(false);
    expect(holds({ field: 'contentType', comparison: 'EQUALS', value: 'Application/PDF' })).to.equal(true);
    expect(holds({ field: 'contentType', comparison: 'EQUALS', value: 'application' })).to.equal(false);
    // a missing field is empty; white space alone is empty too
    expect(holds({ field: 'externalFileUrl', comparison: 'IS_EMPTY' })).to.equal(true);
    expect(holds({ field: 'externalFileUrl', comparison: 'IS_NOT_EMPTY' })).to.equal(false);
    expect(holds({ field: 'customInstructions', comparison: 'IS_EMPTY' })).to.equal(true);
    expect(
      holds(
        { field: 'customInstructions', comparison: 'IS_NOT_EMPTY' },
        { ...lease, customInstructions: ' x ' },
      ),
    ).to.equal(true);
    expect(
      holds({ field: 'customInstructions', comparison: 'IS_EMPTY' }, { ...lease, customInstructions: ' x ' }),
    ).to.equal(false);
  });

  it('matches every file with no conditions, and combines them left to right', () => {
    expect(conditionsHold(lease, [])).to.equal(true);
    const yes = when({ field: 'extension', comparison: 'EQUALS', value: 'pdf' });
    const no = when({ field: 'extension', comparison: 'EQUALS', value: 'docx' });
    const and = (c: EtlCondition) => ({ ...c, mergeOperator: 'AND' }) as EtlCondition;
    const or = (c: EtlCondition) => ({ ...c, mergeOperator: 'OR' }) as EtlCondition;
    // (no OR yes) AND no: false, where "no OR (yes AND no)" would be false as well; (yes OR no) AND no tells them apart
    expect(conditionsHold(lease, [or(yes), and(no), no])).to.equal(false);
    // (no AND yes) OR yes: true; no AND (yes OR yes) would be false
    expect(conditionsHold(lease, [and(no), or(yes), yes])).to.equal(true);
    expect(conditionsHold(lease, [and(yes), yes])).to.equal(true);
    expect(conditionsHold(lease, [and(yes), no])).to.equal(false);
    expect(conditionsHold(lease, [or(no), no])).to.equal(false);
  });

  it('agrees with a left-to-right reading of any conditions over any file (property)', () => {
    const fields = ['fileName', 'extension', 'contentType', 'externalFileUrl', 'customInstructions'] as const;
    const comparisons = [
      'EQUALS',
      'CONTAINS',
      'STARTS_WITH',
      'ENDS_WITH',
      'IS_EMPTY',
      'IS_NOT_EMPTY',
    ] as const;
    const text = fc.string({ unit: fc.constantFrom('a', 'B', '.', ' ', 'x'), maxLength: 5 });
    const condition = fc.record({
      field: fc.constantFrom(...fields),
      comparison: fc.constantFrom(...comparisons),
      value: text,
      mergeOperator: fc.constantFrom('AND', 'OR'),
    });
    const file = fc.record({
      fileName: text,
      contentType: text,
      externalFileUrl: text,
      customInstructions: text,
    });
    // The reference: each field read as written in the docs, compared by hand, folded from the left.
    const read = (f: Record<string, string>, field: string) => {
      if (field !== 'extension') return f[field]!.toLowerCase();
      const name = f.fileName!;
      return name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
    };
    const one = (f: Record<string, string>, c: { field: string; comparison: string; value: string }) => {
      const a = read(f, c.field);
      const v = c.value.toLowerCase();
      if (c.comparison === 'IS_EMPTY') return a.trim().length === 0;
      if (c.comparison === 'IS_NOT_EMPTY') return a.trim().length > 0;
      if (c.comparison === 'EQUALS') return a === v;
      if (c.comparison === 'CONTAINS') return a.indexOf(v) >= 0;
      if (c.comparison === 'STARTS_WITH') return a.slice(0, v.length) === v;
      return v.length === 0 || a.slice(-v.length) === v;
    };
    fc.assert(
      fc.property(file, fc.array(condition, { maxLength: 5 }), (f, cs) => {
        let expected = true;
        cs.forEach((c, i) => {
          expected =
            i === 0
              ? one(f, c)
              : cs[i - 1]!.mergeOperator === 'OR'
                ? expected || one(f, c)
                : expected && one(f, c);
        });
        return conditionsHold(f, cs) === expected;
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a value where none belongs or none where one does, and a mergeOperator out of place', () => {
    const refusal = (conditions: Array<Partial<EtlCondition>>) => {
      try {
        checkConditions(conditions as EtlCondition[]);
        return 'accepted';
      } catch (err) {
        return `${(err as { status: number }).status} ${(err as Error).message}`;
      }
    };
    expect(refusal([{ field: 'fileName', comparison: 'IS_EMPTY', value: '' }])).to.equal(
      '400 conditions[0]: IS_EMPTY takes no value',
    );
    expect(refusal([{ field: 'fileName', comparison: 'IS_NOT_EMPTY', value: 'x' }])).to.equal(
      '400 conditions[0]: IS_NOT_EMPTY takes no value',
    );
    expect(refusal([{ field: 'fileName', comparison: 'CONTAINS' }])).to.equal(
      '400 conditions[0]: CONTAINS needs a value',
    );
    // an empty value is a value
    expect(refusal([{ field: 'fileName', comparison: 'EQUALS', value: '' }])).to.equal('accepted');
    expect(
      refusal([
        { field: 'fileName', comparison: 'IS_EMPTY' },
        { field: 'fileName', comparison: 'IS_EMPTY' },
      ]),
    ).to.equal('400 conditions[0]: mergeOperator (AND or OR) joins it to the next condition and is required');
    expect(
      refusal([
        { field: 'fileName', comparison: 'IS_EMPTY', mergeOperator: 'OR' },
        { field: 'fileName', comparison: 'IS_EMPTY', mergeOperator: 'AND' },
      ]),
    ).to.equal('400 conditions[1]: the last condition takes no mergeOperator');
    expect(
      refusal([
        { field: 'fileName', comparison: 'IS_EMPTY', mergeOperator: 'OR' },
        { field: 'contentType', comparison: 'ENDS_WITH', value: 'pdf' },
      ]),
    ).to.equal('accepted');
    expect(refusal([])).to.equal('accepted');
  });
});
