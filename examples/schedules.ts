// Schedules: a weekday-morning trigger whose handler asks an agent for a briefing; prints when it fires next.
//
//   npx tsx examples/schedules.ts --org "$ORG" --token "$KEY" --agent "$AGENT"
import { connect, must, run } from './connect';

async function main() {
  const { args, client, org } = connect('schedules', ['agent']);
  const trigger = must(
    await client.POST('/orgs/{organizationId}/schedules', {
      params: { path: org },
      // five cron fields, in UTC: 07:30 Monday to Friday
      body: { name: 'Morning briefing', cronExpression: '30 7 * * 1-5' },
    }),
  );
  const inTrigger = { ...org, triggerId: trigger.triggerId };
  const handler = must(
    await client.POST('/orgs/{organizationId}/schedules/{triggerId}/handlers', {
      params: { path: inTrigger },
      body: {
        handlerType: 'agent',
        agentId: args.agent,
        instructions: 'Write a short briefing for the team.',
      },
    }),
  );
  console.log(`${trigger.name}: each fire opens a conversation with ${handler.agentName}`);
  const runs = must(
    await client.GET('/orgs/{organizationId}/schedules/{triggerId}/runs', { params: { path: inTrigger } }),
  );
  console.log(`next run ${runs.nextRun}, last run`, runs.lastRun);
}

run(main);
