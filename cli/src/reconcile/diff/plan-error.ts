import type { Kind } from '../../kinds/descriptor.js';

/** Where in the desired state a plan problem sits: the file stage turns it into file:line. */
export interface PlanProblemSite {
  kind: Kind;
  /** Identity of the object. */
  id: string;
  field?: string;
}

/** One thing the file asks for that no change can do, with a sentence saying what and how to fix it. */
export interface PlanProblem {
  message: string;
  site?: PlanProblemSite;
}

/** The file asks for something no change can do; one or more problems, each with its sentence. */
export class PlanError extends Error {
  readonly problems: PlanProblem[];

  constructor(message: string, site?: PlanProblemSite);
  constructor(problems: PlanProblem[]);
  constructor(arg: string | PlanProblem[], site?: PlanProblemSite) {
    const problems = typeof arg === 'string' ? [{ message: arg, site }] : arg;
    super(problems.map((p) => p.message).join('\n'));
    this.name = 'PlanError';
    this.problems = problems;
  }
}
