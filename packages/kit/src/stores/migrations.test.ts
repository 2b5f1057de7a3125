import { splitSqlStatements } from './migrations';

describe('splitSqlStatements', () => {
  it('splits at a semicolon ending a line and drops comment-only pieces', () => {
    const text = '-- header\nCREATE TABLE a (x int);\n\nINSERT INTO a VALUES (1); \n-- trailing comment\n';
    expect(splitSqlStatements(text)).toEqual(['-- header\nCREATE TABLE a (x int)', 'INSERT INTO a VALUES (1)']);
  });

  it('keeps semicolons inside a line and inside dollar-quoted bodies', () => {
    const text =
      "SELECT 'a;b' AS s, 1; SELECT 2;\n" +
      'CREATE FUNCTION f() RETURNS int AS $body$\nBEGIN\n  RETURN 1;\nEND;\n$body$ LANGUAGE plpgsql;\n' +
      'SELECT 3';
    expect(splitSqlStatements(text)).toEqual([
      "SELECT 'a;b' AS s, 1; SELECT 2",
      'CREATE FUNCTION f() RETURNS int AS $body$\nBEGIN\n  RETURN 1;\nEND;\n$body$ LANGUAGE plpgsql',
      'SELECT 3',
    ]);
  });
});
