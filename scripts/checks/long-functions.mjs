// Lists every function longer than N lines (default 80) in packages/*/src (tests excluded):
// declarations, methods, constructors, accessors, nested functions and anonymous ones (an arrow
// passed as a callback is named by its place, `<anonymous>`, after the file:line every row starts with).
// Exits 1 when it lists any, so `pnpm check` and CI fail on a long function.
// Usage: node scripts/checks/long-functions.mjs [maxLines] [dir...]   (dirs default to packages/*/src)
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const max = Number(process.argv[2] ?? 80);
const dirs = process.argv.slice(3);
const files = [];
const walk = (d) => {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
};
if (dirs.length > 0) dirs.forEach(walk);
else for (const pkg of readdirSync('packages')) walk(join('packages', pkg, 'src'));

/** A function's name: its own, the variable or property it is assigned to, or `<anonymous>`. */
const nameOf = (node, src) => {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(src);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    parent.initializer === node
  )
    return parent.name.getText(src);
  return '<anonymous>';
};

let over = 0;
for (const file of files.sort()) {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = src.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = src.getLineAndCharacterOfPosition(node.end).line;
      const lines = end - start + 1;
      if (lines > max) {
        over++;
        const row = `${file}:${start + 1} ${nameOf(node, src)} ${lines} lines`;
        console.log(row);
        console.error(row); // also on stderr, for callers that hide stdout (scripts/test.sh)
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
}
if (over > 0)
  console.error(`${over} function(s) over ${max} lines: split them into named pieces with one job each`);
process.exitCode = over > 0 ? 1 : 0;
