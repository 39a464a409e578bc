// Artifacts and Apps: uploads an HTML page declaring the table it reads, pins it as an App, approves its
// manifest and opens it; then reads the table through the App's bridge as the page itself would.
//
//   npx tsx examples/apps.ts --org "$ORG" --token "$KEY" --table TABLE_NAME
import { createClient } from '../clients/typescript/src';
import { connect, must, run } from './connect';

async function main() {
  const { args, baseUrl, client, org } = connect('apps', ['table']);
  const manifest = { workflows: [], tables: [{ table: args.table, access: 'read' }] };
  // The manifest is declared in the page, in a script named service.manifest.ts.
  const html = `<!doctype html><html><head><title>Rows</title>
<script type="text/plain" data-file="service.manifest.ts">export default ${JSON.stringify(manifest)};</script>
</head><body><h1>Rows</h1></body></html>`;
  const { artifact } = must(
    await client.POST('/orgs/{organizationId}/artifacts', {
      params: { path: org },
      body: { name: 'Rows app', contentType: 'text/html', content: html },
    }),
  );
  const inArtifact = { ...org, artifactId: artifact.artifactId };
  must(
    await client.PUT('/orgs/{organizationId}/artifacts/{artifactId}/pin', { params: { path: inArtifact } }),
  );
  // approving takes the capability apps.manage (admins and owners)
  const approved = must(
    await client.PUT('/orgs/{organizationId}/artifacts/{artifactId}/app-manifest', {
      params: { path: inArtifact },
    }),
  );
  console.log('approved', approved.manifest);
  const session = must(
    await client.POST('/orgs/{organizationId}/artifacts/{artifactId}/app-session', {
      params: { path: inArtifact },
    }),
  );
  console.log(`open the app at ${session.url}`);
  // What the page's window.service does: the session token of its link is its credential.
  const app = createClient({ baseUrl, token: new URL(session.url).searchParams.get('session') ?? '' });
  const rows = must(
    await app.GET('/orgs/{organizationId}/artifacts/{artifactId}/app/tables/{tableName}/rows', {
      params: { path: { ...inArtifact, tableName: args.table } },
    }),
  );
  console.log(`${rows.totalRows} row(s):`, rows.items);
}

run(main);
