import { expect } from 'chai';
import {
  SUPPORTED_EXTENSIONS,
  fileExtension,
  isPlausibleContentType,
  isSupportedFile,
} from '@lib/knowledge-bases/parsing';

describe('supported files and content types', () => {
  it('lists exactly the extensions of the spec', () => {
    expect([...SUPPORTED_EXTENSIONS].sort()).to.deep.equal(
      [
        '.pdf',
        '.png',
        '.jpg',
        '.jpeg',
        '.gif',
        '.webp',
        '.txt',
        '.md',
        '.csv',
        '.json',
        '.xml',
        '.html',
        '.docx',
      ].sort(),
    );
  });

  it('finds the extension case-insensitively, ignoring folders and leading dots', () => {
    expect(fileExtension('Report.Final.PDF')).to.equal('.pdf');
    expect(fileExtension('docs/v1.2/readme')).to.equal('');
    expect(fileExtension('C:\\scans\\page.JPeG')).to.equal('.jpeg');
    expect(fileExtension('.gitignore')).to.equal('');
    expect(fileExtension('notes.')).to.equal('.');
    expect(isSupportedFile('Q3.DOCX')).to.equal(true);
    expect(isSupportedFile('slides.pptx')).to.equal(false);
    expect(isSupportedFile('page.htm')).to.equal(false);
  });

  it('accepts the content types clients send for each format', () => {
    const ok: [string, string][] = [
      ['a.pdf', 'application/pdf'],
      ['a.jpg', 'image/jpeg'],
      ['a.jpeg', 'image/jpeg'],
      ['a.webp', 'image/webp'],
      ['a.csv', 'text/csv; charset=utf-8'],
      ['a.csv', 'application/vnd.ms-excel'],
      ['a.md', 'text/markdown'],
      ['a.md', 'text/plain'],
      ['a.json', 'application/json'],
      ['a.xml', 'text/xml'],
      ['a.html', 'TEXT/HTML'],
      ['a.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
      ['a.png', 'application/octet-stream'],
    ];
    for (const [name, type] of ok)
      expect(isPlausibleContentType(name, type), `${name} ${type}`).to.equal(true);
  });

  it('rejects content types that contradict the extension, and unsupported files', () => {
    const bad: [string, string][] = [
      ['a.pdf', 'image/png'],
      ['a.png', 'image/jpeg'],
      ['a.docx', 'application/msword'],
      ['a.json', 'text/html'],
      ['a.txt', 'application/pdf'],
      ['a.zip', 'application/zip'],
    ];
    for (const [name, type] of bad)
      expect(isPlausibleContentType(name, type), `${name} ${type}`).to.equal(false);
  });
});
