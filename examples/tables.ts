// Custom tables: creates a table, inserts rows in one batch, lists the filtered rows sorted.
//
//   npx tsx examples/tables.ts --org "$ORG" --token "$KEY"
import { connect, must, run } from './connect';

async function main() {
  const { client, org } = connect('tables');
  const table = { ...org, tableName: `orders_${Date.now()}` };
  must(
    await client.POST('/orgs/{organizationId}/tables', {
      params: { path: org },
      body: {
        name: table.tableName,
        fields: [
          { name: 'customer', type: 'text', required: true, comments: 'who ordered' },
          { name: 'total', type: 'numeric', required: true, comments: 'in euros' },
        ],
      },
    }),
  );
  const batch = must(
    await client.POST('/orgs/{organizationId}/tables/{tableName}/data/batch', {
      params: { path: table },
      body: {
        data: [
          { customer: 'Ada', total: 30 },
          { customer: 'Grace', total: 'n/a' },
          { customer: 'Linus', total: 12 },
        ],
      },
    }),
  );
  // invalid rows are skipped and reported by index; the valid ones are inserted
  console.log(`inserted ${batch.inserted}, refused`, batch.errors);
  const page = must(
    await client.GET('/orgs/{organizationId}/tables/{tableName}/data', {
      params: { path: table, query: { filters: 'total:gte:20:and', orderBy: 'total:desc' } },
    }),
  );
  console.log(`${page.totalRows} order(s) of 20 or more:`, page.items);
}

run(main);
