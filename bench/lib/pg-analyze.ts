import pg from 'pg';

/**
 * Takes PostgreSQL's statistics of every table of a schema (the connection's own schema when none is named), as
 * autovacuum does once a table has changed enough: a floor of the benchmark lasts seconds, autovacuum looks once a
 * minute (`autovacuum_naptime`), so without this a floor runs on the statistics of the tables it started with.
 */
export async function analyzeSchema(databaseUrl: string, schema?: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ schemaname: string; tablename: string }>(
      'select schemaname, tablename from pg_tables where schemaname = coalesce($1, current_schema())',
      [schema ?? null],
    );
    for (const { schemaname, tablename } of rows)
      await client.query(
        `analyze ${client.escapeIdentifier(schemaname)}.${client.escapeIdentifier(tablename)}`,
      );
  } finally {
    await client.end();
  }
}
