export const TEST_PG_URL = process.env.AGENTGW_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Drops a test's PostgreSQL schema and everything in it. */
export async function dropSchema(schema: string, url: string = TEST_PG_URL): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema.replace(/"/g, '')}" cascade`);
  } finally {
    await client.end();
  }
}
