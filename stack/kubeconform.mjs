// kubeconform and the Kubernetes JSON schemas it checks deploy/kubernetes against, offline: kubeconform built
// with `go install` through the Go module proxy, the schemas from the PyPI package kubernetes-validate. Both are
// cached under .stack, keyed by version; a cached run starts nothing but kubeconform.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { downloadWheels, ensureDebian, log, moveIntoPlace, run, STACK_DIR, which } from './provision.mjs';

export const DEPLOY_VERSIONS = {
  kubeconform: '0.8.0',
  // kubeconform 0.8.0 declares `go 1.26`; an older Go fetches this toolchain (see goCommand)
  goToolchain: '1.26.8',
  // the PyPI package carrying the JSON schemas of Kubernetes 1.25 to 1.37 (its version follows Kubernetes)
  kubernetesValidate: '1.37.0',
  // the Kubernetes release the manifests are checked against
  kubernetes: '1.33.0',
};

const GO_ARCH = { x64: 'amd64', arm64: 'arm64' }[process.arch] ?? process.arch;

function goVersionAtLeast(go, [major, minor]) {
  const version = execFileSync(go, ['env', 'GOVERSION'], { encoding: 'utf8' }).trim(); // go1.26.8
  const [, a, b] = /^go(\d+)\.(\d+)/.exec(version) ?? [];
  return Number(a) > major || (Number(a) === major && Number(b) >= minor);
}

/**
 * A Go new enough for kubeconform. The machine's Go when it is (Go, or Debian's `golang-go` when there is none);
 * otherwise (Debian bookworm's Go is 1.19) the pinned Go toolchain, which the Go project publishes as the module
 * golang.org/toolchain on the module proxy, fetched by the old Go itself and kept under .stack.
 */
function goCommand() {
  const go =
    which('go') ??
    (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null) ??
    ensureDebian('go', 'golang-go', ' or install Go');
  const [major, minor] = DEPLOY_VERSIONS.goToolchain.split('.').map(Number);
  return goVersionAtLeast(go, [major, minor]) ? go : ensureGoToolchain(go);
}

/** The pinned Go toolchain in `dir`, fetched (once) as a module by an older `go`. Returns its `go`. */
export function ensureGoToolchain(oldGo, dir = join(STACK_DIR, `go-${DEPLOY_VERSIONS.goToolchain}`)) {
  if (existsSync(join(dir, '.ok'))) return join(dir, 'bin', 'go');
  log(`fetching the Go ${DEPLOY_VERSIONS.goToolchain} toolchain from the Go module proxy (first time only)`);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const module = `golang.org/toolchain@v0.0.1-go${DEPLOY_VERSIONS.goToolchain}.linux-${GO_ARCH}`;
  const downloaded = execFileSync(oldGo, ['mod', 'download', '-json', module], {
    cwd: tmp,
    encoding: 'utf8',
    env: { ...process.env, GOMODCACHE: join(tmp, 'mod'), GOFLAGS: '-modcacherw', GO111MODULE: 'on' },
  });
  const built = join(tmp, 'go');
  cpSync(JSON.parse(downloaded).Dir, built, { recursive: true });
  // module zips keep no file modes: the commands must be made executable again
  const toolDir = join(built, 'pkg', 'tool', `linux_${GO_ARCH}`);
  for (const f of readdirSync(join(built, 'bin'))) chmodSync(join(built, 'bin', f), 0o755);
  for (const f of readdirSync(toolDir)) chmodSync(join(toolDir, f), 0o755);
  writeFileSync(join(built, '.ok'), new Date().toISOString());
  moveIntoPlace(built, dir);
  rmSync(tmp, { recursive: true, force: true });
  return join(dir, 'bin', 'go');
}

/** The kubeconform binary, built once per version with `go install` (module downloads in a scratch folder). */
export function ensureKubeconform() {
  const dir = join(STACK_DIR, `kubeconform-${DEPLOY_VERSIONS.kubeconform}`);
  const bin = join(dir, 'kubeconform');
  if (existsSync(join(dir, '.ok'))) return bin;
  const go = goCommand();
  log(`building kubeconform ${DEPLOY_VERSIONS.kubeconform} with go install (first time only)`);
  const tmp = join(STACK_DIR, `tmp-kubeconform-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const built = join(tmp, 'bin');
  run(go, ['install', `github.com/yannh/kubeconform/cmd/kubeconform@v${DEPLOY_VERSIONS.kubeconform}`], {
    env: {
      ...process.env,
      GOBIN: built,
      GOPATH: join(tmp, 'gopath'),
      GOMODCACHE: join(tmp, 'mod'),
      GOCACHE: join(tmp, 'cache'),
      GOFLAGS: '-modcacherw',
      GOTOOLCHAIN: 'local',
      CGO_ENABLED: '0',
    },
  });
  writeFileSync(join(built, '.ok'), new Date().toISOString());
  moveIntoPlace(built, dir);
  rmSync(tmp, { recursive: true, force: true });
  return bin;
}

/**
 * The strict JSON schemas of one Kubernetes release, as files kubeconform reads with `-schema-location
 * <dir>/{{ .ResourceKind }}{{ .KindSuffix }}.json`. kubernetes-validate names them that way but points every
 * `$ref` at https://kubernetes.io/api/_definitions.json (through its `$id`), which kubeconform would download:
 * the extraction drops the `$id`s and makes those references relative to the folder.
 */
export function ensureKubernetesSchemas() {
  const { kubernetesValidate, kubernetes } = DEPLOY_VERSIONS;
  const dir = join(STACK_DIR, `k8s-schemas-${kubernetesValidate}-v${kubernetes}-strict`);
  if (existsSync(join(dir, '.ok'))) return dir;
  log(`fetching the Kubernetes ${kubernetes} JSON schemas (PyPI kubernetes-validate) (first time only)`);
  const tmp = join(STACK_DIR, `tmp-k8s-schemas-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  downloadWheels(tmp, [`kubernetes-validate==${kubernetesValidate}`]);
  const built = join(tmp, 'schemas');
  const extract = `
import glob, json, os, sys, zipfile
wheels, out, folder = sys.argv[1], sys.argv[2], sys.argv[3]
prefix = 'kubernetes_validate/kubernetes-json-schema/' + folder + '/'
def local(node):
    if isinstance(node, dict):
        if isinstance(node.get('$id'), str):
            del node['$id']
        ref = node.get('$ref')
        if isinstance(ref, str) and ref.startswith('/api/_definitions.json#'):
            node['$ref'] = '_definitions.json#' + ref.split('#', 1)[1]
        return {k: local(v) for k, v in node.items()}
    if isinstance(node, list):
        return [local(v) for v in node]
    return node
os.makedirs(out)
count = 0
with zipfile.ZipFile(glob.glob(os.path.join(wheels, 'kubernetes_validate-*.whl'))[0]) as w:
    for name in w.namelist():
        if name.startswith(prefix) and name.endswith('.json'):
            with open(os.path.join(out, name[len(prefix):]), 'w') as f:
                json.dump(local(json.loads(w.read(name))), f)
            count += 1
if count < 100 or not os.path.exists(os.path.join(out, '_definitions.json')):
    sys.exit(f'{prefix}: {count} schemas, expected hundreds and _definitions.json')
`;
  run('python3', ['-c', extract, join(tmp, 'wheels'), built, `v${kubernetes}-local-strict`]);
  writeFileSync(join(built, '.ok'), new Date().toISOString());
  moveIntoPlace(built, dir);
  rmSync(tmp, { recursive: true, force: true });
  return dir;
}
