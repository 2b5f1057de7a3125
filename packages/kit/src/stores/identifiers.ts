// Schema, database and table names reach DDL text, where bound parameters cannot go, so they are
// checked against a strict pattern instead. They come from module definitions, not from users.

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function assertIdentifier(kind: string, name: string): string {
  if (!IDENTIFIER.test(name) || name.length > 63) {
    throw new Error(`invalid ${kind} name ${JSON.stringify(name)}: expected ^[a-z_][a-z0-9_]*$ (at most 63 characters)`);
  }
  return name;
}
