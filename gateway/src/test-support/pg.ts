export const TEST_PG_URL = process.env.AGENTGW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Drops a test's PostgreSQL schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema.replace(/"/g, '')}" cascade`);
  } finally {
    await client.end();
  }
}
