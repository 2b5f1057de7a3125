// A small reader for docker/Dockerfile: enough to check COPY sources, stages and labels without a
// Docker engine. It joins continuation lines and drops comments; exec-form (JSON) COPY is read too.

export interface Instruction {
  keyword: string;
  /** The instruction's text after the keyword, continuation lines joined. */
  text: string;
  line: number;
  /** Stage this instruction belongs to (its `AS` name, or its index). */
  stage: string;
}

export interface Copy {
  stage: string;
  line: number;
  from: string | null;
  sources: string[];
  destination: string;
}

export function parseDockerfile(source: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = source.split('\n');
  let stage = 'global';
  let stages = 0;
  for (let i = 0; i < lines.length; i += 1) {
    const raw = lines[i]!;
    if (/^\s*(#|$)/.test(raw)) continue;
    const start = i;
    let text = raw;
    while (/\\\s*$/.test(text) && i + 1 < lines.length) {
      i += 1;
      const next = lines[i]!;
      if (/^\s*#/.test(next)) continue; // comments inside a continued instruction are dropped
      text = `${text.replace(/\\\s*$/, '')} ${next.trim()}`;
    }
    const match = /^\s*([A-Za-z]+)\s*(.*)$/.exec(text);
    if (!match) throw new Error(`Dockerfile line ${start + 1}: cannot read "${raw}"`);
    const keyword = match[1]!.toUpperCase();
    if (keyword === 'FROM') {
      const as = /\s+AS\s+(\S+)\s*$/i.exec(match[2]!);
      stage = as ? as[1]! : String(stages);
      stages += 1;
    }
    out.push({ keyword, text: match[2]!.trim(), line: start + 1, stage });
  }
  return out;
}

export function copies(instructions: Instruction[]): Copy[] {
  return instructions
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => {
      let rest = i.text;
      let from: string | null = null;
      for (;;) {
        const flag = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
        if (!flag) break;
        if (flag[1] === 'from') from = flag[2] ?? null;
        rest = rest.slice(flag[0].length);
      }
      const parts = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
      if (parts.length < 2) throw new Error(`Dockerfile line ${i.line}: COPY needs a source and a destination`);
      return { stage: i.stage, line: i.line, from, sources: parts.slice(0, -1), destination: parts[parts.length - 1]! };
    });
}

/** LABEL key=value pairs of one stage (values unquoted). */
export function labels(instructions: Instruction[], stage: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of instructions.filter((x) => x.keyword === 'LABEL' && x.stage === stage)) {
    for (const m of i.text.matchAll(/([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
      out[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
    }
  }
  return out;
}

/** The last WORKDIR of a stage. */
export function workdir(instructions: Instruction[], stage: string): string {
  const dirs = instructions.filter((i) => i.keyword === 'WORKDIR' && i.stage === stage);
  return dirs.length > 0 ? dirs[dirs.length - 1]!.text : '/';
}
