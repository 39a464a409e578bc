import type { Kind } from '../fixtures/authorization-matrix';
import type { Identity, Target } from '../fixtures/authorization-oracle';
import { groupOf, scene, type Scene } from './authz-scenes';
import type { MatrixOrg, MatrixWorld } from './authz-world';

/** Another member than `identity`: chat's is chat2, everyone else's is chat. */
const peerOf = (identity: Identity): Identity => (identity === 'chat' ? 'chat2' : 'chat');
const otherGroupOf = (identity: Identity) => (groupOf(identity) === 'A' ? 'B' : 'A');

/**
 * The scene a caller acting as `identity` meets as `target`, and the organization whose path names it.
 * `fresh`: a new one, for a request that would use it up (a delete, an attach, a role change).
 */
export async function sceneFor(
  world: MatrixWorld,
  kind: Kind,
  target: Target,
  identity: Identity,
  fresh: boolean,
): Promise<{ scene: Scene; o: MatrixOrg }> {
  const { env, main, other } = world;
  if (target === 'foreign' || target === 'foreignPath') {
    const o = other;
    const [creator, variant] =
      kind === 'kb' ? (['admin', 'organization'] as const) : (['chat', 'A'] as const);
    return { scene: await scene(env, o, kind, creator, kind === 'user' ? 'member' : variant), o };
  }
  const o = main;
  const make = (creator: Identity, variant: string) => scene(env, o, kind, creator, variant, fresh);
  switch (target) {
    case 'self':
      return { scene: { userId: o.members[identity].userId }, o };
    case 'member':
    case 'otherOwner':
      return { scene: await make('owner', target), o };
    case 'own':
      if (kind === 'agent') return { scene: await make('owner', groupOf(identity)), o };
      return { scene: await make(identity, 'private'), o };
    case 'otherGroup':
      return { scene: await make('owner', otherGroupOf(identity)), o };
    case 'agentPersonal':
      return { scene: await make('owner', `agent-${groupOf(identity)}`), o };
    case 'otherAgentPersonal':
      return { scene: await make('owner', `agent-${otherGroupOf(identity)}`), o };
    case 'peer':
      return { scene: await make(peerOf(identity), 'private'), o };
    case 'peerPersonal':
      return { scene: await make(peerOf(identity), 'private'), o };
    case 'shared':
      if (kind === 'kb') return { scene: await make('admin', 'organization'), o };
      return { scene: await make(peerOf(identity), `shared-${identity}`), o };
    default:
      return { scene: await make('admin', 'org'), o };
  }
}
