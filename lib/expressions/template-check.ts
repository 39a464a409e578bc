import { expressionLimits } from './limits';

type Node = hbs.AST.Node;
type Program = hbs.AST.Program;
type Block = hbs.AST.BlockStatement;
type Expression = hbs.AST.Expression;

/** Built-in block helpers that run their body at most once; `each` and a section over a path (`{{#items}}`,
 * which iterates when `items` is an array) may run it once per element. */
const ONCE = new Set(['if', 'unless', 'with']);
/** Blocks that leave the context as it is: their subject cannot bring outside data into an iteration. */
const KEEPS_CONTEXT = new Set(['if', 'unless']);

const pathName = (e: Expression) =>
  e.type === 'PathExpression' ? (e as hbs.AST.PathExpression).original : '';

/** The value a block runs over: its first parameter (`{{#each items}}`), or its own path for a section
 * (`{{#items}}`, which iterates when `items` is an array). */
function subjectOf(block: Block): Expression {
  return block.params.length ? block.params[0]! : block.path;
}

/** Whether a block subject reaches outside the element the enclosing iteration is on: `@root…`, `../…`, a
 * block parameter declared outside that iteration, or a subexpression (`(lookup @root "a")`). */
function escapes(subject: Expression, outerParams: ReadonlySet<string>): boolean {
  if (subject.type === 'SubExpression') return true;
  if (subject.type !== 'PathExpression') return false;
  const path = subject as hbs.AST.PathExpression;
  if (path.data || path.depth > 0) return true;
  const head = path.parts[0];
  return head !== undefined && outerParams.has(head);
}

interface Scope {
  depth: number;
  /** Inside a block that may repeat its body. */
  iterating: boolean;
  /** Block parameters declared outside the innermost iteration (they name data the iteration does not own). */
  outerParams: Set<string>;
  /** Block parameters declared by the innermost iteration or inside it. */
  innerParams: Set<string>;
}

/**
 * Why a parsed template may not be saved, or null. A template's cost at run time is bounded anyway (the render
 * budgets); this refuses up front what can only be a mistake or an attack: partials and decorators (templates
 * are self-contained), blocks nested deeper than TEMPLATE_MAX_BLOCK_DEPTH, and a block inside an iteration that
 * runs over data outside the current element, which multiplies the work by the size of that data at every
 * level (`{{#each a}}{{#each @root.a}}…`).
 */
export function templateAstProblem(ast: Program): string | null {
  const maxDepth = expressionLimits().templateMaxBlockDepth;
  let problem: string | null = null;

  function visit(node: Node, scope: Scope): void {
    if (problem) return;
    switch (node.type) {
      case 'Program':
        for (const statement of (node as Program).body) visit(statement, scope);
        return;
      case 'PartialStatement':
      case 'PartialBlockStatement':
        problem = 'partials ({{> name}}) are not supported';
        return;
      case 'DecoratorBlock':
      case 'Decorator':
        problem = 'decorators and inline partials ({{#* …}}) are not supported';
        return;
      case 'BlockStatement':
        return visitBlock(node as Block, scope);
      default:
        return;
    }
  }

  function visitBlock(block: Block, scope: Scope): void {
    const name = pathName(block.path);
    const depth = scope.depth + 1;
    if (depth > maxDepth) {
      problem = `blocks are nested more than ${maxDepth} deep (TEMPLATE_MAX_BLOCK_DEPTH)`;
      return;
    }
    const iterates = !ONCE.has(name);
    if (scope.iterating && !KEEPS_CONTEXT.has(name) && escapes(subjectOf(block), scope.outerParams)) {
      problem =
        `{{#${name || 'block'}}} inside an iteration runs over data outside the current element ` +
        '(@root, ../, an outer block parameter or a subexpression): its work would multiply at every level';
      return;
    }
    const declared = block.program.blockParams ?? [];
    // A new iteration owns only what it declares; everything declared before it is outside it.
    const inner: Scope = iterates
      ? {
          depth,
          iterating: true,
          outerParams: new Set([...scope.outerParams, ...scope.innerParams]),
          innerParams: new Set(declared),
        }
      : { ...scope, depth, innerParams: new Set([...scope.innerParams, ...declared]) };
    visit(block.program, inner);
    if (block.inverse) visit(block.inverse, { ...scope, depth });
  }

  visit(ast, { depth: 0, iterating: false, outerParams: new Set(), innerParams: new Set() });
  return problem;
}
