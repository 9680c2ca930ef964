// A player's app written against the TypeScript client generated from openapi.yaml
// (openapi-generator's typescript-fetch; tests/clients/test_native_clients.py compiles it
// with `tsc --strict` and runs it under Node). Seat 0 is this player, seats 1-3 heuristic
// bots; the app polls its seat view and plays round 1 to its end: it declares with a show
// the view offers (R17), passes on overcalls (R20), buries (R21), checks each play with a
// dry run (`?dryRun=true`) and plays a lead from `legal.leads` (R22) or a follow from
// `legal.follows` (R23). It prints one JSON line of what it did.
import {
  CommandsApi,
  Configuration,
  MatchesApi,
  ResponseError,
  ViewsApi,
  type CommandDoneOrDryRun,
  type Problem,
} from "./client";

// Node's own globals, declared here so the app needs no package besides `typescript`.
declare const process: { argv: string[]; exit(code: number): never };

const base = process.argv[2];
const anyone = new Configuration({ basePath: base });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function problemOf(error: unknown): Promise<Problem | null> {
  if (!(error instanceof ResponseError)) return null;
  return (await error.response.json()) as Problem;
}

async function main(): Promise<void> {
  const matches = new MatchesApi(anyone);
  const created = await matches.createMatch({ createMatchRequest: { name: "typescript" } });
  const claimed = await matches.claimSeat({
    matchId: created.matchId,
    seat: 0,
    claimSeatRequest: { name: "Alice" },
  });
  const organiser = new MatchesApi(
    new Configuration({ basePath: base, accessToken: created.organiserToken ?? "" }),
  );
  for (const seat of [1, 2, 3]) {
    await organiser.seatBot({
      matchId: created.matchId,
      seat,
      seatBotRequest: { kind: "heuristic" },
    });
  }
  const me = new Configuration({ basePath: base, accessToken: claimed.token ?? "" });
  const commands = new CommandsApi(me);
  const views = new ViewsApi(me);
  const moves: Record<string, number> = { declare: 0, pass: 0, bury: 0, play: 0, dryRuns: 0 };
  let cardsPlayed = 0;
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    const summary = await matches.getMatch({ matchId: created.matchId });
    if (summary.rounds.length > 0 && summary.rounds[0].status === "scored") {
      const round = await new ViewsApi(anyone).getRound({ matchId: created.matchId, number: 1 });
      const verified = await new ViewsApi(anyone).verifyRound({
        matchId: created.matchId,
        number: 1,
      });
      console.log(
        JSON.stringify({
          moves,
          cardsPlayed,
          seedLength: round.result?.seed?.length ?? 0,
          verified: verified.ok,
        }),
      );
      return;
    }
    const view = await views.getSeatView({ matchId: created.matchId });
    const legal = view.legal;
    const actions: string[] = legal.actions ?? [];
    let action: "declare" | "pass" | "bury" | "play";
    let cards: string[] = [];
    if (actions.includes("play")) {
      action = "play";
      cards = legal.follows?.[0] ?? legal.leads?.singles?.[0] ?? [];
      const dry: CommandDoneOrDryRun | null = await commands.act({
        matchId: created.matchId,
        action: "play",
        dryRun: true,
        ifMatch: `"${view.version}"`,
        actionRequest: { cards },
      }).catch(async (error: unknown) => {
        if ((await problemOf(error))?.status === 412) return null; // a bot moved first
        throw error;
      });
      if (dry === null) continue;
      if (dry.kind !== "dryRun" || !dry.legal) throw new Error(`dry run: ${JSON.stringify(dry)}`);
      moves.dryRuns += 1;
    } else if (actions.includes("bury")) {
      action = "bury";
      cards = (legal.buryFrom ?? []).slice(0, legal.buryCount ?? 8);
    } else if (actions.includes("declare")) {
      action = "declare";
      cards = legal.shows?.[0] ?? [];
    } else if (actions.includes("pass")) {
      action = "pass"; // the end of the deal, or an overcall window (R20)
    } else {
      await sleep(100); // a bot's turn: the bots move off the request path
      continue;
    }
    let done: CommandDoneOrDryRun;
    try {
      done = await commands.act({
        matchId: created.matchId,
        action,
        ifMatch: `"${view.version}"`, // act on the view seen, else 412
        actionRequest: { cards },
      });
    } catch (error) {
      const problem = await problemOf(error);
      if (problem?.status === 412 || problem?.code === "version-conflict") continue; // a bot moved first: look again
      throw new Error(`${action} ${cards.join(" ")}: ${JSON.stringify(problem)}`);
    }
    if (done.kind !== "done") throw new Error(`not done: ${JSON.stringify(done)}`);
    if (done.view.seat !== 0) throw new Error(`the answer is not my seat's view`);
    moves[action] += 1;
    if (action === "play") cardsPlayed += cards.length;
  }
  throw new Error(`round 1 did not end: ${JSON.stringify(moves)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
