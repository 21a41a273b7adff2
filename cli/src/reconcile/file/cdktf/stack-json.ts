/** The parts of a synthesized cdk.tf.json that the conversion reads. */
export type ResourceBody = Record<string, unknown>;

export interface StackJson {
  resource?: Record<string, Record<string, ResourceBody>>;
  data?: Record<string, Record<string, ResourceBody>>;
  variable?: Record<string, { default?: unknown }>;
  locals?: Record<string, unknown>;
  module?: Record<string, unknown>;
}

/** Where a problem is: a resource address and, when known, one of its attributes. */
export interface StackIssue {
  address: string;
  message: string;
}

/** A value that cannot become desired state; the caller adds the resource address. */
export class ResolveError extends Error {}

/** Every problem found in one stack, each naming its resource address. */
export class CdktfStackError extends Error {
  public constructor(
    public readonly file: string,
    public readonly issues: StackIssue[],
  ) {
    super(`${file}: ${issues.length === 1 ? 'a problem' : `${issues.length} problems`}\n${issues.map((i) => `  ${i.address}: ${i.message}`).join('\n')}`);
    this.name = 'CdktfStackError';
  }
}
