// Lists functions and methods longer than N lines (default 80) in packages/*/src (tests excluded).
// Usage: node scripts/checks/long-functions.mjs [maxLines]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const max = Number(process.argv[2] ?? 80);
const files = [];
const walk = (d) => {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
};
for (const pkg of readdirSync('packages')) walk(join('packages', pkg, 'src'));
let found = 0;
for (const file of files) {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = src.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = src.getLineAndCharacterOfPosition(node.end).line;
      const lines = end - start + 1;
      const named = node.name?.getText?.(src);
      if (lines > max && named !== undefined) {
        found++;
        console.log(`${file}:${start + 1} ${named} ${lines} lines`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
}
process.exitCode = found > 0 ? 1 : 0;
