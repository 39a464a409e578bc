import { expect } from 'chai';
import type { TestEnv } from './env';
import { as, type TestOrg } from './org';

/** Fields of every type: the table most table tests use. */
export const LISTING_FIELDS = [
  { name: 'title', type: 'text', required: true, comments: 'Title' },
  { name: 'price', type: 'numeric', required: false, comments: 'Price' },
  { name: 'sold', type: 'boolean', required: false, default: false, comments: 'Sold yet' },
  { name: 'listed_at', type: 'timestamp', required: false, comments: 'Listed at' },
  { name: 'extras', type: 'jsonb', required: false, comments: 'Anything else' },
];

export async function createTable(
  env: TestEnv,
  org: TestOrg,
  name = 'listings',
  fields: object[] = LISTING_FIELDS,
) {
  const res = await as(env, org.admin.token).post(org.path('/tables'), { name, fields });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as { name: string; fields: Array<{ name: string; default?: unknown }> };
}

export async function insertRow(env: TestEnv, org: TestOrg, table: string, data: object) {
  const res = await as(env, org.admin.token).post(org.path(`/tables/${table}/data`), { data });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body as { id: number } & Record<string, unknown>;
}

export async function insertBatch(env: TestEnv, org: TestOrg, table: string, data: unknown[]) {
  const res = await as(env, org.admin.token).post(org.path(`/tables/${table}/data/batch`), { data });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as {
    inserted: number;
    failed: number;
    errors: Array<{ index: number; error: string }>;
    ids: number[];
  };
}

export function listRows(
  env: TestEnv,
  org: TestOrg,
  table: string,
  query: Record<string, string | number> = {},
) {
  return as(env, org.chat.token)
    .get(org.path(`/tables/${table}/data`))
    .query(query);
}

/** Ids of the rows a query returns (all of them: limit 1000), or fails with the error body. */
export async function idsOf(
  env: TestEnv,
  org: TestOrg,
  table: string,
  query: Record<string, string | number> = {},
) {
  const res = await listRows(env, org, table, { limit: 1000, ...query });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body.items as Array<{ id: number }>).map((r) => r.id);
}

/** The error of a refused query. */
export async function queryError(
  env: TestEnv,
  org: TestOrg,
  table: string,
  query: Record<string, string | number>,
) {
  const res = await listRows(env, org, table, query);
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body.error.code).to.equal('validation_failed');
  return res.body.error.message as string;
}
