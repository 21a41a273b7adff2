/** The file asks for something no change can do; the message says what and how to fix it. */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}
