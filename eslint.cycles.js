// Import circles: no module of the project may reach itself through its imports, type-only imports
// included (docs/decisions/no-import-circles.md). eslint-plugin-import(-x)'s `no-cycle` skips
// `import type`, and a circle of types is still two modules that cannot be understood, moved or
// split apart one without the other. The rule reads the TypeScript program the type-aware lint
// has built anyway: every import, export-from, `import()` and `import('…').T` of every file,
// resolved as the compiler resolves it, then the circles (strongly connected components) once
// per program.
import path from 'node:path';
import ts from 'typescript';

/** @typedef {{ target: string, start: number, end: number }} Edge */

/** The module specifiers a file names, as string-literal nodes. */
function specifiers(sourceFile) {
  const found = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteralLike(node.moduleSpecifier)) found.push(node.moduleSpecifier);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteralLike(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0]);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteralLike(node.argument.literal)
    ) {
      found.push(node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

const ownFile = (fileName) => !fileName.endsWith('.d.ts') && !fileName.split(/[\\/]/).includes('node_modules');

/** Each of the program's own files, with the own files it imports. */
function importGraph(program) {
  const options = program.getCompilerOptions();
  const cache = ts.createModuleResolutionCache(program.getCurrentDirectory(), (name) => name, options);
  /** @type {Map<string, Edge[]>} */
  const graph = new Map();
  for (const sourceFile of program.getSourceFiles()) {
    if (!ownFile(sourceFile.fileName)) continue;
    const edges = [];
    for (const literal of specifiers(sourceFile)) {
      const mode = program.getModeForUsageLocation(sourceFile, literal);
      const { resolvedModule } = ts.resolveModuleName(
        literal.text,
        sourceFile.fileName,
        options,
        ts.sys,
        cache,
        undefined,
        mode,
      );
      if (resolvedModule && ownFile(resolvedModule.resolvedFileName)) {
        edges.push({ target: resolvedModule.resolvedFileName, start: literal.getStart(sourceFile), end: literal.end });
      }
    }
    graph.set(sourceFile.fileName, edges);
  }
  return graph;
}

/** The circle each file is in (Tarjan's strongly connected components), for files in one. */
function circles(graph) {
  /** @type {Map<string, Set<string>>} */
  const circleOf = new Map();
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  let next = 0;
  // Iterative, so that a long chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [{ file: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.file) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++].target;
        if (!graph.has(target)) continue;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].file;
        low.set(parent, Math.min(low.get(parent), low.get(frame.file)));
      }
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const members = new Set();
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        members.add(member);
      } while (member !== frame.file);
      const selfImport = (graph.get(frame.file) ?? []).some((e) => e.target === frame.file);
      if (members.size > 1 || selfImport) for (const m of members) circleOf.set(m, members);
    }
  }
  return circleOf;
}

/** The shortest way, within a circle, from `from` back to `to`. */
function wayBack(graph, circle, from, to) {
  const cameFrom = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === to) break;
    for (const { target } of graph.get(file) ?? []) {
      if (!circle.has(target) || cameFrom.has(target)) continue;
      cameFrom.set(target, file);
      queue.push(target);
    }
  }
  const way = [];
  for (let file = to; file !== null && file !== undefined; file = cameFrom.get(file)) way.unshift(file);
  return way;
}

/** @type {WeakMap<ts.Program, { graph: Map<string, Edge[]>, circleOf: Map<string, Set<string>> }>} */
const analysed = new WeakMap();

const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Refuses an import that closes a circle of modules, type-only imports included.' },
    messages: { circle: 'import circle (docs/decisions/no-import-circles.md): {{ way }}' },
    schema: [],
  },
  create(context) {
    const program = context.sourceCode.parserServices?.program;
    if (!program) return {};
    return {
      Program() {
        let analysis = analysed.get(program);
        if (!analysis) {
          const graph = importGraph(program);
          analysis = { graph, circleOf: circles(graph) };
          analysed.set(program, analysis);
        }
        const file = program.getSourceFile(context.physicalFilename)?.fileName;
        const circle = file && analysis.circleOf.get(file);
        if (!circle) return;
        const shown = (f) => path.relative(context.cwd, f);
        for (const edge of analysis.graph.get(file) ?? []) {
          if (!circle.has(edge.target)) continue;
          const way = [file, ...wayBack(analysis.graph, circle, edge.target, file)];
          context.report({
            loc: {
              start: context.sourceCode.getLocFromIndex(edge.start),
              end: context.sourceCode.getLocFromIndex(edge.end),
            },
            messageId: 'circle',
            data: { way: way.map(shown).join(' → ') },
          });
        }
      },
    };
  },
};

export const cycleConfig = {
  files: ['**/*.ts', '**/*.tsx'],
  plugins: { imports: { rules: { 'no-cycle': noImportCycle } } },
  rules: { 'imports/no-cycle': 'error' },
};
