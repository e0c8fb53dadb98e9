// Reads a Parquet file with DuckDB and answers named SQL queries over it.
//
//   node query.mjs FILE.parquet < queries.json
//
// queries.json is an object {"name": "SELECT ... FROM events ..."}; the
// file is the view `events`. Prints {"name": [rows as objects]} as JSON,
// numbers as DuckDB's JSON rendering gives them (BIGINT as a string).
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
if (!file) {
  console.error('usage: node query.mjs FILE.parquet < queries.json');
  process.exit(2);
}
const queries = JSON.parse(readFileSync(0, 'utf8'));
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
await conn.run(`CREATE VIEW events AS SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
const out = {};
for (const [name, sql] of Object.entries(queries)) {
  const reader = await conn.runAndReadAll(sql);
  out[name] = reader.getRowObjectsJson();
}
process.stdout.write(JSON.stringify(out) + '\n');
