import type { Mailer } from '@lib/mail';
import { createMailActivities } from './mail';

export interface ActivityDeps {
  mailer: Mailer;
  publicBaseUrl: string;
}

/** All activities, built from explicit dependencies (no module-level singletons). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMailActivities(deps),
  };
}
