// Lint step, offline: docker-compose.yml against the Compose Specification schema (pinned with the dclint npm
// package) plus the scale-out topology it must keep; deploy/kubernetes against the Kubernetes schemas with
// kubeconform -strict, plus the references between the manifests. Neither Docker nor a cluster is needed.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import { parseAllDocuments, parseDocument } from 'yaml';
import { DEPLOY_VERSIONS, ensureKubeconform, ensureKubernetesSchemas } from './kubeconform.mjs';
import { API_ENV, API_NODE_FLAGS, WORKER_NODE_FLAGS } from './launch.mjs';
import { ROOT } from './provision.mjs';

const problems = [];
const problem = (where, message) => problems.push(`${where}: ${message}`);

function parseYaml(file) {
  const doc = parseDocument(readFileSync(join(ROOT, file), 'utf8'), { uniqueKeys: true });
  for (const e of doc.errors) problem(file, e.message);
  return doc.toJS({ maxAliasCount: -1 });
}

/** A Compose value as Compose would see it with no variables set: `${X:-d}` → d, `${X:?msg}` → a value. */
function interpolate(value) {
  return String(value)
    .replace(/\$\{\w+(?::?-([^}]*))?\}/g, (_m, fallback) => fallback ?? '')
    .replace(/\$\{\w+:?\?[^}]*\}/g, 'set')
    .replace(/\$\$/g, '$');
}

/** How each entry point runs: with the environment and node flags `npm start` gives it (stack/launch.mjs). */
const COMMANDS = {
  'dist/api/server.js': [
    'env',
    ...Object.entries(API_ENV).map(([name, value]) => `${name}=${value}`),
    'node',
    ...API_NODE_FLAGS,
    'dist/api/server.js',
  ],
  'dist/worker/main.js': ['node', ...WORKER_NODE_FLAGS, 'dist/worker/main.js'],
};

function checkCommand(where, command) {
  const expected = COMMANDS[command?.at?.(-1)];
  if (!expected) return problem(where, `runs ${JSON.stringify(command)}, which is neither entry point`);
  if (JSON.stringify(command) !== JSON.stringify(expected)) {
    problem(where, `runs ${command.join(' ')}, not ${expected.join(' ')} (stack/launch.mjs)`);
  }
}

function checkDockerfile() {
  const cmd = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').match(/^CMD (.*)$/m)?.[1];
  checkCommand('Dockerfile CMD', cmd && JSON.parse(cmd));
}

function checkCompose() {
  const file = 'docker-compose.yml';
  const compose = parseYaml(file);
  // dclint exports no subpath: its package folder, then the schema file in it
  const pkg = dirname(createRequire(import.meta.url).resolve('dclint/package.json'));
  const schema = JSON.parse(readFileSync(join(pkg, 'schemas/compose.schema.json'), 'utf8'));
  delete schema.$schema; // Ajv knows draft-07 by another address
  const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
  if (!validate(compose)) {
    for (const e of validate.errors) problem(file, `${e.instancePath || '/'} ${e.message}`);
  }
  const services = compose.services ?? {};
  const replicas = (name) => Number(interpolate(services[name]?.deploy?.replicas ?? 1));
  for (const [name, service] of Object.entries(services)) {
    const deps = Array.isArray(service.depends_on)
      ? service.depends_on
      : Object.keys(service.depends_on ?? {});
    for (const dep of deps) if (!services[dep]) problem(file, `${name} depends on undefined service ${dep}`);
    for (const volume of service.volumes ?? []) {
      const source = String(volume).split(':')[0];
      if (source.startsWith('.') && !existsSync(join(ROOT, source)))
        problem(file, `${name} mounts missing ${source}`);
    }
  }
  for (const name of ['api', 'worker']) checkCommand(`${file} ${name}`, services[name]?.command);
  // A crashed api or worker comes back by itself (issue 32), as under `npm start` and Kubernetes.
  for (const name of ['api', 'worker']) {
    if (!['unless-stopped', 'always', 'on-failure'].includes(services[name]?.restart))
      problem(file, `${name} needs a restart policy (restart: unless-stopped)`);
  }
  // The scale-out shape docs/operations.md "Scale-out and deployment" describes.
  if (replicas('api') < 2) problem(file, 'api must run at least two replicas');
  if (replicas('worker') < 2) problem(file, 'worker must run at least two replicas by default');
  if (services.api?.ports) problem(file, 'api replicas publish no port: the load balancer does');
  if (!services.api?.environment?.REDIS_URL)
    problem(file, 'api needs REDIS_URL (the socket.io Redis adapter)');
  const lb = services.lb;
  const mount = (lb?.volumes ?? []).map(String).find((v) => v.endsWith('haproxy.cfg:ro'));
  if (!lb || !mount) return problem(file, 'lb (HAProxy) with its haproxy.cfg mounted is missing');
  const cfgFile = mount.split(':')[0].replace(/^\.\//, '');
  const cfg = readFileSync(join(ROOT, cfgFile), 'utf8');
  const published = (lb.ports ?? []).map((p) => String(p).split(':').at(-1));
  const binds = [...cfg.matchAll(/^\s*bind\s+\S*:(\d+)/gm)].map((m) => m[1]);
  if (published.sort().join() !== binds.sort().join()) {
    problem(cfgFile, `binds ${binds} but lb publishes ${published}`);
  }
  for (const [, target, port] of cfg.matchAll(/^\s*server-template\s+\S+\s+\d+\s+([\w-]+):(\d+)/gm)) {
    const exposed = (services[target]?.expose ?? []).map(String);
    if (!exposed.includes(port))
      problem(cfgFile, `routes to ${target}:${port}, which ${target} does not expose`);
  }
  if (String(services.api.environment.PORT) !== '3000' || !cfg.includes('api:3000')) {
    problem(cfgFile, 'the api backend port must be the api PORT (3000)');
  }
  const doc = 'docs/operations.md';
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const section = text.split(/^## Scale-out and deployment$/m)[1]?.split(/^## /m)[0];
  if (!section) return problem(doc, 'no "## Scale-out and deployment" section');
  for (const name of Object.keys(services)) {
    if (!section.includes(`\`${name}\``)) problem(doc, `Scale-out section does not name service \`${name}\``);
  }
  return Object.keys(services).length;
}

function checkKubernetes() {
  const dir = 'deploy/kubernetes';
  const files = readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.yaml'));
  const resources = files.flatMap((f) =>
    parseAllDocuments(readFileSync(join(ROOT, dir, f), 'utf8'), { uniqueKeys: true }).map((d) => {
      for (const e of d.errors) problem(`${dir}/${f}`, e.message);
      return d.toJS({ maxAliasCount: -1 });
    }),
  );
  const schemas = ensureKubernetesSchemas();
  const args = ['-strict', '-summary', '-output', 'json', '-kubernetes-version', DEPLOY_VERSIONS.kubernetes];
  args.push('-schema-location', `${schemas}/{{ .ResourceKind }}{{ .KindSuffix }}.json`, join(ROOT, dir));
  let output;
  try {
    output = execFileSync(ensureKubeconform(), args, { encoding: 'utf8' });
  } catch (err) {
    output = err.stdout ?? '';
  }
  const report = JSON.parse(output || '{}');
  for (const r of report.resources ?? []) problem(r.filename, `${r.kind} ${r.name}: ${r.msg ?? r.status}`);
  const { valid = 0, invalid, errors, skipped } = report.summary ?? {};
  if (valid !== resources.length || invalid || errors || skipped) {
    problem(
      dir,
      `kubeconform: ${valid} of ${resources.length} resources valid (${JSON.stringify(report.summary)})`,
    );
  }
  // References kubeconform cannot see: names and selectors between the manifests, the probe path.
  const named = (kind) => new Set(resources.filter((r) => r.kind === kind).map((r) => r.metadata.name));
  const deployments = resources.filter((r) => r.kind === 'Deployment');
  const matches = (selector) =>
    deployments.filter((d) =>
      Object.entries(selector ?? {}).every(([k, v]) => d.spec.template.metadata.labels?.[k] === v),
    );
  const paths = parseYaml('openapi.yaml').paths;
  for (const d of deployments) {
    if (d.spec.replicas < 2) problem(dir, `${d.metadata.name} runs fewer than two replicas`);
    for (const c of d.spec.template.spec.containers) {
      checkCommand(`${dir} ${d.metadata.name}/${c.name}`, c.command);
      for (const ref of c.envFrom ?? []) {
        if (ref.secretRef && !named('Secret').has(ref.secretRef.name))
          problem(dir, `no Secret ${ref.secretRef.name}`);
        if (ref.configMapRef && !named('ConfigMap').has(ref.configMapRef.name)) {
          problem(dir, `no ConfigMap ${ref.configMapRef.name}`);
        }
      }
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        if (probe?.httpGet && !paths[probe.httpGet.path])
          problem(dir, `probe path ${probe.httpGet.path} is not in openapi.yaml`);
      }
    }
    const pdbs = resources.filter(
      (r) => r.kind === 'PodDisruptionBudget' && matches(r.spec.selector.matchLabels).includes(d),
    );
    if (pdbs.length !== 1)
      problem(dir, `${d.metadata.name} has ${pdbs.length} PodDisruptionBudgets, expected one`);
  }
  for (const s of resources.filter((r) => r.kind === 'Service')) {
    if (matches(s.spec.selector).length !== 1)
      problem(dir, `Service ${s.metadata.name} selects no single Deployment`);
  }
  return resources.length;
}

checkDockerfile();
const services = checkCompose();
const resources = checkKubernetes();
if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(
  `docker-compose.yml: ${services} services valid (Compose Specification), scale-out topology consistent; ` +
    `deploy/kubernetes: ${resources} resources valid (kubeconform -strict, Kubernetes ${DEPLOY_VERSIONS.kubernetes})`,
);
